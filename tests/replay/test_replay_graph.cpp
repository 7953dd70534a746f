// The replay graph's edges and edits on hand-built traces whose replay is worked out by
// hand (times in us below), and bad input: no GPU records, a correlation pointing nowhere,
// overlapping calls on one thread, an edit that selects nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/replay/replay.hpp"
#include "test_units.hpp"

namespace syncscope {
namespace {

using test::us;

ApiCall call(Trace& t, const char* name, Ns a, Ns b, std::uint64_t corr) {
  ApiCall c;
  c.name = t.intern(name);
  c.pid = 1;
  c.tid = 1;
  c.start = a * us;
  c.end = b * us;
  c.correlation = corr;
  c.device = 0;
  t.api_calls.push_back(c);
  return c;
}

void kernel(Trace& t, const char* name, std::int64_t stream, Ns a, Ns b, std::uint64_t corr) {
  Kernel k;
  k.name = t.intern(name);
  k.device = 0;
  k.stream = stream;
  k.start = a * us;
  k.end = b * us;
  k.correlation = corr;
  t.kernels.push_back(k);
}

void range(Trace& t, RangeKind kind, const char* name, Ns a, Ns b) {
  Range r;
  r.kind = kind;
  r.name = t.intern(name);
  r.pid = 1;
  r.tid = 1;
  r.start = a * us;
  r.end = b * us;
  t.ranges.push_back(r);
}

// One step: K1 (100 us), then .item(): a pinned D2H copy and a stream sync that waits for it
// (8 us round trip), then K2. Step 0..160 us.
Trace item_trace() {
  Trace t;
  range(t, RangeKind::UserAnnotation, "ProfilerStep#0", 0, 160);
  range(t, RangeKind::CpuOp, "aten::item", 16, 131);
  call(t, "cudaLaunchKernel", 10, 15, 1);
  kernel(t, "k1", 7, 20, 120, 1);
  call(t, "cudaMemcpyAsync", 16, 20, 2);
  Memcpy c;
  c.device = 0;
  c.stream = 7;
  c.start = 120 * us;
  c.end = 122 * us;
  c.correlation = 2;
  c.kind = CopyKind::DtoH;
  c.dst_kind = MemoryKind::Pinned;
  c.bytes = 4;
  t.memcpys.push_back(c);
  call(t, "cudaStreamSynchronize", 21, 130, 3);
  SyncRecord s;
  s.type = SyncType::StreamSync;
  s.device = 0;
  s.stream = 7;
  s.start = 21 * us;
  s.end = 130 * us;
  s.correlation = 3;
  t.syncs.push_back(s);
  call(t, "cudaLaunchKernel", 135, 140, 4);
  kernel(t, "k2", 7, 145, 150, 4);
  t.finalize();
  return t;
}

replay::ReplayOptions opts() { return {}; }

std::string fmt_step(Ns i) { return "ProfilerStep#" + std::to_string(i); }

TEST(ReplayGraph, ItemPatternReplaysByHand) {
  const Trace t = item_trace();
  const replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_EQ(g.round_trip_ns, 8 * us);
  EXPECT_EQ(g.launch_latency_ns[1], 10 * us);
  ASSERT_EQ(g.syncs.size(), 1u);
  EXPECT_EQ(g.syncs[0].cause, "aten::item");
  EXPECT_EQ(g.syncs[0].copies.size(), 1u);
  const replay::ReplayTimes times = replay::run_replay(g);
  const auto steps = replay::replay_steps(g, times);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].measured_ns, 160 * us);
  EXPECT_EQ(steps[0].replayed_ns, 160 * us);
  // The sync is on the critical path: it waited for the copy behind k1.
  EXPECT_EQ(replay::critical_syncs(g, times, 0).size(), 1u);
}

// What edits can change is computed: a longer kernel moves the sync's end and the step by
// exactly that much (the sync's end is not copied from the trace).
TEST(ReplayGraph, SyncEndFollowsTheGpuWork) {
  const Trace t = item_trace();
  replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  for (auto& n : g.nodes)
    if (n.kind == replay::ReplayNode::Kind::Kernel && t.str(t.kernels[n.record].name) == "k1") n.own_ns += 1000 * us;
  const auto steps = replay::replay_steps(g, replay::run_replay(g));
  EXPECT_EQ(steps[0].replayed_ns, 1160 * us);
}

TEST(ReplayGraph, RemovingTheSyncSavesItsWaitNotTheHostTime) {
  const Trace t = item_trace();
  replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  const auto base = replay::replay_steps(g, replay::run_replay(g));
  const replay::EditResult r = replay::apply_what_if(t, g, replay::parse_what_if("remove-syncs:cause=aten::item"), {});
  EXPECT_EQ(r.selected, 1u);
  const replay::ReplayTimes times = replay::run_replay(g);
  const auto after = replay::replay_steps(g, times);
  // The sync call (109 us, all of it waiting) goes; the gaps stay: step 160 - 109 = 51 us.
  EXPECT_EQ(after[0].replayed_ns, 51 * us);
  EXPECT_EQ(base[0].replayed_ns - after[0].replayed_ns, 109 * us);
  EXPECT_TRUE(replay::critical_syncs(g, times, 0).empty());
}

TEST(ReplayGraph, EventWaitOrdersStreams) {
  Trace t;
  range(t, RangeKind::UserAnnotation, "ProfilerStep#0", 0, 20);
  call(t, "cudaLaunchKernel", 0, 5, 1);
  kernel(t, "k1", 7, 10, 100, 1);
  call(t, "cudaEventRecord", 6, 8, 2);
  CudaEventRecord e;
  e.device = 0;
  e.stream = 7;
  e.event_id = 5;
  e.correlation = 2;
  t.cuda_events.push_back(e);
  call(t, "cudaStreamWaitEvent", 9, 11, 3);
  SyncRecord w;
  w.type = SyncType::StreamWaitEvent;
  w.device = 0;
  w.stream = 13;
  w.event_id = 5;
  w.correlation = 3;
  t.syncs.push_back(w);
  call(t, "cudaLaunchKernel", 12, 15, 4);
  kernel(t, "k2", 13, 100, 110, 4);
  t.finalize();
  replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_EQ(g.problems.waits_without_record, 0u);
  std::uint32_t k1 = replay::kNoNode, k2 = replay::kNoNode;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != replay::ReplayNode::Kind::Kernel) continue;
    (t.str(t.kernels[g.nodes[i].record].name) == "k1" ? k1 : k2) = i;
  }
  ASSERT_NE(k2, replay::kNoNode);
  ASSERT_EQ(g.nodes[k2].waits.size(), 1u);
  EXPECT_EQ(g.nodes[k2].waits[0], k1);
  g.nodes[k1].own_ns += 50 * us;
  const replay::ReplayTimes times = replay::run_replay(g);
  EXPECT_EQ(times.start[k2], 150 * us);
}

// Six .item() steps, 1 ms apart: K1 (100 us), a D2H copy, a stream sync, K2. The syncs
// return 8-10 us after their copy but one, 400 us after it with nothing else running (the
// host thread held by what the trace does not show: on the MNIST nsys trace of
// bench/replay/pairs one cudaStreamSynchronize returned 443 us late).
Trace late_sync_trace(Ns late_step, Ns late_rt) {
  Trace t;
  const Ns rts[] = {8, 9, 8, 10, 8, 9};
  for (Ns i = 0; i < 6; ++i) {
    const Ns b = i * 1000, rt = i == late_step ? late_rt : rts[i];
    const auto corr = static_cast<std::uint64_t>(10 * i);
    const Ns sync_end = b + 122 + rt;
    range(t, RangeKind::UserAnnotation, fmt_step(i).c_str(), b, sync_end + 30);
    range(t, RangeKind::CpuOp, "aten::item", b + 16, sync_end + 1);
    call(t, "cudaLaunchKernel", b + 10, b + 15, corr + 1);
    kernel(t, "k1", 7, b + 20, b + 120, corr + 1);
    call(t, "cudaMemcpyAsync", b + 16, b + 20, corr + 2);
    Memcpy c;
    c.device = 0;
    c.stream = 7;
    c.start = (b + 120) * us;
    c.end = (b + 122) * us;
    c.correlation = corr + 2;
    c.kind = CopyKind::DtoH;
    c.dst_kind = MemoryKind::Pinned;
    c.bytes = 4;
    t.memcpys.push_back(c);
    call(t, "cudaStreamSynchronize", b + 21, sync_end, corr + 3);
    SyncRecord sr;
    sr.type = SyncType::StreamSync;
    sr.device = 0;
    sr.stream = 7;
    sr.start = (b + 21) * us;
    sr.end = sync_end * us;
    sr.correlation = corr + 3;
    t.syncs.push_back(sr);
    call(t, "cudaLaunchKernel", sync_end + 5, sync_end + 10, corr + 4);
    kernel(t, "k2", 7, sync_end + 15, sync_end + 20, corr + 4);
  }
  t.finalize();
  return t;
}

TEST(ReplayGraph, ASyncReturningLateKeepsItsExcessUnlessRemoved) {
  const Trace t = late_sync_trace(3, 400);
  replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_EQ(g.round_trip_ns, 8 * us + 500);  // the median of 8, 8, 8, 9, 9, 400 us
  ASSERT_EQ(g.problems.held_syncs, 1u);
  ASSERT_EQ(g.sync_holds.size(), 1u);
  // 400 us after its copy against the 8.5 us median: 391.5 us held.
  EXPECT_EQ(g.sync_holds[0].second, 391 * us + 500);
  bool described = false;
  for (const std::string& line : g.problems.describe(g.step_glob))
    described = described || line.find("1 sync call(s) returned later") != std::string::npos;
  EXPECT_TRUE(described);
  // Identity: every step as recorded within the round trips' spread (the late one included:
  // without the hold it replayed 391.5 us short, 41%).
  const auto steps = replay::replay_steps(g, replay::run_replay(g));
  ASSERT_EQ(steps.size(), 6u);
  for (const auto& s : steps) EXPECT_LE(std::abs(s.replayed_ns - s.measured_ns), 2 * us) << s.name;
  // Removing the syncs removes the hold with them: the late step saves its whole wait.
  const replay::EditResult r = replay::apply_what_if(t, g, replay::parse_what_if("remove-syncs:all"), {});
  EXPECT_EQ(r.selected, 6u);
  const auto after = replay::replay_steps(g, replay::run_replay(g));
  EXPECT_EQ(after[3].replayed_ns, after[1].replayed_ns);
}

TEST(ReplayGraph, RoundTripsWithinTheirSpreadHoldNoSync) {
  const Trace t = late_sync_trace(3, 10);  // 8-10 us: none stands out
  const replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_EQ(g.problems.held_syncs, 0u);
  EXPECT_TRUE(g.sync_holds.empty());
}

TEST(ReplayBadInput, NoGpuRecordsReplaysTheHost) {
  Trace t;
  range(t, RangeKind::UserAnnotation, "ProfilerStep#0", 0, 50);
  call(t, "cudaGetDevice", 5, 10, 0);
  call(t, "cudaGetDevice", 20, 30, 0);
  t.finalize();
  const replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_TRUE(g.problems.no_gpu_records);
  const auto steps = replay::replay_steps(g, replay::run_replay(g));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].replayed_ns, 50 * us);
  EXPECT_FALSE(g.problems.describe(g.step_glob).empty());
}

TEST(ReplayBadInput, NoStepRangesReplayTheWholeTrace) {
  Trace t = item_trace();
  t.ranges.erase(t.ranges.begin());  // ranges are sorted: the step range starts first
  const replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_TRUE(g.problems.no_steps);
  ASSERT_EQ(g.steps.size(), 1u);
  EXPECT_EQ(g.steps[0].name, "whole trace");
  const auto lines = g.problems.describe(g.step_glob);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("ProfilerStep#*"), std::string::npos);
}

TEST(ReplayBadInput, OverlappingCallsAreCounted) {
  Trace t;
  call(t, "cudaGetDevice", 0, 10, 0);
  call(t, "cudaSetDevice", 5, 20, 0);
  t.finalize();
  const replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_EQ(g.problems.overlapping_calls, 1u);
}

// A GPU record whose correlation points nowhere (NCCL's own launches, an untraced thread):
// counted by kind, named, and anchored at its recorded start, so an edit that frees the host
// moves what the host launches and not it; the saving is still claimed.
TEST(ReplayBadInput, CorrelationPointingNowhereIsAnchored) {
  Trace t = item_trace();
  kernel(t, "orphan", 7, 151, 155, 99);
  t.finalize();
  replay::ReplayGraph g = replay::build_replay_graph(t, opts());
  EXPECT_EQ(g.problems.gpu_without_launch, 1u);
  EXPECT_EQ(g.problems.anchored_kernels, 1u);
  std::uint32_t orphan = replay::kNoNode;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == replay::ReplayNode::Kind::Kernel && t.str(t.kernels[g.nodes[i].record].name) == "orphan")
      orphan = i;
  ASSERT_NE(orphan, replay::kNoNode);
  const replay::ReplayTimes base = replay::run_replay(g);
  EXPECT_EQ(base.start[orphan], 151 * us);
  EXPECT_EQ(replay::replay_steps(g, base)[0].unbuilt, 0u);
  (void)replay::apply_what_if(t, g, replay::parse_what_if("remove-syncs:cause=aten::item"), {});
  const replay::ReplayTimes after = replay::run_replay(g);
  EXPECT_EQ(after.start[orphan], 151 * us);  // k2 now ends at 127 us: the orphan does not follow it
  const replay::ReplayReport r = replay::replay_what_if(t, {"remove-syncs:cause=aten::item"}, {}, {});
  ASSERT_EQ(r.what_if.size(), 1u);
  ASSERT_TRUE(r.what_if[0].saving_ns.has_value());
  bool named = false;
  for (const auto& w : r.warnings)
    named = named || w.find("1 GPU record(s) (1 kernel(s), 0 copy(ies)") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(ReplayBadInput, AnEditThatSelectsNothingNamesTheSelectorAndWhatTheTraceHolds) {
  const Trace t = item_trace();
  try {
    (void)replay::replay_what_if(t, {"remove-syncs:cause=aten::nonzero"}, {}, {});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("aten::nonzero"), std::string::npos) << what;
    EXPECT_NE(what.find("1 x aten::item"), std::string::npos) << what;
  }
  EXPECT_THROW((void)replay::parse_what_if("remove-syncs:color=red"), InputError);
  EXPECT_THROW((void)replay::parse_what_if("faster"), InputError);
  // Without explicit edits the fixes' edits say "not applicable" instead.
  const replay::ReplayReport r = replay::replay_what_if(t, {}, {}, {});
  // packing cached/device, offload double/prefetch, MoE sorted/device, logging every/deferred
  ASSERT_EQ(r.what_if.size(), 8u);
  for (const auto& w : r.what_if) EXPECT_FALSE(w.applicable) << w.edit;
}

}  // namespace
}  // namespace syncscope

namespace syncscope {
namespace {

// analyze's worst offenders by replay: what each cause costs if its syncs go.
TEST(ReplayCauses, EachCauseCostsItsReplayedSaving) {
  const Trace t = item_trace();
  const auto costs = replay::replay_cost_by_cause(t, {});
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_EQ(costs[0].cause, "aten::item");
  EXPECT_DOUBLE_EQ(costs[0].syncs_per_step, 1.0);
  ASSERT_TRUE(costs[0].saving_ns.has_value());
  EXPECT_EQ(*costs[0].saving_ns, 109 * us);  // as RemovingTheSyncSavesItsWaitNotTheHostTime
}

}  // namespace
}  // namespace syncscope
