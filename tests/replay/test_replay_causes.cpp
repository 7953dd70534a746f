// analyze's removal savings (replay/replay.hpp, removal_savings) build the graph from the
// analysis's sync points (consuming the trace, in analyze's form), edit it in place and
// replay every cause in one order made once; these tests keep the path it replaced, a copy of
// the graph per cause and a topological sort per replay, as the reference, and require the
// same numbers, bit for bit, on every trace fixture and on a graph with a cycle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../nsys/nsys_fixture.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/replay.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

// ---- the reference: the code before the change, kept verbatim in what it computes ----

// run_replay's event order as it was: Kahn's algorithm with a deque, every event (a GPU
// node's start, a no-op, included), then a cycle's events in recorded order.
replay::ReplayOrder old_order(const replay::ReplayGraph& g) {
  const std::size_t n = g.nodes.size(), ne = 2 * n;
  auto for_each_dep = [&](std::size_t ev, const auto& fn) {
    const std::size_t i = ev / 2;
    const replay::ReplayNode& x = g.nodes[i];
    if (x.kind == replay::ReplayNode::Kind::Call) {
      if (ev % 2 == 0) {
        if (x.prev != replay::kNoNode) fn(2 * std::size_t{x.prev} + 1);
      } else {
        fn(2 * i);
        for (std::uint32_t w : x.waits) fn(2 * std::size_t{w} + 1);
        if (x.engine_prev != replay::kNoNode) fn(2 * std::size_t{x.engine_prev} + 1);  // a launch queue's slot
      }
      return;
    }
    if (ev % 2 == 0) return;
    if (x.launch != replay::kNoNode) fn(2 * std::size_t{x.launch});
    if (x.prev != replay::kNoNode) fn(2 * std::size_t{x.prev} + 1);
    if (x.engine_prev != replay::kNoNode) fn(2 * std::size_t{x.engine_prev} + 1);
    for (std::uint32_t w : x.waits) fn(2 * std::size_t{w} + 1);
  };
  std::vector<std::vector<std::uint32_t>> succ(ne);
  std::vector<std::uint32_t> indeg(ne, 0);
  for (std::size_t e = 0; e < ne; ++e)
    for_each_dep(e, [&](std::size_t p) {
      ++indeg[e];
      succ[p].push_back(static_cast<std::uint32_t>(e));
    });
  std::deque<std::uint32_t> ready;
  for (std::size_t e = 0; e < ne; ++e)
    if (indeg[e] == 0) ready.push_back(static_cast<std::uint32_t>(e));
  std::vector<bool> done(ne, false);
  std::vector<std::uint32_t> fired;
  while (!ready.empty()) {
    const std::uint32_t e = ready.front();
    ready.pop_front();
    fired.push_back(e);
    done[e] = true;
    for (std::uint32_t s : succ[e])
      if (--indeg[s] == 0) ready.push_back(s);
  }
  replay::ReplayOrder o;
  std::vector<std::uint32_t> rest;
  for (std::size_t e = 0; e < ne; ++e)
    if (!done[e]) rest.push_back(static_cast<std::uint32_t>(e));
  std::sort(rest.begin(), rest.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(g.nodes[a / 2].rec_start, a) < std::tie(g.nodes[b / 2].rec_start, b);
  });
  std::vector<bool> counted(n, false);
  for (std::uint32_t e : rest) counted[e / 2] = true;
  o.cycle_nodes = static_cast<std::uint64_t>(std::count(counted.begin(), counted.end(), true));
  fired.insert(fired.end(), rest.begin(), rest.end());
  for (std::uint32_t e : fired)
    if (e % 2 == 1 || g.nodes[e / 2].kind == replay::ReplayNode::Kind::Call) o.events.push_back(e);
  return o;
}

// What each cause costs, the old way: the graph found its own sync points, and each cause
// was replayed on an edited copy of it.
std::vector<replay::CauseCost> old_costs(const Trace& t, const AnalysisResult& a, std::size_t max_causes) {
  replay::ReplayOptions o;
  o.step_glob = a.options.step_glob;
  o.pid = a.options.pid;
  std::vector<replay::CauseCost> out;
  const std::size_t k = std::min(max_causes, a.worst.size());
  if (k == 0) return out;
  const replay::ReplayGraph g = replay::build_replay_graph(t, o);
  const auto base = replay::replay_steps(g, replay::run_replay(g));
  std::map<std::string, std::size_t> counts;
  for (const auto& s : g.syncs)
    for (const auto& w : g.steps)
      if (w.rec_start <= s.rec_start && s.rec_start < w.rec_end) ++counts[s.cause];
  for (std::size_t i = 0; i < k; ++i) {
    replay::CauseCost c;
    c.cause = a.worst[i].cause;
    const std::size_t n = counts.count(c.cause) ? counts.at(c.cause) : 0;
    c.syncs_per_step = static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(1, g.steps.size()));
    replay::ReplayGraph e = g;
    bool any = false;
    for (const auto& s : e.syncs) {
      if (s.cause != c.cause) continue;
      e.nodes[s.node].removed = true;
      e.nodes[s.node].own_ns = 0;
      for (std::uint32_t x : s.copies) e.nodes[x].removed = true;
      any = true;
    }
    if (any) {
      const auto after = replay::replay_steps(e, replay::run_replay(e));
      std::vector<Ns> saving;
      for (std::size_t j = 0; j < after.size(); ++j)
        if (after[j].unbuilt == 0) saving.push_back(base[j].replayed_ns - after[j].replayed_ns);
      if (!saving.empty()) {
        std::sort(saving.begin(), saving.end());
        const std::size_t s = saving.size();
        c.saving_ns = s % 2 ? saving[s / 2] : saving[s / 2 - 1] + (saving[s / 2] - saving[s / 2 - 1]) / 2;
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

struct CauseFixture {
  std::string name;
  std::string step_glob;
  bool nsys = false;
};

// Every trace fixture that is a run (test_replay_identity.cpp's list).
const std::vector<CauseFixture>& cause_fixtures() {
  static const std::vector<CauseFixture> f = {
      {"torch/item_loop_l8_h200.json.gz", "train_step#*"},
      {"traces/kineto_all_categories.json", "ProfilerStep#*"},
      {"traces/families/rocm_hip.json", "ProfilerStep#*"},
      {"traces/families/cuda_graph.json", "ProfilerStep#*"},
      {"traces/families/torch_compile.json", "ProfilerStep#*"},
      {"traces/families/kineto_2021.json", "ProfilerStep#*"},
      {"traces/legacy_absolute_us.json", "ProfilerStep#*"},
      {"ranks/nccl4/node0_1000.1700000000000000000.pt.trace.json", "ProfilerStep#*"},
      {"ranks/nccl4/rank3.pt.trace.json.gz", "ProfilerStep#*"},
      {"nsys_layer_syncs", "ProfilerStep#*", true},
      {"nsys_2024_6", "ProfilerStep#*", true},
      {"nsys_2026_4", "ProfilerStep#*", true},
      {"nsys_oldest", "ProfilerStep#*", true},
      {"nsys_multi_process", "ProfilerStep#*", true},
      {"nsys_export_meta_data", "ProfilerStep#*", true},
      {"nsys_backtraces", "ProfilerStep#*", true},
  };
  return f;
}

void expect_same_times(const replay::ReplayTimes& a, const replay::ReplayTimes& b) {
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.binding, b.binding);
  EXPECT_EQ(a.cycle_nodes, b.cycle_nodes);
}

TEST(ReplayCauses, RemovalSavingsMatchTheCopyPerCauseOnEveryFixture) {
  std::size_t compared = 0, claimed = 0;
  for (const auto& f : cause_fixtures()) {
    SCOPED_TRACE(f.name);
    test::TempDir dir;
    const Trace t = f.nsys ? read_trace(test::build_export(dir, f.name)) : read_trace(test::fixture(f.name));
    AnalysisOptions ao;
    ao.step_glob = f.step_glob;
    const AnalysisResult a = analyze(t, ao);
    const std::size_t all = std::numeric_limits<std::size_t>::max();
    const auto want = old_costs(t, a, all);
    const auto got = replay::removal_savings(a, t, all);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(want[i].cause);
      EXPECT_EQ(got[i].cause, want[i].cause);
      EXPECT_EQ(got[i].syncs_per_step, want[i].syncs_per_step);  // the same double, not near it
      EXPECT_EQ(got[i].saving_ns, want[i].saving_ns);
      ++compared;
      claimed += want[i].saving_ns.has_value() && *want[i].saving_ns != 0;
    }
    // analyze's own form, which consumes the trace while it builds the graph: the same.
    Trace consumed = t;
    const auto from_consumed = replay::removal_savings(a, std::move(consumed), all);
    ASSERT_EQ(from_consumed.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(from_consumed[i].syncs_per_step, want[i].syncs_per_step);
      EXPECT_EQ(from_consumed[i].saving_ns, want[i].saving_ns);
    }
    // The graph made from the analysis's sync points is the one that finds them itself.
    replay::ReplayOptions o;
    o.step_glob = f.step_glob;
    const replay::ReplayGraph g1 = replay::build_replay_graph(t, o),
                              g2 = replay::build_replay_graph(t, o, a.sync_points);
    ASSERT_EQ(g1.syncs.size(), g2.syncs.size());
    for (std::size_t i = 0; i < g1.syncs.size(); ++i) {
      EXPECT_EQ(g1.syncs[i].node, g2.syncs[i].node);
      EXPECT_EQ(g1.syncs[i].copy_call, g2.syncs[i].copy_call);
      EXPECT_EQ(g1.syncs[i].copies, g2.syncs[i].copies);
      EXPECT_EQ(g1.syncs[i].cause, g2.syncs[i].cause);
      EXPECT_EQ(g1.syncs[i].bubble_ns, g2.syncs[i].bubble_ns);
    }
    // The order made once is the old per-replay order, and replays the same.
    const replay::ReplayOrder want_order = old_order(g1), got_order = replay::replay_order(g1);
    EXPECT_EQ(got_order.events, want_order.events);
    EXPECT_EQ(got_order.cycle_nodes, want_order.cycle_nodes);
    expect_same_times(replay::run_replay(g1, got_order), replay::run_replay(g1));
  }
  // Something was compared: causes on most fixtures, and savings claimed on some.
  EXPECT_GE(compared, 10u);
  EXPECT_GE(claimed, 3u);
}

// Each cause's edit is undone before the next: the same cause asked for twice costs the same,
// and a cause after another costs what it costs alone.
TEST(ReplayCauses, EachCauseIsReplayedOnTheUneditedGraph) {
  const Trace t = read_trace(test::fixture("torch/item_loop_l8_h200.json.gz"));
  replay::ReplayOptions o;
  o.step_glob = "train_step#*";
  AnalysisOptions ao;
  ao.step_glob = o.step_glob;
  const AnalysisResult a = analyze(t, ao);
  ASSERT_GE(a.worst.size(), 2u);
  const std::string x = a.worst[0].cause, y = a.worst[1].cause;
  const auto twice = replay::replay_cost_of_causes(t, o, {x, y, x});
  const auto alone = replay::replay_cost_of_causes(t, o, {y});
  ASSERT_EQ(twice.size(), 3u);
  ASSERT_TRUE(twice[0].saving_ns.has_value());
  EXPECT_GT(*twice[0].saving_ns, 0);
  EXPECT_EQ(twice[2].saving_ns, twice[0].saving_ns);
  EXPECT_EQ(twice[1].saving_ns, alone[0].saving_ns);
}

// A graph with a dependency cycle (two kernels each waiting for the other): the cycle's
// events come last in recorded order, as before, and replay the same.
TEST(ReplayCauses, ACycleIsOrderedAsBefore) {
  replay::ReplayGraph g;
  auto node = [&](replay::ReplayNode::Kind kind, Ns a, Ns b) {
    replay::ReplayNode n;
    n.kind = kind;
    n.rec_start = a;
    n.rec_end = b;
    n.own_ns = b - a;
    g.nodes.push_back(n);
    return static_cast<std::uint32_t>(g.nodes.size() - 1);
  };
  const auto c0 = node(replay::ReplayNode::Kind::Call, 0, 10);
  const auto c1 = node(replay::ReplayNode::Kind::Call, 20, 30);
  g.nodes[c1].prev = c0;
  g.nodes[c1].gap_ns = 10;
  g.thread_calls = {{c0, c1}};
  g.threads = {{1, 1}};
  const auto k0 = node(replay::ReplayNode::Kind::Kernel, 15, 40);
  const auto k1 = node(replay::ReplayNode::Kind::Kernel, 45, 60);
  g.nodes[k0].launch = c0;
  g.nodes[k1].launch = c1;
  g.nodes[k0].waits = {k1};
  g.nodes[k1].waits = {k0};
  const auto c2 = node(replay::ReplayNode::Kind::Call, 70, 80);  // a sync waiting for both
  g.nodes[c2].prev = c1;
  g.nodes[c2].sync = true;
  g.nodes[c2].waits = {k0, k1};
  g.thread_calls[0].push_back(c2);
  const replay::ReplayOrder want = old_order(g), got = replay::replay_order(g);
  EXPECT_EQ(want.cycle_nodes, 3u);  // both kernels and the sync after them
  EXPECT_EQ(got.events, want.events);
  EXPECT_EQ(got.cycle_nodes, want.cycle_nodes);
  expect_same_times(replay::run_replay(g, got), replay::run_replay(g));
  g.nodes[c2].removed = true;  // an edit keeps the order valid
  expect_same_times(replay::run_replay(g, got), replay::run_replay(g));
}

}  // namespace
}  // namespace syncscope
