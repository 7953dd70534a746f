// extract_timeline on simulated traces whose timelines are worked out by hand.
#include <gtest/gtest.h>

#include "sim_fixture.hpp"
#include "syncscope/reports/html_report.hpp"

namespace syncscope {
namespace {

using program::Op;
using program::OpKind;

using simtest::op;
using simtest::profile;
using simtest::synced_layers;

// The strip of `t` with layers named layer_*.
TimelineStrip layer_strip(const Trace& t, const TimelineOptions& to = {}) {
  AnalysisOptions ao;
  ao.layer_glob = "layer_*";
  return extract_timeline(t, analyze(t, ao), to);
}

TEST(Timeline, LayerWithSyncShowsBubbleAndBlockedHost) {
  Trace t = synced_layers(3, /*sync_inside=*/true);
  TimelineStrip s = layer_strip(t);
  // Middle step, middle layer with a sync: layer_01. Host window: launch [0,5], sync
  // [5,130] relative to the layer start; the kernel runs [10,110]. GPU idle [0,10] and
  // [110,130] inside the window.
  EXPECT_EQ(s.window, "layer_01 in ProfilerStep#1");
  EXPECT_EQ(s.duration_ns, 130'000);
  EXPECT_EQ(s.syncs, 1u);
  EXPECT_EQ(s.bubble_ns, 30'000);
  ASSERT_EQ(s.lanes.size(), 2u);
  EXPECT_EQ(s.lanes[0], "host");
  int kernels = 0, syncs = 0;
  for (const auto& g : s.segments) {
    kernels += g.kind == "kernel";
    syncs += g.kind == "sync";
    EXPECT_GE(g.start, 0);
    EXPECT_LE(g.end, s.duration_ns);
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(syncs, 1);
}

TEST(Timeline, PrefersLayerWithCopiesForOffloadAndExtendsToLaunchedWork) {
  program::Program p;
  p.name = "t";
  p.streams = {{"main", false}, {"copy", true}};
  p.ops.push_back(op(OpKind::RangePush, "layer_00"));
  p.ops.push_back(op(OpKind::Kernel, "fwd", 50));
  p.ops.push_back(op(OpKind::RangePop));
  p.ops.push_back(op(OpKind::RangePush, "layer_00"));
  Op c = op(OpKind::Copy, "", 0, 1);
  c.copy = CopyKind::HtoD;
  c.host_memory = MemoryKind::Pinned;
  c.bytes = 200e3;  // 200 us at 1 GB/s
  p.ops.push_back(c);
  p.ops.push_back(op(OpKind::Kernel, "bwd", 100));
  p.ops.push_back(op(OpKind::RangePop));
  p.ops.push_back(op(OpKind::DeviceSync));
  Trace t = sim::simulate(p, profile());
  TimelineOptions to;
  to.prefer_copies = true;
  TimelineStrip s = layer_strip(t, to);
  // The second layer_00 range (host [5,15]) launched a copy running [15,215] and a kernel
  // queued behind fwd on main: fwd [10,60], bwd [60,160]. Window [5,215].
  EXPECT_EQ(s.duration_ns, 210'000);
  bool h2d = false;
  int own = 0, other = 0, ranges = 0;
  for (const auto& g : s.segments) {
    h2d |= g.kind == "h2d";
    if (g.kind == "kernel") {
      ++own;
      EXPECT_EQ(g.label, "bwd");
    }
    if (g.kind == "other") {  // fwd was launched from the first layer_00, not this one
      ++other;
      EXPECT_EQ(g.label, "fwd");
    }
    if (g.kind == "range") {  // the host range itself: [5,15] from the window start at 5
      ++ranges;
      EXPECT_EQ(g.lane, "host");
      EXPECT_EQ(g.start, 0);
      EXPECT_EQ(g.end, 10'000);
    }
  }
  EXPECT_TRUE(h2d);
  EXPECT_EQ(own, 1);
  EXPECT_EQ(other, 1);
  EXPECT_EQ(ranges, 1);
  EXPECT_EQ(s.lanes.size(), 3u);
}

// A layer with no sync of its own, followed by a stream sync outside it (as a step's final
// loss read): the window reaches the kernel the sync waits for, so the wait is drawn, but
// as the step's, not the layer's (a fix's strip showed a step-end wait as the
// layer's own).
TEST(Timeline, WaitOutsideTheLayerIsAttributedToTheRangeItStartsIn) {
  Trace t = synced_layers(1, /*sync_inside=*/false);
  TimelineStrip s = layer_strip(t);
  // Layer host range [0,5] (the launch), kernel [10,110]: window [0,110]; the sync runs
  // [5,130] and is cut at the window's end.
  EXPECT_EQ(s.window, "layer_00 in ProfilerStep#1");
  EXPECT_EQ(s.duration_ns, 110'000);
  EXPECT_EQ(s.syncs, 0u);
  int inside = 0, elsewhere = 0;
  for (const auto& g : s.segments) {
    inside += g.kind == "sync";
    if (g.kind == "sync-elsewhere") {
      ++elsewhere;
      EXPECT_EQ(g.lane, "host");
      EXPECT_EQ(g.start, 5'000);
      EXPECT_EQ(g.end, 110'000);
      EXPECT_EQ(g.label, "cudaStreamSynchronize in ProfilerStep#1, not in layer_00");
    }
  }
  EXPECT_EQ(inside, 0);
  EXPECT_EQ(elsewhere, 1);
}

// The step breakdown, worked out by hand. Each step: launch [0,5], kernel [10,110], sync
// [5,130] (returns a round trip after the kernel); the next step starts at 130.
TEST(StepBreakdown, SyncBubblesIncludeTheGapFromThePreviousStep) {
  Trace t = synced_layers(1, /*sync_inside=*/true);
  const StepBreakdown b = break_down_step(t, analyze(t));
  EXPECT_EQ(b.step, "ProfilerStep#1");
  EXPECT_EQ(b.steps, 3u);
  EXPECT_EQ(b.duration_ns, 130'000);
  EXPECT_EQ(b.compute_ns, 100'000);
  EXPECT_EQ(b.copy_ns, 0);
  // [0,10]: the tail of the gap the previous step's sync returned into (at 0); [110,130]:
  // the head of the gap this step's sync returns into (at 130), up to the step's end.
  EXPECT_EQ(b.sync_bubble_ns, 30'000);
  EXPECT_EQ(b.other_idle_ns, 0);
  EXPECT_EQ(b.host_blocked_ns, 125'000);
  EXPECT_EQ(b.syncs, 1u);
  // extract_timeline carries the same breakdown.
  const TimelineStrip s = layer_strip(t);
  ASSERT_TRUE(s.step.has_value());
  EXPECT_EQ(s.step->sync_bubble_ns, 30'000);
}

// Copies and compute overlap; idle time before the first and after the last activity is
// no sync's bubble (nothing on one side), as in the analysis.
TEST(StepBreakdown, CopiesOnlyWhereNoKernelRunsAndEdgeIdleIsOther) {
  program::Program p;
  p.name = "t";
  p.streams = {{"main", false}, {"copy", true}};
  p.ops.push_back(op(OpKind::Kernel, "fwd", 50));
  Op c = op(OpKind::Copy, "", 0, 1);
  c.copy = CopyKind::HtoD;
  c.host_memory = MemoryKind::Pinned;
  c.bytes = 200e3;  // 200 us at 1 GB/s
  p.ops.push_back(c);
  p.ops.push_back(op(OpKind::Kernel, "bwd", 100));
  p.ops.push_back(op(OpKind::DeviceSync));
  Trace t = sim::simulate(p, profile());
  const StepBreakdown b = break_down_step(t, analyze(t));
  // fwd [10,60], copy [15,215], bwd [60,160]; the device sync [15,235]; the step [0,235].
  EXPECT_EQ(b.duration_ns, 235'000);
  EXPECT_EQ(b.compute_ns, 150'000);  // [10,160]
  EXPECT_EQ(b.copy_ns, 55'000);      // [160,215]
  EXPECT_EQ(b.sync_bubble_ns, 0);
  EXPECT_EQ(b.other_idle_ns, 30'000);  // [0,10] and [215,235]
  EXPECT_EQ(b.host_blocked_ns, 220'000);
  EXPECT_EQ(b.compute_ns + b.copy_ns + b.sync_bubble_ns + b.other_idle_ns, b.duration_ns);
}

// No GPU activity: the step is all idle, none of it a bubble.
TEST(StepBreakdown, NoGpuWorkIsAllOtherIdle) {
  program::Program p;
  p.name = "t";
  p.ops.push_back(op(OpKind::StreamSync));
  Trace t = sim::simulate(p, profile());
  const StepBreakdown b = break_down_step(t, analyze(t));
  EXPECT_GT(b.duration_ns, 0);
  EXPECT_EQ(b.other_idle_ns, b.duration_ns);
  EXPECT_EQ(b.compute_ns + b.copy_ns + b.sync_bubble_ns, 0);
}

}  // namespace
}  // namespace syncscope
