// What each sync cause costs, by replay (replay.hpp, replay_cost_by_cause): for analyze's
// worst offenders, "8 x aten::item per step: 57.7 us/step if removed" (the H200 trace). A
// cause's syncs are removed as remove-syncs removes them (their waits and the device-to-host
// copies that only serve them; the host's own time stays), and the saving is the median over
// the steps the graph built fully of (identity replay - edited replay).
#include <algorithm>
#include <map>

#include "edit_util.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::replay {
namespace {

// Each cause's syncs are removed in the graph itself and restored after its replay, and every
// replay runs in one order made once (replay_order: removing nodes changes no edge). Before,
// a copy of the graph per cause, a topological sort per replay and the sync points found a
// second time had cost analyze +36% CPU time and +46% peak RSS over --replay-causes 0 on a
// 200 MB trace (docs/measurements.md). The results are those of replaying an edited copy
// (tests/replay/test_replay_causes.cpp keeps that reference).
std::vector<CauseCost> costs_in_graph(ReplayGraph& g, const std::vector<std::string>& causes) {
  const ReplayOrder order = replay_order(g);
  const auto base = replay_steps(g, run_replay(g, order));
  std::map<std::string, std::size_t> counts;
  for (const auto& s : g.syncs)
    for (const auto& w : g.steps)
      if (w.rec_start <= s.rec_start && s.rec_start < w.rec_end) ++counts[s.cause];
  std::vector<CauseCost> out;
  struct Saved {
    std::uint32_t node;
    Ns own_ns;
    bool removed;
  };
  std::vector<Saved> saved;
  for (const auto& cause : causes) {
    CauseCost c;
    c.cause = cause;
    const std::size_t n = counts.count(cause) ? counts.at(cause) : 0;
    c.syncs_per_step = static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(1, g.steps.size()));
    // remove-syncs' own edit (replay_detail::remove_sync), the state of every node it touches
    // saved first.
    saved.clear();
    auto save = [&](std::uint32_t k) { saved.push_back({k, g.nodes[k].own_ns, g.nodes[k].removed}); };
    for (const auto& s : g.syncs) {
      if (s.cause != cause) continue;  // exact name: a cause may hold glob characters
      save(s.node);
      for (std::uint32_t k : s.copies) save(k);
      replay_detail::remove_sync(g, s);
    }
    if (!saved.empty()) {
      const auto after = replay_steps(g, run_replay(g, order));
      // Restored in reverse, so a node saved twice gets its first state back.
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        g.nodes[it->node].own_ns = it->own_ns;
        g.nodes[it->node].removed = it->removed;
      }
      std::vector<Ns> saving;
      for (std::size_t i = 0; i < after.size(); ++i)
        if (after[i].unbuilt == 0) saving.push_back(base[i].replayed_ns - after[i].replayed_ns);
      if (!saving.empty()) {
        std::sort(saving.begin(), saving.end());
        // The median (the mean of the two middle values for an even count), as elsewhere.
        const std::size_t m = saving.size();
        c.saving_ns = m % 2 ? saving[m / 2] : saving[m / 2 - 1] + (saving[m / 2] - saving[m / 2 - 1]) / 2;
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::vector<CauseCost> replay_cost_of_causes(const Trace& trace, const ReplayOptions& options,
                                             const std::vector<std::string>& causes) {
  if (causes.empty()) return {};
  ReplayGraph g = build_replay_graph(trace, options);
  return costs_in_graph(g, causes);
}

std::vector<CauseCost> replay_cost_by_cause(const Trace& trace, const ReplayOptions& options, std::size_t max_causes) {
  ReplayGraph g = build_replay_graph(trace, options);
  std::map<std::string, std::size_t> counts;
  for (const auto& s : g.syncs)
    for (const auto& w : g.steps)
      if (w.rec_start <= s.rec_start && s.rec_start < w.rec_end) ++counts[s.cause];
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [c, n] : counts) order.push_back({n, c});
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (order.size() > max_causes) order.resize(max_causes);
  std::vector<std::string> causes;
  for (const auto& [n, c] : order) causes.push_back(c);
  return costs_in_graph(g, causes);
}

namespace {

// analyze's worst offenders: the first `max_causes` of result.worst, replayed with the
// analysis's own step glob, pid and sync points (found with that pid: not found again).
std::vector<std::string> worst_causes(const AnalysisResult& result, std::size_t max_causes, ReplayOptions& o) {
  std::vector<std::string> causes;
  for (std::size_t i = 0; i < std::min(max_causes, result.worst.size()); ++i) causes.push_back(result.worst[i].cause);
  o.step_glob = result.options.step_glob;
  o.pid = result.options.pid;
  return causes;
}

}  // namespace

std::vector<CauseCost> removal_savings(const AnalysisResult& result, const Trace& trace, std::size_t max_causes) {
  ReplayOptions o;
  const auto causes = worst_causes(result, max_causes, o);
  if (causes.empty()) return {};
  ReplayGraph g = build_replay_graph(trace, o, result.sync_points);
  return costs_in_graph(g, causes);
}

std::vector<CauseCost> removal_savings(const AnalysisResult& result, Trace&& trace, std::size_t max_causes) {
  ReplayOptions o;
  const auto causes = worst_causes(result, max_causes, o);
  if (causes.empty()) {
    const Trace released = std::move(trace);  // consumed either way
    return {};
  }
  ReplayGraph g = build_replay_graph(std::move(trace), o, result.sync_points);
  return costs_in_graph(g, causes);
}

}  // namespace syncscope::replay
