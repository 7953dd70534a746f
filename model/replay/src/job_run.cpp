// Whole-job replay, its timing (replay_job.hpp): every rank's graph run in its own order
// (run_replay's events), a rank pausing at a matched collective until each peer has started it.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "graph_internal.hpp"
#include "syncscope/replay/replay_job.hpp"

namespace syncscope::replay {
namespace {

struct JobRun {
  const std::vector<const ReplayGraph*>& g;
  const JobLinks& links;
  std::vector<ReplayTimes> t;
  // Per rank: node -> (collective, member index).
  std::vector<std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>>> member_of;
  std::vector<std::vector<bool>> arrived;
  std::vector<std::uint32_t> arrivals;
  std::vector<bool> resolved;
  std::vector<Ns> end_common;  // a resolved collective's end, on the first rank's clock

  // A member's end once its collective's end is known: then (on its own clock), and not before
  // its own start plus the transfer. The shortest run of the kernel on its own rank (the
  // single-rank bound) is not used: with one run of a collective it is that run's whole wait.
  void finish(std::uint32_t r, std::uint32_t node, std::uint32_t c) {
    const ReplayNode& n = g[r]->nodes[node];
    if (n.removed) return;
    t[r].end[node] = std::max(t[r].start[node] + links.collectives[c].transfer_ns, end_common[c] + links.offset_ns[r]);
  }

  // The collective's end: its last participant's start plus the transfer time. `forced`: some
  // members have not started it in the replay (the ranks disagree on the order); their recorded
  // starts stand in.
  void resolve(std::uint32_t c, bool forced) {
    const JobCollective& col = links.collectives[c];
    Ns last = std::numeric_limits<Ns>::min();
    for (std::size_t m = 0; m < col.members.size(); ++m) {
      const auto [r, node] = col.members[m];
      const Ns s = arrived[c][m] ? t[r].start[node] : g[r]->nodes[node].rec_start;
      if (!arrived[c][m] && !forced) continue;
      last = std::max(last, s - links.offset_ns[r]);
    }
    end_common[c] = std::max(last + col.transfer_ns, col.anchored_end.value_or(std::numeric_limits<Ns>::min()));
    resolved[c] = true;
    for (std::size_t m = 0; m < col.members.size(); ++m)
      if (arrived[c][m]) finish(col.members[m].first, col.members[m].second, c);
  }
};

}  // namespace

std::vector<ReplayTimes> run_job_replay(const std::vector<const ReplayGraph*>& graphs,
                                        const std::vector<const ReplayOrder*>& orders, const JobLinks& links,
                                        std::uint64_t* out_of_order) {
  const std::size_t nr = graphs.size();
  JobRun run{graphs, links, std::vector<ReplayTimes>(nr), {}, {}, {}, {}, {}};
  run.member_of.resize(nr);
  const std::size_t nc = links.collectives.size();
  run.arrived.resize(nc);
  run.arrivals.assign(nc, 0);
  run.resolved.assign(nc, false);
  run.end_common.assign(nc, 0);
  for (std::uint32_t c = 0; c < nc; ++c) {
    const auto& members = links.collectives[c].members;
    run.arrived[c].assign(members.size(), false);
    for (std::uint32_t m = 0; m < members.size(); ++m) run.member_of[members[m].first][members[m].second] = {c, m};
  }
  for (std::size_t r = 0; r < nr; ++r) {
    const std::size_t n = graphs[r]->nodes.size();
    ReplayTimes& t = run.t[r];
    t.start.resize(n);
    t.end.resize(n);
    t.binding.assign(n, kNoNode);
    for (std::size_t i = 0; i < n; ++i) {
      t.start[i] = graphs[r]->nodes[i].rec_start;
      t.end[i] = graphs[r]->nodes[i].rec_end;
    }
    t.cycle_nodes = orders[r]->cycle_nodes;
  }
  std::vector<std::size_t> cursor(nr, 0);
  std::uint64_t forced = 0;
  for (;;) {
    bool progressed = false, done = true;
    for (std::uint32_t r = 0; r < nr; ++r) {
      const auto& events = orders[r]->events;
      const ReplayGraph& g = *graphs[r];
      while (cursor[r] < events.size()) {
        const std::uint32_t e = events[cursor[r]], i = e / 2;
        if (e % 2 == 0) {
          graph_detail::time_call_start(g, i, run.t[r]);
        } else if (auto it = run.member_of[r].find(i); it == run.member_of[r].end()) {
          graph_detail::time_node(g, i, run.t[r]);
        } else {
          const auto [c, m] = it->second;
          if (!run.arrived[c][m]) {
            graph_detail::time_node(g, i, run.t[r]);  // its start; its end waits for the peers
            run.arrived[c][m] = true;
            ++run.arrivals[c];
            progressed = true;
          }
          if (run.resolved[c]) run.finish(r, i, c);
          else if (run.arrivals[c] == links.collectives[c].members.size()) run.resolve(c, false);
          else break;  // a peer has not started it yet
        }
        ++cursor[r];
        progressed = true;
      }
      done = done && cursor[r] == events.size();
    }
    if (done) break;
    if (progressed) continue;
    // Every unfinished rank waits at a collective some peer has not reached: the earliest of
    // them, by recorded start on the first rank's clock, is timed with what has arrived.
    std::uint32_t pick = 0;
    Ns earliest = std::numeric_limits<Ns>::max();
    for (std::uint32_t r = 0; r < nr; ++r) {
      if (cursor[r] == orders[r]->events.size()) continue;
      const std::uint32_t i = orders[r]->events[cursor[r]] / 2;
      const std::uint32_t c = run.member_of[r].at(i).first;
      const Ns s = graphs[r]->nodes[i].rec_start - links.offset_ns[r];
      if (s < earliest) {
        earliest = s;
        pick = c;
      }
    }
    run.resolve(pick, true);
    ++forced;
  }
  if (out_of_order) *out_of_order = forced;
  return std::move(run.t);
}

}  // namespace syncscope::replay
