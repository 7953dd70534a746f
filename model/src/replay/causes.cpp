// What each sync cause costs, by replay (replay.hpp, replay_cost_by_cause): for analyze's
// worst offenders, "16 x aten::item: 1.9 ms/step if removed".
#include <algorithm>
#include <map>

#include "syncscope/model/replay.hpp"

namespace syncscope::model {

std::vector<CauseCost> replay_cost_by_cause(const Trace& trace, const ReplayOptions& options, std::size_t max_causes) {
  const ReplayGraph g = build_replay_graph(trace, options);
  const auto base = replay_steps(g, run_replay(g));
  std::map<std::string, std::size_t> counts;
  for (const auto& s : g.syncs)
    for (const auto& w : g.steps)
      if (w.rec_start <= s.rec_start && s.rec_start < w.rec_end) ++counts[s.cause];
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [c, n] : counts) order.push_back({n, c});
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (order.size() > max_causes) order.resize(max_causes);
  std::vector<CauseCost> out;
  for (const auto& [n, cause] : order) {
    ReplayGraph e = g;
    for (const auto& s : e.syncs) {
      if (s.cause != cause) continue;  // exact name: a cause may hold glob characters
      e.nodes[s.node].removed = true;
      e.nodes[s.node].own_ns = 0;
      for (std::uint32_t c : s.copies) e.nodes[c].removed = true;
    }
    const auto after = replay_steps(e, run_replay(e));
    std::vector<Ns> saving;
    for (std::size_t i = 0; i < after.size(); ++i)
      if (after[i].unbuilt == 0) saving.push_back(base[i].replayed_ns - after[i].replayed_ns);
    CauseCost c;
    c.cause = cause;
    c.syncs_per_step = static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(1, g.steps.size()));
    if (!saving.empty()) {
      std::sort(saving.begin(), saving.end());
      c.saving_ns = saving[saving.size() / 2];
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace syncscope::model
