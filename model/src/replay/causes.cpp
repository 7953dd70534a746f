// What each sync cause costs, by replay (replay.hpp, replay_cost_by_cause): for analyze's
// worst offenders, "8 x aten::item per step: 57.7 us/step if removed" (the H200 trace). A
// cause's syncs are removed as remove-syncs removes them (their waits and the device-to-host
// copies that only serve them; the host's own time stays), and the saving is the median over
// the steps the graph built fully of (identity replay - edited replay).
#include <algorithm>
#include <map>

#include "syncscope/model/replay.hpp"

namespace syncscope::model {
namespace {

std::vector<CauseCost> costs_in_graph(const ReplayGraph& g, const std::vector<std::string>& causes) {
  const auto base = replay_steps(g, run_replay(g));
  std::map<std::string, std::size_t> counts;
  for (const auto& s : g.syncs)
    for (const auto& w : g.steps)
      if (w.rec_start <= s.rec_start && s.rec_start < w.rec_end) ++counts[s.cause];
  std::vector<CauseCost> out;
  for (const auto& cause : causes) {
    CauseCost c;
    c.cause = cause;
    const std::size_t n = counts.count(cause) ? counts.at(cause) : 0;
    c.syncs_per_step = static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(1, g.steps.size()));
    ReplayGraph e = g;
    bool any = false;
    for (const auto& s : e.syncs) {
      if (s.cause != cause) continue;  // exact name: a cause may hold glob characters
      e.nodes[s.node].removed = true;
      e.nodes[s.node].own_ns = 0;
      for (std::uint32_t k : s.copies) e.nodes[k].removed = true;
      any = true;
    }
    if (any) {
      const auto after = replay_steps(e, run_replay(e));
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
  return costs_in_graph(build_replay_graph(trace, options), causes);
}

std::vector<CauseCost> replay_cost_by_cause(const Trace& trace, const ReplayOptions& options, std::size_t max_causes) {
  const ReplayGraph g = build_replay_graph(trace, options);
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

std::vector<CauseCost> removal_savings(const AnalysisResult& result, const Trace& trace, std::size_t max_causes) {
  const std::size_t n = std::min(max_causes, result.worst.size());
  ReplayOptions o;
  o.step_glob = result.options.step_glob;
  o.pid = result.options.pid;
  std::vector<std::string> causes;
  for (std::size_t i = 0; i < n; ++i) causes.push_back(result.worst[i].cause);
  return replay_cost_of_causes(trace, o, causes);
}

}  // namespace syncscope::model
