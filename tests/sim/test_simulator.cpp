// Hand-worked timelines. The test profile (sim_test_util.hpp) has a 5 us host cost per
// enqueue call, 10 us from call start to earliest GPU start and a 20 us sync round trip;
// every expected time below is derived from those numbers in the comment beside it.
#include <gtest/gtest.h>

#include "sim_test_util.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/error.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using namespace simtest;
using test::us;

TEST(Simulator, TwoKernelsOnTwoNonBlockingStreamsRunConcurrently) {
  Program prog = two_stream_program(/*non_blocking=*/true);
  prog.ops = {kernel("A", 0, 100), kernel("B", 1, 100)};
  Trace t = sim::simulate(prog, test_profile());
  // A: call [0,5], starts at 0+10, runs 100 us. B: call [5,10], starts at 5+10.
  EXPECT_EQ(kernel_named(t, "A").start, 10 * us);
  EXPECT_EQ(kernel_named(t, "A").end, 110 * us);
  EXPECT_EQ(kernel_named(t, "B").start, 15 * us);
  EXPECT_EQ(kernel_named(t, "B").end, 115 * us);
  EXPECT_NE(kernel_named(t, "A").stream, kernel_named(t, "B").stream);
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 1).start, 5 * us);
  EXPECT_EQ(api_named(t, "cudaLaunchKernel", 1).end, 10 * us);
}

TEST(Simulator, MemoryBoundKernelsShareDram) {
  Program prog = two_stream_program(true);
  Op a = kernel("A", 0, 0), b = kernel("B", 1, 0);
  a.flops = b.flops = 0;
  a.bytes = b.bytes = 100e6;  // 100 us each alone at 1 TB/s
  prog.ops = {a, b};
  Trace t = sim::simulate(prog, test_profile());
  // A alone [10,15]: 5 us done. Together both at half rate: A's last 95 us take 190 us
  // (ends 205), by when B has done 95; B's last 5 us alone end at 210.
  EXPECT_EQ(kernel_named(t, "A").end, 205 * us);
  EXPECT_EQ(kernel_named(t, "B").end, 210 * us);
}

TEST(Simulator, BlockingSideStreamSerializesWithLegacyDefaultStream) {
  // Default-flag streams synchronize implicitly with the legacy default stream (docs/sources.md#cuda-streams):
  // B waits for A although they are on different streams.
  Program prog = two_stream_program(/*non_blocking=*/false);
  prog.ops = {kernel("A", 0, 100), kernel("B", 1, 100)};
  Trace t = sim::simulate(prog, test_profile());
  EXPECT_EQ(kernel_named(t, "B").start, 110 * us);
  EXPECT_EQ(kernel_named(t, "B").end, 210 * us);
  EXPECT_EQ(kernel_named(t, "A").stream, 7);  // legacy default stream id as CUPTI shows it
}

TEST(Simulator, CopyOverlapsKernelAndSlowsItByProfileFactor) {
  Program prog = two_stream_program(true);
  prog.ops = {kernel("K", 0, 1000), copy(CopyKind::HtoD, 1, 500)};
  model::GpuProfile p = test_profile();
  Trace free_overlap = sim::simulate(prog, p);
  // K [10, 1010]; the copy's call is [5, 10], it starts at 15 and takes 500 us.
  EXPECT_EQ(kernel_named(free_overlap, "K").end, 1010 * us);
  ASSERT_EQ(free_overlap.memcpys.size(), 1u);
  EXPECT_EQ(free_overlap.memcpys[0].start, 15 * us);
  EXPECT_EQ(free_overlap.memcpys[0].end, 515 * us);
  EXPECT_EQ(free_overlap.memcpys[0].kind, CopyKind::HtoD);
  EXPECT_EQ(free_overlap.memcpys[0].src_kind, MemoryKind::Pinned);

  p.copy_compute_slowdown = 0.5;
  Trace slowed = sim::simulate(prog, p);
  // K does 5 us of work alone [10,15], then 500/1.5 = 333.33 us beside the copy [15,515],
  // and the remaining 1000-5-333.33 = 661.67 us alone: it ends at 1176.667 us.
  EXPECT_EQ(kernel_named(slowed, "K").end, 1'176'667);
  EXPECT_EQ(slowed.memcpys[0].end, 515 * us);  // discrete GPU: the copy is not slowed

  p.unified_memory = true;
  Trace unified = sim::simulate(prog, p);
  // Both slowed while together: the copy takes 500*1.5 = 750 us [15,765]; K does 5 + 500
  // us of work by 765 and the last 495 us alone: it ends at 1260 us.
  EXPECT_EQ(unified.memcpys[0].end, 765 * us);
  EXPECT_EQ(kernel_named(unified, "K").end, 1260 * us);
}

TEST(Simulator, StreamSyncStallsHostAndLeavesBubble) {
  Program prog;
  prog.name = "sync";
  prog.ops = {kernel("A", 0, 1000), simple(OpKind::StreamSync, 0), kernel("B", 0, 10)};
  Trace t = sim::simulate(prog, test_profile());
  // A [10,1010]; the sync call starts at 5, waits for 1010, pays 20: ends at 1030.
  const ApiCall& s = api_named(t, "cudaStreamSynchronize");
  EXPECT_EQ(s.start, 5 * us);
  EXPECT_EQ(s.end, 1030 * us);
  // B's call [1030,1035], starts at 1040.
  EXPECT_EQ(kernel_named(t, "B").start, 1040 * us);
  ASSERT_EQ(t.syncs.size(), 1u);
  EXPECT_EQ(t.syncs[0].type, SyncType::StreamSync);
  EXPECT_EQ(t.syncs[0].correlation, s.correlation);

  AnalysisOptions none;
  none.step_glob = "";
  AnalysisResult a = analyze(t, none);
  EXPECT_EQ(a.totals.syncs.total, 1u);
  EXPECT_EQ(a.totals.syncs.blocked_ns, 1025 * us);  // 1030 - 5
  EXPECT_EQ(a.totals.syncs.bubble_ns, 30 * us);     // GPU idle from 1010 to 1040
}

TEST(Simulator, IdleStreamSyncCostsOneRoundTrip) {
  Program prog;
  prog.ops = {simple(OpKind::StreamSync, 0), simple(OpKind::DeviceSync)};
  Trace t = sim::simulate(prog, test_profile());
  EXPECT_EQ(api_named(t, "cudaStreamSynchronize").end - api_named(t, "cudaStreamSynchronize").start, 20 * us);
  EXPECT_EQ(api_named(t, "cudaDeviceSynchronize").start, 20 * us);
  EXPECT_EQ(api_named(t, "cudaDeviceSynchronize").end, 40 * us);
}

TEST(Simulator, StreamWaitEventOrdersAcrossStreams) {
  Program prog = two_stream_program(true);
  prog.num_events = 2;
  prog.ops = {
      copy(CopyKind::HtoD, 1, 500),       // call [0,5]: runs [10,510]
      simple(OpKind::EventRecord, 1, 0),  // call [5,10]: completes at 510
      simple(OpKind::StreamWait, 0, 1),   // call [10,15]: event 1 never recorded: no wait
      kernel("early", 0, 10),             // call [15,20]: starts at 25
      simple(OpKind::StreamWait, 0, 0),   // call [20,25]: main waits for the copy
      kernel("late", 0, 100),             // call [25,30]: ready at 35 but waits to 510
      simple(OpKind::EventRecord, 1, 1),  // recording event 1 afterwards changes nothing
  };
  Trace t = sim::simulate(prog, test_profile());
  EXPECT_EQ(kernel_named(t, "early").start, 25 * us);
  EXPECT_EQ(kernel_named(t, "late").start, 510 * us);
  EXPECT_EQ(kernel_named(t, "late").end, 610 * us);
  EXPECT_EQ(api_named(t, "cudaStreamWaitEvent", 1).start, 20 * us);
  ASSERT_EQ(t.cuda_events.size(), 2u);
  EXPECT_EQ(t.cuda_events[0].timestamp, 510 * us);
  std::size_t waits = 0;
  for (const auto& s : t.syncs) waits += s.type == SyncType::StreamWaitEvent;
  EXPECT_EQ(waits, 2u);
}

TEST(Simulator, EventSynchronizeBlocksUntilRecordCompletes) {
  Program prog = two_stream_program(true);
  prog.num_events = 1;
  prog.ops = {copy(CopyKind::DtoH, 1, 500), simple(OpKind::EventRecord, 1, 0), simple(OpKind::EventSync, 0, 0),
              kernel("after", 0, 1)};
  Trace t = sim::simulate(prog, test_profile());
  // Copy [10,510]; the event sync call starts at 10, returns at 510 + 20.
  EXPECT_EQ(api_named(t, "cudaEventSynchronize").start, 10 * us);
  EXPECT_EQ(api_named(t, "cudaEventSynchronize").end, 530 * us);
  EXPECT_EQ(kernel_named(t, "after").start, 540 * us);
}

TEST(Simulator, PageableCopyBlocksHostAndItemPatternIsOneSyncPoint) {
  Program prog;
  prog.name = "item";
  Op d2h = copy(CopyKind::DtoH, 0, 0, MemoryKind::Pageable);
  d2h.bytes = 4;  // a scalar: the 1 us minimum copy time applies
  d2h.name = "aten::item";
  d2h.cpu_op = program::CpuOp::Opens;  // the framework op's range covers the copy and its sync
  Op sync = simple(OpKind::StreamSync, 0, -1, "aten::item");
  sync.cpu_op = program::CpuOp::Continues;
  prog.ops = {kernel("A", 0, 100), d2h, sync, kernel("B", 0, 10)};
  Trace t = sim::simulate(prog, test_profile());
  // A [10,110]; the copy call starts at 5, its copy runs [110,111] after A, and the call
  // returns only then. The sync that follows finds an idle stream: [111,131].
  const ApiCall& c = api_named(t, "cudaMemcpyAsync");
  EXPECT_EQ(c.start, 5 * us);
  EXPECT_EQ(c.end, 111 * us);
  EXPECT_EQ(t.memcpys[0].dst_kind, MemoryKind::Pageable);
  EXPECT_EQ(api_named(t, "cudaStreamSynchronize").end, 131 * us);
  AnalysisOptions none;
  none.step_glob = "";
  AnalysisResult a = analyze(t, none);
  EXPECT_EQ(a.totals.syncs.total, 1u);  // D2H-pageable copy + its stream sync: one point
  ASSERT_EQ(a.sync_points.size(), 1u);
  EXPECT_EQ(a.sync_points[0].cause, "aten::item");
}

TEST(Simulator, OneCopyEnginePerDirection) {
  Program prog;
  prog.streams = {{"main", true}, {"a", true}, {"b", true}, {"c", true}};
  prog.ops = {copy(CopyKind::HtoD, 1, 100), copy(CopyKind::HtoD, 2, 100), copy(CopyKind::DtoH, 3, 100)};
  Trace t = sim::simulate(prog, test_profile());
  ASSERT_EQ(t.memcpys.size(), 3u);
  // finalize() sorts by start: H2D#1 [10,110], D2H [20,120] beside it, H2D#2 [110,210].
  EXPECT_EQ(t.memcpys[0].start, 10 * us);
  EXPECT_EQ(t.memcpys[1].kind, CopyKind::DtoH);
  EXPECT_EQ(t.memcpys[1].start, 20 * us);
  EXPECT_EQ(t.memcpys[2].start, 110 * us);
  EXPECT_EQ(t.memcpys[2].end, 210 * us);
}

TEST(Simulator, RooflineDurations) {
  model::GpuProfile p = test_profile();
  Op k = kernel("k", 0, 0);
  k.flops = 1e9;  // 1 ms at 1 TFLOP/s
  k.bytes = 1e6;  // 1 us at 1 TB/s
  EXPECT_EQ(sim::op_duration_ns(k, p), 1'000'000);
  k.flops = 1e3;
  k.bytes = 2e9;  // memory-bound: 2 ms
  EXPECT_EQ(sim::op_duration_ns(k, p), 2'000'000);
  k.bytes = 0;
  EXPECT_EQ(sim::op_duration_ns(k, p), sim::SimOptions{}.min_kernel_ns);  // tiny kernel
  k.flops = 1e9;
  k.bf16 = false;  // fp32 rate is half
  EXPECT_EQ(sim::op_duration_ns(k, p), 2'000'000);
  Op c = copy(CopyKind::HtoD, 0, 0, MemoryKind::Pageable);
  c.bytes = 1e6;  // 0.5 GB/s pageable
  EXPECT_EQ(sim::op_duration_ns(c, p), 2'000'000);
  p.fp32_flops_per_s = 0;
  EXPECT_THROW(sim::op_duration_ns(k, p), InputError);
}

TEST(Simulator, TraceShapeStepsAndCorrelations) {
  Program prog;
  prog.name = "shape";
  prog.ops = {simple(OpKind::RangePush, 0, -1, "layer_0"), kernel("A", 0, 50), simple(OpKind::RangePop),
              simple(OpKind::StreamSync, 0)};
  sim::SimOptions opt;
  opt.steps = 3;
  Trace t = sim::simulate(prog, test_profile(), opt);
  EXPECT_EQ(t.meta.source_tool, "syncscope-sim");
  EXPECT_EQ(t.meta.clock, ClockBase::Simulated);
  EXPECT_EQ(t.kernels.size(), 3u);
  int steps = 0, layers = 0;
  for (const auto& r : t.ranges) {
    if (t.str(r.name).rfind("ProfilerStep#", 0) == 0) ++steps;
    if (t.str(r.name) == "layer_0") {
      ++layers;
      EXPECT_EQ(r.depth, 1);  // inside its step range
    }
  }
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(layers, 3);
  for (const auto& k : t.kernels) {
    bool linked = false;
    for (const auto& c : t.api_calls) linked |= c.correlation == k.correlation && t.str(c.name) == "cudaLaunchKernel";
    EXPECT_TRUE(linked);
  }
  AnalysisResult a = analyze(t);
  ASSERT_EQ(a.steps.size(), 3u);
  // Each step: launch 5 + wait for the 50 us kernel from 10 us + round trip 20 = 80 us.
  EXPECT_EQ(a.steps[1].duration_ns, 80 * us);
  EXPECT_EQ(a.step_summary.syncs.median, 1.0);
}

TEST(Simulator, Deterministic) {
  Program prog = two_stream_program(true);
  prog.num_events = 1;
  prog.ops = {kernel("K", 0, 333.3),
              copy(CopyKind::HtoD, 1, 123.4),
              simple(OpKind::EventRecord, 1, 0),
              simple(OpKind::StreamWait, 0, 0),
              kernel("L", 0, 77.7),
              simple(OpKind::DeviceSync)};
  model::GpuProfile p = test_profile();
  p.copy_compute_slowdown = 0.37;
  Trace a = sim::simulate(prog, p), b = sim::simulate(prog, p);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].start, b.kernels[i].start);
    EXPECT_EQ(a.kernels[i].end, b.kernels[i].end);
  }
  EXPECT_EQ(a.api_calls.back().end, b.api_calls.back().end);
}

TEST(Simulator, RejectsInconsistentPrograms) {
  model::GpuProfile p = test_profile();
  Program prog;
  prog.ops = {kernel("A", 3, 1)};
  EXPECT_THROW(sim::simulate(prog, p), InputError);
  prog.ops = {simple(OpKind::RangePop)};
  EXPECT_THROW(sim::simulate(prog, p), InputError);
  prog.ops = {simple(OpKind::RangePush, 0, -1, "open")};
  EXPECT_THROW(sim::simulate(prog, p), InputError);
  prog.ops = {simple(OpKind::StreamWait, 0, 0)};  // no events declared
  EXPECT_THROW(sim::simulate(prog, p), InputError);
  prog.ops = {copy(CopyKind::HtoD, 0, 1, MemoryKind::Unknown)};
  EXPECT_THROW(sim::simulate(prog, p), InputError);
  p.launch_overhead_ns = 0;
  prog.ops = {kernel("A", 0, 1)};
  EXPECT_THROW(sim::simulate(prog, p), InputError);
}

}  // namespace
}  // namespace syncscope
