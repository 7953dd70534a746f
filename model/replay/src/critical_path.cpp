// Each step's critical path through host and GPU over the identity replay (critical_path.hpp
// in model/ and in profiler/analysis/ give the definitions). The walk follows the edge that
// set each node's time (ReplayTimes::binding) from the step's last call back to its start,
// cutting the time line into contiguous pieces, so the kinds sum exactly to the length.
#include "syncscope/replay/critical_path.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "graph_internal.hpp"

namespace syncscope::replay {
namespace {

struct Piece {
  CriticalKind kind;
  std::uint32_t node;  // the node whose time (or incoming edge) it is
  Ns lo, hi;
};

std::string record_name(const Trace& trace, const ReplayGraph& g, std::uint32_t i) {
  const ReplayNode& n = g.nodes[i];
  switch (n.kind) {
    case ReplayNode::Kind::Call: return std::string(trace.str(trace.api_calls[n.record].name));
    case ReplayNode::Kind::Kernel: {
      std::string s(trace.str(trace.kernels[n.record].name));
      return s.size() > 60 ? s.substr(0, 57) + "..." : s;  // templated kernel names run to kilobytes
    }
    case ReplayNode::Kind::Copy: return fmt::format("Memcpy {}", kind_name(trace.memcpys[n.record].kind));
    case ReplayNode::Kind::Memset: return "Memset";
  }
  return "";
}

// The place a piece is on: its thread, its stream, or (sync edges) the sync point itself.
std::string place_of(const ReplayGraph& g, const std::unordered_map<std::uint32_t, std::size_t>& sync_of,
                     const Trace& trace, const Piece& p) {
  const ReplayNode& n = g.nodes[p.node];
  switch (p.kind) {
    case CriticalKind::SyncWait:
      if (auto it = sync_of.find(p.node); it != sync_of.end())
        return fmt::format("sync {} ({})", g.syncs[it->second].cause, g.syncs[it->second].api);
      return fmt::format("sync {}", trace.str(trace.api_calls[n.record].name));
    case CriticalKind::Host: return fmt::format("host tid {}", g.threads[static_cast<std::size_t>(n.thread)].second);
    case CriticalKind::Gpu:
    case CriticalKind::Launch: {
      const auto& lane = g.lanes[static_cast<std::size_t>(n.lane)];
      return fmt::format("{}GPU {} stream {}", p.kind == CriticalKind::Launch ? "launch to " : "", lane.first,
                         lane.second);
    }
    case CriticalKind::Other: break;
  }
  return "before the path";
}

void add_piece(CriticalPath& cp, CriticalKind k, Ns ns) {
  switch (k) {
    case CriticalKind::Host: cp.host_ns += ns; break;
    case CriticalKind::Gpu: cp.gpu_ns += ns; break;
    case CriticalKind::Launch: cp.launch_ns += ns; break;
    case CriticalKind::SyncWait: cp.sync_wait_ns += ns; break;
    case CriticalKind::Other: cp.other_ns += ns; break;
  }
}

void keep_top(std::vector<CriticalRun>& runs) {
  std::stable_sort(runs.begin(), runs.end(),
                   [](const CriticalRun& a, const CriticalRun& b) { return a.duration_ns > b.duration_ns; });
  if (runs.size() > kCriticalTopRuns) runs.resize(kCriticalTopRuns);
}

using SyncIndex = std::unordered_map<std::uint32_t, std::size_t>;  // sync call node -> index into graph.syncs

SyncIndex index_syncs(const ReplayGraph& g) {
  SyncIndex sync_of;
  sync_of.reserve(g.syncs.size());
  for (std::size_t i = 0; i < g.syncs.size(); ++i) sync_of.emplace(g.syncs[i].node, i);
  return sync_of;
}

// The call of another thread whose hand-off set call `i`'s start (kNoNode: none did; its own
// thread's previous call and gap did, on a tie too).
std::uint32_t releasing_call(const ReplayGraph& g, const ReplayTimes& t, std::uint32_t i) {
  const ReplayNode& n = g.nodes[i];
  if (!n.handoff) return kNoNode;
  if (n.prev != kNoNode && t.end[n.prev] + n.gap_ns >= t.start[i]) return kNoNode;
  for (const ReplayHandoff& h : graph_detail::handoffs_to(g, i))
    if (t.end[h.from] + h.gap_ns == t.start[i]) return h.from;
  return kNoNode;
}

// A step's path walked back from its last call: pieces in time order, each starting where the
// one before it ends, from the step's replayed start (`from`) to its end.
struct Walk {
  std::vector<Piece> pieces;
  Ns from = 0, length = 0;
  std::uint64_t sync_edges = 0;
};

Walk walk_step(const ReplayGraph& g, const ReplayTimes& t, std::size_t step) {
  Walk wk;
  if (step >= g.steps.size()) return wk;
  const ReplayStepWindow& w = g.steps[step];
  if (w.thread < 0) return wk;
  const auto& list = g.thread_calls[static_cast<std::size_t>(w.thread)];
  auto it = std::lower_bound(list.begin(), list.end(), w.rec_end,
                             [&](std::uint32_t n, Ns x) { return g.nodes[n].rec_start < x; });
  if (it == list.begin()) return wk;
  const Ns from = replayed_time(g, t, w.thread, w.rec_start);
  std::uint32_t cur = *(it - 1);
  Ns hi = t.end[cur];
  if (hi <= from) return wk;
  wk.from = from;
  wk.length = hi - from;
  // Walk back; each piece ends where the previous one (later in time) began.
  auto& pieces = wk.pieces;
  auto piece = [&](CriticalKind k, std::uint32_t node, Ns lo, Ns h) {
    lo = std::max(lo, from);
    if (h > lo) pieces.push_back({k, node, lo, h});
  };
  Ns stop = from;
  for (std::size_t guard = 0; guard <= g.nodes.size(); ++guard) {
    const ReplayNode& n = g.nodes[cur];
    const std::uint32_t b = t.binding[cur];
    if (n.kind == ReplayNode::Kind::Call) {
      if (n.sync && b != kNoNode && hi == t.end[cur]) {  // the wait set its end: a sync edge
        piece(CriticalKind::SyncWait, cur, t.end[b], hi);
        ++wk.sync_edges;
        cur = b;
        hi = t.end[b];
      } else if (!n.sync && b != kNoNode && hi == t.end[cur]) {
        // A launch that waited for a launch-queue slot: the host's, until that activity started.
        piece(CriticalKind::Host, cur, t.start[b], hi);
        cur = b;
        hi = t.start[b];
      } else {
        piece(CriticalKind::Host, cur, t.start[cur], hi);  // 0 when the path left it at its start
        if (const std::uint32_t h = releasing_call(g, t, cur); h != kNoNode) {
          // Released by another thread's call (graph_threads.cpp): the path goes on there.
          if (t.start[cur] <= from) break;
          piece(CriticalKind::Host, cur, t.end[h], t.start[cur]);
          cur = h;
          hi = t.end[cur];
        } else if (n.prev == kNoNode) {  // the thread's first call: the step's host time before it is host too
          piece(CriticalKind::Host, cur, from, t.start[cur]);
          break;
        } else {
          if (t.start[cur] <= from) break;
          piece(CriticalKind::Host, cur, t.end[n.prev], t.start[cur]);  // the framework's time between calls
          cur = n.prev;
          hi = t.end[cur];
        }
      }
    } else {
      piece(CriticalKind::Gpu, cur, t.start[cur], hi);
      if (b == kNoNode || t.start[cur] <= from) {
        stop = t.start[cur];
        break;
      }
      if (b == n.launch) {
        piece(CriticalKind::Launch, cur, t.start[b], t.start[cur]);
        cur = b;
        hi = t.start[b];
      } else {  // stream order, copy engine or an event wait: the predecessor's end
        piece(CriticalKind::Gpu, cur, t.end[b], t.start[cur]);
        cur = b;
        hi = t.end[b];
      }
    }
    if (hi <= from) break;
  }
  if (stop > from) pieces.push_back({CriticalKind::Other, cur, from, stop});
  std::reverse(pieces.begin(), pieces.end());
  return wk;
}

// Consecutive pieces of one kind on one place, as integers (a long step has a piece per host
// call); one sync point a run.
struct Run {
  CriticalKind kind;
  std::int64_t place;  // thread (host), lane (GPU, launch), the sync's node (sync wait), -1
  Ns start, duration;
  std::uint32_t first, last;
};

std::vector<Run> runs_of(const ReplayGraph& g, const Walk& wk) {
  auto place_id = [&](const Piece& p) -> std::int64_t {
    const ReplayNode& n = g.nodes[p.node];
    switch (p.kind) {
      case CriticalKind::Host: return n.thread;
      case CriticalKind::Gpu:
      case CriticalKind::Launch: return n.lane;
      case CriticalKind::SyncWait: return p.node;
      case CriticalKind::Other: break;
    }
    return -1;
  };
  std::vector<Run> acc;
  for (const Piece& p : wk.pieces) {
    const std::int64_t place = place_id(p);
    if (acc.empty() || acc.back().kind != p.kind || acc.back().place != place || p.kind == CriticalKind::SyncWait)
      acc.push_back({p.kind, place, p.lo - wk.from, 0, p.node, p.node});
    acc.back().duration += p.hi - p.lo;
    acc.back().last = p.node;
  }
  return acc;
}

CriticalRun named(const Trace& trace, const ReplayGraph& g, const SyncIndex& sync_of, const Run& r) {
  CriticalRun out;
  out.kind = r.kind;
  out.where = place_of(g, sync_of, trace, Piece{r.kind, r.first, 0, 0});
  if (r.kind != CriticalKind::Other) {
    const std::string a = record_name(trace, g, r.first), z = record_name(trace, g, r.last);
    out.what = a == z ? a : a + " .. " + z;
  }
  out.start_ns = r.start;
  out.duration_ns = r.duration;
  return out;
}

// CriticalPath::top: the longest kCriticalTopRuns runs (analyze), or with `all_in_time_order`
// every run in time order (predict's replay.critical_path, view).
CriticalPath path_of_step(const Trace& trace, const ReplayGraph& g, const ReplayTimes& t, std::size_t step,
                          const SyncIndex& sync_of, bool all_in_time_order = false) {
  CriticalPath cp;
  const Walk wk = walk_step(g, t, step);
  if (wk.length <= 0) return cp;
  cp.length_ns = wk.length;
  cp.sync_edges = wk.sync_edges;
  for (const Piece& p : wk.pieces) add_piece(cp, p.kind, p.hi - p.lo);
  const std::vector<Run> acc = runs_of(g, wk);
  // Names only for the runs kept.
  std::vector<std::size_t> order(acc.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::size_t keep = all_in_time_order ? order.size() : std::min(order.size(), kCriticalTopRuns);
  if (!all_in_time_order)
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                      [&](std::size_t a, std::size_t b) {
                        return acc[a].duration != acc[b].duration ? acc[a].duration > acc[b].duration : a < b;
                      });
  std::vector<CriticalRun> runs;
  for (std::size_t k = 0; k < keep; ++k) runs.push_back(named(trace, g, sync_of, acc[order[k]]));
  if (!all_in_time_order) keep_top(runs);
  cp.top = std::move(runs);
  return cp;
}

}  // namespace

CriticalPath step_critical_path(const Trace& trace, const ReplayGraph& g, const ReplayTimes& t, std::size_t step) {
  return path_of_step(trace, g, t, step, index_syncs(g));
}

CriticalPath step_critical_path_all_runs(const Trace& trace, const ReplayGraph& g, const ReplayTimes& t,
                                         std::size_t step) {
  return path_of_step(trace, g, t, step, index_syncs(g), true);
}

std::vector<CriticalRun> step_critical_runs(const Trace& trace, const ReplayGraph& g, const ReplayTimes& t,
                                            std::size_t step) {
  return step_critical_path_all_runs(trace, g, t, step).top;
}

std::vector<std::uint32_t> step_critical_sync_calls(const ReplayGraph& g, const ReplayTimes& t, std::size_t step) {
  std::vector<std::uint32_t> out;
  for (const Piece& p : walk_step(g, t, step).pieces)
    if (p.kind == CriticalKind::SyncWait) out.push_back(p.node);
  return out;
}

void add_critical_paths(const Trace& trace, AnalysisResult& result) {
  ReplayOptions ro;
  ro.step_glob = result.options.step_glob;
  ro.pid = result.options.pid;
  const ReplayGraph g = build_replay_graph(trace, ro);
  if (g.nodes.empty() || g.steps.empty()) return;
  const ReplayTimes t = run_replay(g);

  std::map<std::tuple<std::string, Ns, Ns>, std::size_t> step_of;
  for (std::size_t i = 0; i < result.steps.size(); ++i)
    step_of.try_emplace({result.steps[i].name, result.steps[i].start, result.steps[i].end}, i);
  const SyncIndex sync_of = index_syncs(g);
  CriticalPath total;
  total.steps = 0;
  std::map<std::pair<CriticalKind, std::string>, CriticalRun> runs;
  for (std::size_t s = 0; s < g.steps.size(); ++s) {
    const ReplayStepWindow& w = g.steps[s];
    auto found = step_of.find({w.name, w.rec_start, w.rec_end});
    const bool whole = g.problems.no_steps;
    if (found == step_of.end() && !whole) continue;
    if (found != step_of.end() && result.steps[found->second].critical_path) continue;  // a duplicate marker
    CriticalPath cp = path_of_step(trace, g, t, s, sync_of);
    // The totals' runs: the same kind and place summed over steps, named by its longest run.
    // Only each step's top runs take part, so a place that is never among a step's longest
    // runs is not in the totals' list (the shares above still count all of its time).
    for (const CriticalRun& r : cp.top) {
      auto [it, fresh] = runs.try_emplace({r.kind, r.where}, r);
      if (!fresh) {
        if (r.duration_ns > it->second.duration_ns / static_cast<Ns>(it->second.count)) it->second.what = r.what;
        it->second.duration_ns += r.duration_ns;
        it->second.count += 1;
      }
      it->second.start_ns = 0;
    }
    total.length_ns += cp.length_ns;
    total.host_ns += cp.host_ns;
    total.gpu_ns += cp.gpu_ns;
    total.launch_ns += cp.launch_ns;
    total.sync_wait_ns += cp.sync_wait_ns;
    total.other_ns += cp.other_ns;
    total.sync_edges += cp.sync_edges;
    total.steps += 1;
    if (found != step_of.end()) result.steps[found->second].critical_path = std::move(cp);
  }
  if (total.steps == 0) return;
  for (auto& [key, r] : runs) total.top.push_back(std::move(r));
  keep_top(total.top);
  result.totals.critical_path = std::move(total);
}

}  // namespace syncscope::replay
