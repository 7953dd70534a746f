// Identity replay on every trace fixture we have: replaying a trace unmodified
// reproduces each step's time within the goal (median |error| <= 1%, max <= 5%). The
// round trip and launch latencies are single medians over the trace, not per-record
// copies, so this can fail: it measures how well the graph explains the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../nsys/nsys_fixture.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/replay.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

struct Fixture {
  std::string name;
  std::string step_glob;
  bool nsys = false;
  // Hand-typed timestamps whose launch-to-start gaps vary more within one trace than any
  // single launch latency explains (measured below): the goal is asserted on runs, these
  // are replayed, their edges checked and their error printed, never called within it.
  const char* why_not_goal = nullptr;
};

Trace load(const Fixture& f, const test::TempDir& dir) {
  if (f.nsys) return read_trace(test::build_export(dir, f.name));
  return read_trace(test::fixture(f.name));
}

struct Accuracy {
  double median = 0, max = 0;
  std::size_t steps = 0;
};

Accuracy identity(const Trace& t, const std::string& glob) {
  replay::ReplayOptions o;
  o.step_glob = glob;
  const replay::ReplayGraph g = replay::build_replay_graph(t, o);
  const replay::ReplayTimes times = replay::run_replay(g);
  std::vector<double> e;
  for (const auto& s : replay::replay_steps(g, times))
    if (s.measured_ns > 0) e.push_back(std::fabs(s.error()));
  Accuracy a;
  a.steps = e.size();
  if (e.empty()) return a;
  std::sort(e.begin(), e.end());
  a.median = e.size() % 2 ? e[e.size() / 2] : (e[e.size() / 2 - 1] + e[e.size() / 2]) / 2;
  a.max = e.back();
  return a;
}

// Every trace fixture that is a run (the fuzz corpus and corrupt-on-purpose files are not).
const std::vector<Fixture>& fixtures() {
  static const std::vector<Fixture> f = {
      {"torch/item_loop_l8_h200.json.gz", "train_step#*"},  // the measured H200 trace
      {"traces/kineto_all_categories.json", "ProfilerStep#*"},
      {"traces/families/rocm_hip.json", "ProfilerStep#*"},
      {"traces/families/cuda_graph.json", "ProfilerStep#*"},
      {"traces/families/torch_compile.json", "ProfilerStep#*"},
      {"traces/families/kineto_2021.json", "ProfilerStep#*"},
      {"traces/legacy_absolute_us.json", "ProfilerStep#*"},
      {"ranks/nccl4/node0_1000.1700000000000000000.pt.trace.json", "ProfilerStep#*"},
      {"ranks/nccl4/node0_1001.1700000000000000000.pt.trace.json", "ProfilerStep#*"},
      {"ranks/nccl4/node1_1002.1700000000000000000.pt.trace.json", "ProfilerStep#*"},
      {"ranks/nccl4/rank3.pt.trace.json.gz", "ProfilerStep#*"},
      // Real NCCL ranks (HTA's test data): collectives, stream waits with no event record, GPU
      // work with no traced launch (issue 36: 13-650% off before they were modelled).
      {"ranks/hta/hta_trace_diff_control_rank3of8.json.gz", "ProfilerStep#*"},
      {"ranks/hta/hta_negative_queue_length_rank0of16.json.gz", "ProfilerStep#*"},
      {"nsys_layer_syncs", "ProfilerStep#*", true},
      {"nsys_2024_6", "ProfilerStep#*", true,
       "hand-typed: idle-GPU launch-to-start gaps of 10, 50, 90 and 100 us in one trace"},
      {"nsys_2026_4", "ProfilerStep#*", true},
      {"nsys_oldest", "ProfilerStep#*", true},
      {"nsys_multi_process", "ProfilerStep#*", true,
       "hand-typed: launch-to-start gaps of 2, 2, 6 and 7 us in a 13 us window"},
      {"nsys_export_meta_data", "ProfilerStep#*", true,
       "hand-typed: launch-to-start gaps of 5 and 9 us, round trips of 5 and 8 us, in a 100 us step"},
      {"nsys_backtraces", "ProfilerStep#*", true},
  };
  return f;
}

TEST(ReplayIdentity, EveryTraceFixtureWithinTheGoal) {
  int asserted = 0;
  for (const auto& f : fixtures()) {
    SCOPED_TRACE(f.name);
    test::TempDir dir;
    const Trace t = load(f, dir);
    const Accuracy a = identity(t, f.step_glob);
    EXPECT_GE(a.steps, 1u);
    std::printf("%-60s steps %zu  median %.3f%%  max %.3f%%%s%s\n", f.name.c_str(), a.steps, a.median * 100,
                a.max * 100, f.why_not_goal ? "  (not asserted: " : "", f.why_not_goal ? f.why_not_goal : "");
    if (f.why_not_goal) {
      // What the reason says: every edge built, and the launch-to-start gaps of launch-bound
      // activities spread by more than the error left.
      replay::ReplayOptions o;
      o.step_glob = f.step_glob;
      const replay::ReplayGraph g = replay::build_replay_graph(t, o);
      EXPECT_EQ(g.problems.gpu_without_launch + g.problems.syncs_without_work + g.problems.waits_without_record, 0u);
      Ns lo = 0, hi = 0;
      bool any = false;
      for (const auto& n : g.nodes) {
        if (n.kind == replay::ReplayNode::Kind::Call || n.launch == replay::kNoNode) continue;
        Ns ready = 0;
        if (n.prev != replay::kNoNode) ready = g.nodes[n.prev].rec_end;
        if (n.rec_start <= ready) continue;
        const Ns lat = n.rec_start - g.nodes[n.launch].rec_start;
        lo = any ? std::min(lo, lat) : lat;
        hi = any ? std::max(hi, lat) : lat;
        any = true;
      }
      EXPECT_GE(hi - lo, 4000) << "the spread that explains the miss";
      continue;
    }
    ++asserted;
    EXPECT_LE(a.median, 0.01) << "median |error| " << a.median;
    EXPECT_LE(a.max, 0.05) << "max |error| " << a.max;
  }
  EXPECT_GE(asserted, 17);
}

// The H200 trace: 3 steps of 8 .item() syncs and one device sync each; every step replays,
// the round trip is measured from the syncs that waited, and the graph builds every edge.
TEST(ReplayIdentity, TheH200TraceBuildsEveryEdge) {
  const Trace t = read_trace(test::fixture("torch/item_loop_l8_h200.json.gz"));
  replay::ReplayOptions o;
  o.step_glob = "train_step#*";
  const replay::ReplayGraph g = replay::build_replay_graph(t, o);
  EXPECT_EQ(g.steps.size(), 3u);
  EXPECT_EQ(g.problems.gpu_without_launch, 0u);
  EXPECT_EQ(g.problems.syncs_without_work, 0u);
  EXPECT_EQ(g.problems.overlapping_calls, 0u);
  EXPECT_GT(g.round_trip_samples, 20u);
  EXPECT_GT(g.round_trip_ns, 0);
  EXPECT_LT(g.round_trip_ns, 100'000);  // a sync's return, not a step
  std::size_t item = 0;
  for (const auto& s : g.syncs) {
    if (s.cause != "aten::item") continue;
    ++item;
    EXPECT_EQ(s.copies.size(), 1u) << "the .item() sync's device-to-host copy";
  }
  EXPECT_EQ(item, 24u);
}

}  // namespace
}  // namespace syncscope
