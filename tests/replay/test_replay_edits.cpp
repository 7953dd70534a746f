// Each what-if edit on a small hand-built trace whose edited replay is worked out by hand
// (times in us; the derivations are in the comments). Every trace below is consistent with
// one kernel/copy launch latency (10 us) and one sync round trip (8 us), so its identity
// replay is exact and the expected step times follow from the graph's rules alone
// (model/README.md, "Replay").
#include <gtest/gtest.h>

#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/replay/replay.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

namespace m = model;
using test::us;

struct Builder {
  Trace t;
  std::uint64_t corr = 0;

  // A host call [a, b) on thread 1; returns its correlation id.
  std::uint64_t call(const char* name, Ns a, Ns b) {
    ApiCall c;
    c.name = t.intern(name);
    c.pid = 1;
    c.tid = 1;
    c.start = a * us;
    c.end = b * us;
    c.correlation = ++corr;
    c.device = 0;
    t.api_calls.push_back(c);
    return c.correlation;
  }
  void kernel(const char* name, std::int64_t stream, Ns a, Ns b, std::uint64_t c) {
    Kernel k;
    k.name = t.intern(name);
    k.device = 0;
    k.stream = stream;
    k.start = a * us;
    k.end = b * us;
    k.correlation = c;
    t.kernels.push_back(k);
  }
  void copy(CopyKind kind, std::int64_t stream, Ns a, Ns b, std::uint64_t c, std::uint64_t bytes) {
    Memcpy m;
    m.device = 0;
    m.stream = stream;
    m.start = a * us;
    m.end = b * us;
    m.correlation = c;
    m.kind = kind;
    m.src_kind = kind == CopyKind::HtoD ? MemoryKind::Pinned : MemoryKind::Device;
    m.dst_kind = kind == CopyKind::DtoH ? MemoryKind::Pinned : MemoryKind::Device;
    m.async = true;
    m.bytes = bytes;
    t.memcpys.push_back(m);
  }
  void range(RangeKind kind, const char* name, Ns a, Ns b) {
    Range r;
    r.kind = kind;
    r.name = t.intern(name);
    r.pid = 1;
    r.tid = 1;
    r.start = a * us;
    r.end = b * us;
    t.ranges.push_back(r);
  }
  void stream_sync(std::int64_t stream, Ns a, Ns b) {
    const std::uint64_t c = call("cudaStreamSynchronize", a, b);
    SyncRecord s;
    s.type = SyncType::StreamSync;
    s.device = 0;
    s.stream = stream;
    s.start = a * us;
    s.end = b * us;
    s.correlation = c;
    t.syncs.push_back(s);
  }
  void device_sync(Ns a, Ns b) {
    const std::uint64_t c = call("cudaDeviceSynchronize", a, b);
    SyncRecord s;
    s.type = SyncType::ContextSync;
    s.device = 0;
    s.start = a * us;
    s.end = b * us;
    s.correlation = c;
    t.syncs.push_back(s);
  }
  void record(std::int64_t stream, std::uint64_t event, Ns a, Ns b) {
    const std::uint64_t c = call("cudaEventRecord", a, b);
    CudaEventRecord e;
    e.device = 0;
    e.stream = stream;
    e.event_id = event;
    e.correlation = c;
    e.timestamp = a * us;
    t.cuda_events.push_back(e);
  }
  void wait(std::int64_t stream, std::uint64_t event, Ns a, Ns b) {
    const std::uint64_t c = call("cudaStreamWaitEvent", a, b);
    SyncRecord s;
    s.type = SyncType::StreamWaitEvent;
    s.device = 0;
    s.stream = stream;
    s.event_id = event;
    s.start = a * us;
    s.end = b * us;
    s.correlation = c;
    t.syncs.push_back(s);
  }
  Trace done() {
    t.finalize();
    return std::move(t);
  }
};

// Identity and edited replay of the first step, in us.
struct Steps {
  double identity = 0, edited = 0;
  std::size_t selected = 0;
};
Steps replay(const Trace& t, const std::string& edit, const m::TracePredictOptions& o = {}) {
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  Steps s;
  s.identity = static_cast<double>(replay::replay_steps(g, replay::run_replay(g)).at(0).replayed_ns) / us;
  s.selected = replay::apply_what_if(t, g, replay::parse_what_if(edit), o).selected;
  s.edited = static_cast<double>(replay::replay_steps(g, replay::run_replay(g)).at(0).replayed_ns) / us;
  return s;
}

// One .item() into pinned memory whose 50 us device-to-host copy sits on the stream before
// the next kernel, and a device sync ending the step (step 0..210):
//   L1 [10,15] -> K1 [20,120]; C [16,20] -> copy DtoH [120,170]; S cudaStreamSynchronize
//   [21,178] (170 + r); L2 [180,185] -> K2 [190,200]; D cudaDeviceSynchronize [186,208].
Trace item_with_copy() {
  Builder b;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 210);
  b.range(RangeKind::CpuOp, "aten::item", 16, 179);
  b.kernel("k1", 7, 20, 120, b.call("cudaLaunchKernel", 10, 15));
  b.copy(CopyKind::DtoH, 7, 120, 170, b.call("cudaMemcpyAsync", 16, 20), 4);
  b.stream_sync(7, 21, 178);
  b.kernel("k2", 7, 190, 200, b.call("cudaLaunchKernel", 180, 185));
  b.device_sync(186, 208);
  return b.done();
}

// Without the .item() wait (cause, API or range selects it): S ends at its start, 21; L2
// [23,28]; the copy goes with the sync, so K2 starts at max(23 + 10, K1's end 120) = 120 and
// ends 130; D [29, 130 + 8 = 138]; the step ends 2 us after D: 140. With the copy kept K2
// would wait for it (170..180) and the step would end at 190: the copy's 50 us are saved too.
TEST(ReplayEdits, RemoveSyncsByCauseApiOrRangeTakesTheCopyThatOnlyServesThem) {
  const Trace t = item_with_copy();
  for (const char* edit :
       {"remove-syncs:cause=aten::item", "remove-syncs:api=cudaStreamSynchronize", "remove-syncs:range=aten::item"}) {
    const Steps s = replay(t, edit);
    EXPECT_DOUBLE_EQ(s.identity, 210) << edit;
    EXPECT_EQ(s.selected, 1u) << edit;
    EXPECT_DOUBLE_EQ(s.edited, 140) << edit;
  }
  // The device sync alone: D ends at its start, 186; the step at 188.
  EXPECT_DOUBLE_EQ(replay(t, "remove-syncs:api=cudaDeviceSynchronize").edited, 188);
  // Both: S at 21, L2 [23,28], D at 29, the step at 31.
  const Steps all = replay(t, "remove-syncs:all");
  EXPECT_EQ(all.selected, 2u);
  EXPECT_DOUBLE_EQ(all.edited, 31);
}

// A public program's loop (issue 36's real before/after pair): launch, launch, a blocking
// cudaMemcpyFromSymbol device-to-host, then a redundant cudaDeviceSynchronize; three rounds of
// 89 us in one step [0, 269] (latency 10 us, round trip 8 us, as every trace in this file):
//   L1 [o,o+2] -> K1 [o+10,o+40]; L2 [o+3,o+5] -> K2 [o+40,o+60];
//   M cudaMemcpyFromSymbol [o+6,o+78] -> copy DtoH into pageable memory [o+60,o+70] (70 + 8);
//   D cudaDeviceSynchronize [o+79,o+87]: the GPU is idle since o+70, D waits for nothing.
Trace symbol_copy_then_device_sync() {
  Builder b;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 269);
  for (Ns o : {Ns{0}, Ns{89}, Ns{178}}) {
    b.kernel("k1", 7, o + 10, o + 40, b.call("cudaLaunchKernel", o, o + 2));
    b.kernel("k2", 7, o + 40, o + 60, b.call("cudaLaunchKernel", o + 3, o + 5));
    Memcpy m;
    m.device = 0;
    m.stream = 7;
    m.start = (o + 60) * us;
    m.end = (o + 70) * us;
    m.correlation = b.call("cudaMemcpyFromSymbol", o + 6, o + 78);
    m.kind = CopyKind::DtoH;
    m.src_kind = MemoryKind::Device;
    m.dst_kind = MemoryKind::Pageable;
    m.async = false;
    m.bytes = 4;
    b.t.memcpys.push_back(m);
    b.device_sync(o + 79, o + 87);
  }
  return b.done();
}

// Removing the device syncs saves their own time and nothing more: each D (8 us) ends at its
// start, the next round starts 2 us later, so the step ends 3 x 8 = 24 us earlier (245). The
// blocking copy before each D is a wait of its own and stays: had the edit taken it as the
// sync's serving copy (the bug issue 36 reports), each round would lose M's 72 us as well and
// the saving would exceed what the removed calls ever took. Within one round trip per sync.
TEST(ReplayEdits, RemovingADeviceSyncKeepsTheBlockingCopyBeforeIt) {
  const Trace t = symbol_copy_then_device_sync();
  const Steps s = replay(t, "remove-syncs:api=cudaDeviceSynchronize");
  EXPECT_DOUBLE_EQ(s.identity, 269);
  EXPECT_EQ(s.selected, 3u);
  const double removed_calls_us = 3 * 8;
  EXPECT_NEAR(s.identity - s.edited, removed_calls_us, 8);
  // Selecting the copy itself is what removes its wait.
  const Steps copy = replay(t, "remove-syncs:api=cudaMemcpyFromSymbol");
  EXPECT_EQ(copy.selected, 3u);
  EXPECT_GT(copy.identity - copy.edited, removed_calls_us);
}

// A blocking cudaMemcpy [0,30] whose copy [10,22] starts one launch latency after the call
// (the GPU idle: the copy is bound by its launch) and ends the call one round trip later; the
// step [0,32]. The critical path walks back from the call to its copy and from the copy to its
// launch, the same call, at its start: it must stop there (the call's start is set by the
// step's start), not go on to the call's wait again (issue 36: `predict`'s path looped). The
// path is analyze --critical-path's walk (one walk for both).
TEST(ReplayEdits, CriticalPathThroughABlockingCopyListsEachNodeOnce) {
  Builder b;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 32);
  Memcpy m;
  m.device = 0;
  m.stream = 7;
  m.start = 10 * us;
  m.end = 22 * us;
  m.correlation = b.call("cudaMemcpy", 0, 30);
  m.kind = CopyKind::DtoH;
  m.src_kind = MemoryKind::Device;
  m.dst_kind = MemoryKind::Pageable;
  m.bytes = 4;
  b.t.memcpys.push_back(m);
  const Trace t = b.done();
  const replay::ReplayReport r = replay::replay_what_if(t, {"remove-syncs:api=cudaMemcpy"}, {}, {});
  ASSERT_EQ(r.steps.size(), 1u);
  ASSERT_FALSE(r.critical_path.empty());
  EXPECT_LE(r.critical_path.size(), 3u);  // the launch to the copy, the copy, then the call's wait for it
  Ns sum = 0;
  for (const auto& c : r.critical_path) sum += c.duration_ns;
  EXPECT_LE(sum, r.steps[0].replayed_ns);
}

// Two layers of one step, each rebuilding its mask in a range named like one (a launch, a
// device-to-host read and its sync), then one kernel; step 0..100:
//   layer_0 [0,50]:  mask_build [5,27]: L [5,7] -> mk [15,18]; C [8,10] -> copy [18,19];
//                    S [11,27] (19 + 8); L [32,34] -> w0 [42,46]
//   layer_1 [50,100]: the same 50 us later; the step ends 16 us after the last call.
Trace packing_trace() {
  Builder b;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 100);
  for (Ns o : {Ns{0}, Ns{50}}) {
    b.range(RangeKind::UserAnnotation, o == 0 ? "layer_0" : "layer_1", o, o + 50);
    b.range(RangeKind::UserAnnotation, "mask_build", o + 5, o + 27);
    b.kernel("mask_kernel", 7, o + 15, o + 18, b.call("cudaLaunchKernel", o + 5, o + 7));
    b.copy(CopyKind::DtoH, 7, o + 18, o + 19, b.call("cudaMemcpyAsync", o + 8, o + 10), 4);
    b.stream_sync(7, o + 11, o + 27);
    b.kernel("layer_work", 7, o + 42, o + 46, b.call("cudaLaunchKernel", o + 32, o + 34));
  }
  return b.done();
}

// packing-cache: layer_1's rebuild (the second of the step) goes with its 22 us of host time
// (55..77), its kernels and its sync: L [60,62] after the 5 us gap, the step ends at 62 + 16
// = 78. packing-device: both rebuilds go: layer_0's L at 10, layer_1's (21 us gap) at 33,
// the step ends at 38 + 2 + 16 = 56 (100 - 2 x 22).
TEST(ReplayEdits, PackingCacheKeepsTheFirstRebuildOfAStepAndDeviceNone) {
  const Trace t = packing_trace();
  const Steps cached = replay(t, "packing-cache");
  EXPECT_DOUBLE_EQ(cached.identity, 100);
  EXPECT_EQ(cached.selected, 1u);
  EXPECT_DOUBLE_EQ(cached.edited, 78);
  const Steps device = replay(t, "packing-device");
  EXPECT_EQ(device.selected, 2u);
  EXPECT_DOUBLE_EQ(device.edited, 56);
}

// Offload reloads on a copy stream (13) before each layer's backward kernel on the compute
// stream (7), single-buffered: reload i waits (event A_i) for compute i-1, compute i (event
// B_i) for reload i. c = 10 us, g = 20 us, L = 3; a forward kernel f first:
//   f [0,1] -> [10,30]; per layer i, 6 calls of 1 us from 1 + 6i: record A_i on 7, wait 13,
//   memcpy -> c_i, record B_i on 13, wait 7, launch g_i. GPU: c0 [30,40] g0 [40,60]
//   c1 [60,70] g1 [70,90] c2 [90,100] g2 [100,120]; D [19,128]; step 0..130.
Trace offload_trace() {
  Builder b;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 130);
  b.kernel("forward", 7, 10, 30, b.call("cudaLaunchKernel", 0, 1));
  const Ns copy_start[3] = {30, 60, 90}, comp_start[3] = {40, 70, 100};
  for (int i = 0; i < 3; ++i) {
    const Ns h = 1 + 6 * i;
    b.record(7, 100 + i, h, h + 1);
    b.wait(13, 100 + i, h + 1, h + 2);
    b.copy(CopyKind::HtoD, 13, copy_start[i], copy_start[i] + 10, b.call("cudaMemcpyAsync", h + 2, h + 3), 2u << 20);
    b.record(13, 200 + i, h + 3, h + 4);
    b.wait(7, 200 + i, h + 4, h + 5);
    b.kernel("layer_backward", 7, comp_start[i], comp_start[i] + 20, b.call("cudaLaunchKernel", h + 5, h + 6));
  }
  b.device_sync(19, 128);
  return b.done();
}

// double-buffer: reload 1 waits for what reload 0 waited for (f), reload 2 for g0: c1
// [40,50], g1 [60,80], c2 [60,70], g2 [80,100]; D ends 108, the step 110: (L-1) min(c, g) =
// 20 us saved. prefetch:2 lets reload 2 wait for f too, but the copies still chain on their
// engine and every compute waits for its reload and the previous compute: the same 110
// (with constant c and g a deeper ring cannot beat max(c, g) per layer).
TEST(ReplayEdits, DoubleBufferingWaitsOnlyForItsOwnBuffersLastUse) {
  const Trace t = offload_trace();
  const Steps db = replay(t, "double-buffer");
  EXPECT_DOUBLE_EQ(db.identity, 130);
  EXPECT_EQ(db.selected, 2u);
  EXPECT_DOUBLE_EQ(db.edited, 110);
  const Steps pf = replay(t, "prefetch:2");
  EXPECT_EQ(pf.selected, 2u);
  EXPECT_DOUBLE_EQ(pf.edited, 110);
  EXPECT_THROW((void)replay::parse_what_if("prefetch:1"), InputError);
}

// A MoE layer with E = 5 experts looping as the loop variant does, then its backward (a
// checkpointed layer's, in the same layer range); step 0..185, layer_0 [0,184],
// moe_routing [0,131]. Per expert k, 1 us calls: N_k launches nonzero (2 us), then the query
// aten::nonzero: C_k memcpy -> copy (1 us) and S_k sync (copy end + 8), then G_k launches
// expert_k.gemm (5 us), A_k expert_k.acc (1 us). Expert 0: N [0,1] nz [10,12]; C [1,2] cp
// [12,13]; S [2,21]; G [21,22] gm [31,36]; A [22,23] ac [36,37]; each later expert 27 us
// after the one before (N_1 at 23, ..., A_4 [130,131] ac4 [144,145]). Backward, experts 4..0:
// a gemm.backward (5 us) and an acc.backward (1 us) each, calls [131,141], kernels
// [145,175]; D [141,183].
Trace moe_trace() {
  Builder b;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 185);
  b.range(RangeKind::UserAnnotation, "layer_0", 0, 184);
  b.range(RangeKind::UserAnnotation, "moe_routing", 0, 131);
  const std::string gemm[5] = {"expert_0.gemm", "expert_1.gemm", "expert_2.gemm", "expert_3.gemm", "expert_4.gemm"};
  const std::string acc[5] = {"expert_0.acc", "expert_1.acc", "expert_2.acc", "expert_3.acc", "expert_4.acc"};
  Ns gpu = 10;  // nz0 starts at 10
  for (int k = 0; k < 5; ++k) {
    const Ns h = k == 0 ? 0 : 23 + 27 * (k - 1);
    const Ns nz = k == 0 ? 10 : gpu;
    b.kernel("nonzero", 7, nz, nz + 2, b.call("cudaLaunchKernel", h, h + 1));
    b.range(RangeKind::CpuOp, "aten::nonzero", h + 1, h + (k == 0 ? 21 : 25));
    b.copy(CopyKind::DtoH, 7, nz + 2, nz + 3, b.call("cudaMemcpyAsync", h + 1, h + 2), 8);
    const Ns s_end = nz + 3 + 8;
    b.stream_sync(7, h + 2, s_end);
    b.kernel(gemm[k].c_str(), 7, s_end + 10, s_end + 15, b.call("cudaLaunchKernel", s_end, s_end + 1));
    b.kernel(acc[k].c_str(), 7, s_end + 15, s_end + 16, b.call("cudaLaunchKernel", s_end + 1, s_end + 2));
    gpu = s_end + 16;
  }
  Ns g = 145;
  for (int k = 4; k >= 0; --k) {
    const Ns h = 131 + 2 * (4 - k);
    b.kernel((gemm[k] + ".backward").c_str(), 7, g, g + 5, b.call("cudaLaunchKernel", h, h + 1));
    b.kernel((acc[k] + ".backward").c_str(), 7, g + 5, g + 6, b.call("cudaLaunchKernel", h + 1, h + 2));
    g += 6;
  }
  b.device_sync(141, 183);
  return b.done();
}

// moe-sorted keeps 3 queries and removes experts 3 and 4's (N, C, S: their host time and
// GPU work): G3 [77,78] gm3 [91,96], A3 ac3 [96,97], G4 [79,80] gm4 [97,102], A4 ac4
// [102,103]; backward calls [81,91], kernels [103,133]; D [91, 133 + 8 = 141]; step 143.
// moe-device removes all 5 queries and folds the loop: G0 [0,1] and A0 [1,2] launch every
// expert's work: gm0 [10,15] ... ac4 [39,40]; backward folds into the first block's two
// calls [2,4], its kernels [40,70]; D [4,78]; step 80.
TEST(ReplayEdits, MoeSortedKeepsThreeQueriesPerLayerAndDeviceNoneAndOnePass) {
  const Trace t = moe_trace();
  m::TracePredictOptions o;
  o.layer_glob = "layer_*";  // one layer range: the default search wants two
  replay::ReplayGraph g = replay::build_replay_graph(t, {});
  ASSERT_EQ(g.syncs.size(), 6u);  // 5 queries + the device sync
  EXPECT_EQ(g.syncs[0].cause, "aten::nonzero");
  const Steps sorted = replay(t, "moe-sorted", o);
  EXPECT_DOUBLE_EQ(sorted.identity, 185);
  EXPECT_EQ(sorted.selected, 2u);  // 5 - 3
  EXPECT_DOUBLE_EQ(sorted.edited, 143);
  const Steps device = replay(t, "moe-device", o);
  EXPECT_EQ(device.selected, 5u);
  EXPECT_DOUBLE_EQ(device.edited, 80);
  // What is left: 3 routing syncs per layer after sorted, none after device.
  for (const char* edit : {"moe-sorted", "moe-device"}) {
    replay::ReplayGraph e = replay::build_replay_graph(t, {});
    (void)replay::apply_what_if(t, e, replay::parse_what_if(edit), o);
    std::size_t left = 0;
    for (const auto& s : e.syncs) left += s.cause == "aten::nonzero" && !e.nodes[s.node].removed;
    EXPECT_EQ(left, std::string(edit) == "moe-sorted" ? 3u : 0u) << edit;
  }
}

// Impossible overlaps on one thread: counted, and the warning names them.
TEST(ReplayEdits, OverlappingCallsGiveANamedWarning) {
  Builder b;
  b.range(RangeKind::UserAnnotation, "ProfilerStep#0", 0, 30);
  b.call("cudaGetDevice", 0, 10);
  b.call("cudaSetDevice", 5, 20);
  const Trace t = b.done();
  const replay::ReplayGraph g = replay::build_replay_graph(t, {});
  EXPECT_EQ(g.problems.overlapping_calls, 1u);
  bool named = false;
  for (const auto& w : g.problems.describe(g.step_glob))
    named = named || w.find("1 host call(s) start inside the previous call") != std::string::npos;
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace syncscope
