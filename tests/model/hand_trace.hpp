// Hand-built traces for the predict --trace tests: one host thread at a time issuing work
// onto GPU streams, laid out by a tiny in-order model so the expected parameters (bubbles,
// copy and compute times) are known from the layout itself.
#pragma once

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "syncscope/model/trace_predict.hpp"

namespace handtrace {

using namespace syncscope;
namespace m = syncscope::model;

constexpr Ns us = 1000;

// One host thread (tid 1) and one stream per device; GPU work runs in issue order on its
// stream, starting no earlier than 5 us after its launch call returns.
class Program {
 public:
  Trace t;
  Ns now = 0;
  std::map<std::int64_t, Ns> stream_free;  // stream -> end of its last work
  std::uint64_t corr = 1;
  std::int64_t tid = 1;

  Range& range(RangeKind kind, const std::string& name, Ns start, Ns end) {
    Range r;
    r.kind = kind;
    r.name = t.intern(name);
    r.start = start;
    r.end = end;
    r.pid = 100;
    r.tid = tid;
    t.ranges.push_back(r);
    return t.ranges.back();
  }
  ApiCall& api(const std::string& name, Ns start, Ns end, std::uint64_t c = 0) {
    ApiCall a;
    a.name = t.intern(name);
    a.start = start;
    a.end = end;
    a.correlation = c;
    a.pid = 100;
    a.tid = tid;
    a.device = 0;
    t.api_calls.push_back(a);
    return t.api_calls.back();
  }
  // Launch a kernel of GPU duration d on `stream`; returns its [start, end).
  std::pair<Ns, Ns> launch(Ns d, std::int64_t stream = 7, const std::string& name = "k") {
    std::uint64_t c = corr++;
    api("cudaLaunchKernel", now, now + 5 * us, c);
    now += 5 * us;
    Ns s = std::max(now + 5 * us, stream_free[stream]);
    Kernel k;
    k.name = t.intern(name);
    k.device = 0;
    k.stream = stream;
    k.start = s;
    k.end = s + d;
    k.correlation = c;
    t.kernels.push_back(k);
    stream_free[stream] = s + d;
    return {s, s + d};
  }
  std::pair<Ns, Ns> h2d(Ns d, std::uint64_t bytes, std::int64_t stream = 7) {
    std::uint64_t c = corr++;
    api("cudaMemcpyAsync", now, now + 5 * us, c);
    now += 5 * us;
    Ns s = std::max(now + 5 * us, stream_free[stream]);
    Memcpy mc;
    mc.kind = CopyKind::HtoD;
    mc.src_kind = MemoryKind::Pinned;
    mc.dst_kind = MemoryKind::Device;
    mc.async = true;
    mc.bytes = bytes;
    mc.device = 0;
    mc.stream = stream;
    mc.start = s;
    mc.end = s + d;
    mc.correlation = c;
    t.memcpys.push_back(mc);
    stream_free[stream] = s + d;
    return {s, s + d};
  }
  // cudaStreamSynchronize inside a CPU op: returns 20 us after the stream drains.
  Ns sync(const std::string& op, std::int64_t stream = 7) {
    Ns start = now;
    Ns end = std::max(now + 2 * us, stream_free[stream] + 20 * us);
    api("cudaStreamSynchronize", start, end);
    range(RangeKind::CpuOp, op, start - 1 * us, end + 1 * us);
    now = end + 1 * us;
    return end;
  }
  Ns gpu_end() const {
    Ns e = 0;
    for (auto& [s, f] : stream_free) e = std::max(e, f);
    return e;
  }
};

inline const m::FixPrediction& fix(const m::PredictionReport& r, const std::string& f, const std::string& v) {
  for (const auto& x : r.fixes)
    if (x.fix == f && x.variant == v) return x;
  throw std::runtime_error("no prediction for " + f + "/" + v);
}

}  // namespace handtrace
