// A hand-built trace that exercises every field of the model (shared by the io tests).
#pragma once

#include "syncscope/trace/trace.hpp"

namespace syncscope::test {

inline constexpr Ns kT0 = 1'790'857'026'000'000'000;

// A trace in which every field of every record type differs from its default, with the
// awkward cases: partial overlaps on one thread, identical intervals, zero durations,
// names that need escaping, string process ids, NVTX ranges, unknown enum values.
inline Trace make_full_trace() {
  Trace t;
  t.meta.source_tool = "syncscope-tracer";
  t.meta.source_version = "CUPTI 130001";
  t.meta.trace_name = "full \"trace\"\n";
  t.meta.source_schema_version = 3;
  t.meta.dropped_records = 17;
  t.meta.clock = ClockBase::Monotonic;
  t.meta.base_time_ns = kT0 + 5;  // not a multiple of 1000, and after some records
  t.meta.unknown_categories = {{"Trace", 2}, {"(none)", 1}};
  t.meta.extra = {{"host", "gpu-01"},
                  {"cupti_version", "130001"},
                  {"distributedInfo", R"({"rank": 3})"},
                  {"traceEvents", "not at the top level"},
                  {"flag", "true"},
                  {"odd", " 5"}};
  DeviceProperties d;
  d.id = 1;
  d.name = "NVIDIA H200";
  d.compute_major = 9;
  d.compute_minor = 0;
  d.total_memory_bytes = 150109880320;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.warp_size = 32;
  d.regs_per_block = 65536;
  d.regs_per_sm = 65537;
  d.shared_mem_per_block = 49152;
  d.shared_mem_per_block_optin = 232448;
  d.shared_mem_per_sm = 233472;
  t.devices.push_back(d);

  auto api = [&](ApiKind kind, const char* name, std::int64_t tid, Ns start, Ns dur, std::uint64_t corr) {
    ApiCall a;
    a.kind = kind;
    a.name = t.intern(name);
    a.cbid = 211;
    a.pid = 4242;
    a.tid = tid;
    a.start = kT0 + start;
    a.end = kT0 + start + dur;
    a.correlation = corr;
    a.external_id = corr + 1000;
    a.return_code = corr == 12 ? 700 : 0;
    a.device = corr == 12 ? 1 : -1;
    t.api_calls.push_back(a);
  };
  api(ApiKind::Runtime, "cudaLaunchKernel", 4243, 1000, 500, 11);
  api(ApiKind::Driver, "cuLaunchKernel", 4243, 2000, 300, 12);
  api(ApiKind::Runtime, "cudaMemcpyAsync", 4243, 3000, 100, 13);
  api(ApiKind::Runtime, "cudaMemsetAsync", 4243, 3200, 100, 14);
  api(ApiKind::Runtime, "cudaStreamSynchronize", 4243, 4000, 2000, 15);
  api(ApiKind::Runtime, "cudaEventQuery", -7, -3, 0, 0);  // before the base, negative tid, zero length

  Kernel k;
  k.name = t.intern("void k<\"a\\b\">(float*)\t\xC3\xA9\xE2\x82\xAC");
  k.device = 1;
  k.context = 3;
  k.stream = 13;
  k.start = kT0 + 1800;
  k.end = kT0 + 2500;
  k.correlation = 11;
  k.external_id = 1011;
  k.grid[0] = 64, k.grid[1] = 2, k.grid[2] = 3;
  k.block[0] = 256, k.block[1] = 4, k.block[2] = 1;
  k.registers_per_thread = 72;
  k.shared_memory_bytes = 98304;
  k.process_group = t.intern("default_pg");  // as PyTorch >= 2.2 names an NCCL kernel's group
  t.kernels.push_back(k);
  k.process_group = kNoString;
  k.name = t.intern("second");
  k.start = kT0 + 2600;  // driver launch
  k.end = kT0 + 2600;    // zero length
  k.correlation = 12;
  k.stream = 14;
  t.kernels.push_back(k);
  k.start = kT0 + 2600;  // identical interval, other stream
  k.stream = 7;
  k.correlation = 0;
  t.kernels.push_back(k);

  Memcpy m;
  m.kind = CopyKind::PtoP;
  m.src_kind = MemoryKind::Device;
  m.dst_kind = MemoryKind::Managed;
  m.async = true;
  m.bytes = 1ull << 40;
  m.device = 1;
  m.peer_device = 2;
  m.context = 3;
  m.stream = 13;  // overlaps the first kernel on its stream: needs a lane of its own
  m.start = kT0 + 2000;
  m.end = kT0 + 3100;
  m.correlation = 13;
  m.external_id = 1013;
  t.memcpys.push_back(m);
  m.kind = CopyKind::Unknown;
  m.src_kind = MemoryKind::Unknown;
  m.dst_kind = MemoryKind::Pageable;
  m.async = false;
  m.peer_device = -1;
  m.start = kT0 + 5000;
  m.end = kT0 + 5001;
  m.correlation = 0;
  t.memcpys.push_back(m);

  Memset s;
  s.bytes = 4096;
  s.value = 0xdeadbeef;
  s.memory_kind = MemoryKind::Pinned;
  s.async = true;
  s.device = 1;
  s.context = 3;
  s.stream = 14;
  s.start = kT0 + 3300;
  s.end = kT0 + 3400;
  s.correlation = 14;
  s.external_id = 1014;
  t.memsets.push_back(s);

  SyncRecord y;
  y.type = SyncType::StreamWaitEvent;
  y.device = 1;
  y.context = 3;
  y.stream = 13;
  y.event_id = 99;
  y.event_sync_id = 77;
  y.wait_on_stream = 14;
  y.start = kT0 + 4100;
  y.end = kT0 + 4200;
  y.correlation = 15;
  y.external_id = 1015;
  y.return_code = 4;
  y.is_query = true;
  y.wait_on_event_record_correlation = 55;
  t.syncs.push_back(y);
  y = SyncRecord{};
  y.type = SyncType::ContextSync;
  y.device = 1;
  y.start = kT0 + 4300;
  y.end = kT0 + 5900;
  t.syncs.push_back(y);
  y = SyncRecord{};
  y.type = SyncType::Unknown;
  y.stream = 3;
  y.wait_on_stream = 5;  // non-default without an event type
  y.start = kT0 + 4400;
  y.end = kT0 + 4450;
  t.syncs.push_back(y);

  CudaEventRecord e;
  e.device = 1;
  e.context = 3;
  e.stream = 14;
  e.event_id = 99;
  e.event_sync_id = 77;
  e.timestamp = kT0 + 3500;
  e.correlation = 16;
  t.cuda_events.push_back(e);

  auto range = [&](RangeKind kind, const char* name, Ns start, Ns end) -> Range& {
    Range r;
    r.kind = kind;
    r.name = t.intern(name);
    r.pid = 4242;
    r.tid = 4243;
    r.start = kT0 + start;
    r.end = kT0 + end;
    r.external_id = 500 + t.ranges.size();
    t.ranges.push_back(r);
    return t.ranges.back();
  };
  range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 10000);
  range(RangeKind::CpuOp, "aten::mm", 900, 2600);
  range(RangeKind::CpuOp, "aten::mm_same", 900, 2600);        // identical interval
  range(RangeKind::PythonFunction, "straddles", 2400, 3050);  // partially overlaps aten::mm and the API calls
  auto& nvtx = range(RangeKind::NvtxPushPop, "nvtx push", 3000, 3500);
  nvtx.domain = t.intern("my domain");
  nvtx.correlation = 9;
  nvtx.device = 1;
  nvtx.stream = 13;
  auto& se = range(RangeKind::NvtxStartEnd, "nvtx start/end", 3900, 7000);
  se.tid = 4244;
  auto& g = range(RangeKind::GpuUserAnnotation, "ProfilerStep#0", 1799, 5002);
  g.device = 1;
  g.stream = 13;
  g.pid = 4242;
  g.tid = 4243;
  auto& g2 = range(RangeKind::GpuUserAnnotation, "gpu only", 1700, 1800);
  g2.device = 1;
  g2.stream = 14;
  g2.pid = -1;
  g2.tid = -1;

  OverheadRecord o;
  o.name = t.intern("Activity Buffer Request");
  o.pid = -1;
  o.tid = 0;
  o.start = kT0 + 100;
  o.end = kT0 + 300;
  t.overheads.push_back(o);
  o.start = kT0 + 200;  // overlaps the previous one on the same track
  o.end = kT0 + 400;
  t.overheads.push_back(o);

  OtherEvent x;
  x.category = t.intern("Trace");
  x.name = t.intern("PyTorch Profiler (0)");
  x.phase = 'X';
  x.pid = t.intern("Spans");
  x.tid = t.intern("PyTorch Profiler");
  x.start = kT0 + 10;
  x.duration = 9000;
  t.others.push_back(x);
  x.start = kT0 + 20;  // overlaps: string tid lane
  t.others.push_back(x);
  x.category = kNoString;
  x.name = t.intern("Record Window End");
  x.phase = 'i';
  x.pid = t.intern("");
  x.tid = t.intern("");
  x.start = kT0 + 20;
  x.duration = 0;
  t.others.push_back(x);
  x.category = t.intern("custom");
  x.name = t.intern("numeric ids as text");
  x.phase = 'X';
  x.pid = t.intern("4242");
  x.tid = t.intern("007");  // not canonical: must stay a string
  x.start = kT0 + 30;
  x.duration = 5;
  t.others.push_back(x);
  x.name = t.intern("begin");
  x.phase = 'B';
  x.tid = t.intern("4243");
  x.start = kT0 + 50;
  x.duration = 0;
  t.others.push_back(x);
  // Kineto's forward->backward arrow: kept with its id and binding point.
  x.category = t.intern("fwdbwd");
  x.name = t.intern("fwdbwd");
  x.phase = 's';
  x.tid = t.intern("4243");
  x.start = kT0 + 60;
  x.flow_id = t.intern("77");
  t.others.push_back(x);
  x.phase = 'f';
  x.start = kT0 + 90;
  x.bind_enclosing = true;
  t.others.push_back(x);

  t.track_order.push_back({TrackOrder::Kind::SortIndex, "4242", "", 5, ""});
  t.track_order.push_back({TrackOrder::Kind::SortIndex, "4242", "4243", 2, ""});
  t.track_order.push_back({TrackOrder::Kind::Labels, "1", "", 0, "GPU 1 (copy engine)"});
  t.track_names.push_back({"4242", "", "python3"});
  t.track_names.push_back({"4242", "4243", "main thread"});
  t.track_names.push_back({"Spans", "", "Spans"});
  t.track_names.push_back({"1", "13", "copy stream"});
  t.finalize();
  return t;
}

}  // namespace syncscope::test
