// Builds small traces by hand for the analysis tests. Defaults: host pid 100 / tid 1,
// device 0; times are plain nanoseconds chosen so the expected answers can be worked out
// in a comment next to each test.
#pragma once

#include <string_view>

#include "syncscope/trace/trace.hpp"

namespace syncscope::test {

class TraceBuilder {
 public:
  ApiCall& api(std::string_view name, Ns start, Ns end, std::uint64_t corr = 0, std::int64_t tid = 1,
               std::int64_t pid = 100) {
    ApiCall a;
    a.kind = name.starts_with("cu") && !name.starts_with("cuda") ? ApiKind::Driver : ApiKind::Runtime;
    a.name = t.intern(name);
    a.start = start;
    a.end = end;
    a.correlation = corr;
    a.tid = tid;
    a.pid = pid;
    t.api_calls.push_back(a);
    return t.api_calls.back();
  }
  ApiCall& api_cbid(ApiKind kind, std::int32_t cbid, Ns start, Ns end, std::uint64_t corr = 0) {
    ApiCall a;
    a.kind = kind;
    a.cbid = cbid;
    a.start = start;
    a.end = end;
    a.correlation = corr;
    a.tid = 1;
    a.pid = 100;
    t.api_calls.push_back(a);
    return t.api_calls.back();
  }
  Kernel& kernel(std::int32_t device, std::int64_t stream, Ns start, Ns end, std::uint64_t corr = 0) {
    Kernel k;
    k.name = t.intern("k");
    k.device = device;
    k.stream = stream;
    k.start = start;
    k.end = end;
    k.correlation = corr;
    t.kernels.push_back(k);
    return t.kernels.back();
  }
  Memcpy& copy(CopyKind kind, std::int32_t device, std::int64_t stream, Ns start, Ns end, std::uint64_t corr = 0,
               MemoryKind host = MemoryKind::Pinned, std::uint64_t bytes = 4) {
    Memcpy m;
    m.kind = kind;
    m.device = device;
    m.stream = stream;
    m.start = start;
    m.end = end;
    m.correlation = corr;
    m.bytes = bytes;
    m.src_kind = kind == CopyKind::HtoD ? host : MemoryKind::Device;
    m.dst_kind = kind == CopyKind::DtoH ? host : MemoryKind::Device;
    t.memcpys.push_back(m);
    return t.memcpys.back();
  }
  Memset& memset(std::int32_t device, std::int64_t stream, Ns start, Ns end) {
    Memset m;
    m.device = device;
    m.stream = stream;
    m.start = start;
    m.end = end;
    t.memsets.push_back(m);
    return t.memsets.back();
  }
  SyncRecord& sync_record(SyncType type, std::int32_t device, std::int64_t stream, Ns start, Ns end,
                          std::uint64_t corr) {
    SyncRecord s;
    s.type = type;
    s.device = device;
    s.stream = stream;
    s.start = start;
    s.end = end;
    s.correlation = corr;
    t.syncs.push_back(s);
    return t.syncs.back();
  }
  Range& range(RangeKind kind, std::string_view name, Ns start, Ns end, std::int64_t tid = 1, std::int64_t pid = 100) {
    Range r;
    r.kind = kind;
    r.name = t.intern(name);
    r.start = start;
    r.end = end;
    r.tid = tid;
    r.pid = pid;
    t.ranges.push_back(r);
    return t.ranges.back();
  }
  Range& cpu_op(std::string_view name, Ns start, Ns end, std::int64_t tid = 1) {
    return range(RangeKind::CpuOp, name, start, end, tid);
  }
  Range& annotation(std::string_view name, Ns start, Ns end) {
    return range(RangeKind::UserAnnotation, name, start, end);
  }

  Trace done() {
    t.meta.trace_name = "hand-built";
    t.meta.source_tool = "test";
    t.finalize();
    return std::move(t);
  }

  Trace t;
};

}  // namespace syncscope::test
