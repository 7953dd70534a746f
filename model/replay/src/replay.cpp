// Runs the replay graph (replay.hpp): every node starts at the latest end of its
// predecessors (plus its recorded gap, for host calls), in topological order. Also maps a
// step's recorded host range onto the replay and walks a step's critical path back.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "graph_internal.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::replay {
namespace graph_detail {
namespace {

// A held sync's excess over the round trip (ReplayGraph::sync_holds, sorted by node).
Ns sync_hold_ns(const ReplayGraph& g, std::uint32_t node) {
  const auto it = std::lower_bound(g.sync_holds.begin(), g.sync_holds.end(), std::pair<std::uint32_t, Ns>{node, 0},
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return it != g.sync_holds.end() && it->first == node ? it->second : 0;
}

template <class Fn>
void for_each_pred(const ReplayNode& n, const Fn& fn) {
  if (n.prev != kNoNode) fn(n.prev);
  if (n.engine_prev != kNoNode) fn(n.engine_prev);
  if (n.launch != kNoNode) fn(n.launch);
  for (std::uint32_t w : n.waits) fn(w);
}

}  // namespace

// A host call has two events: its start (after its thread's previous call and the gap) and
// its end (its own time, or the work it waits for + the round trip). The GPU work a call
// launches needs only its start: a blocking copy waits for the copy it launched itself.
// A call released by another thread's call (graph_threads.cpp) starts after that call's end
// plus the recorded offset, and after its own thread's previous call.
void time_call_start(const ReplayGraph& g, std::uint32_t i, ReplayTimes& t) {
  const ReplayNode& n = g.nodes[i];
  Ns s = n.prev != kNoNode ? t.end[n.prev] + n.gap_ns : n.rec_start;
  if (n.handoff) {
    bool any = n.prev != kNoNode;  // a thread's first call has no recorded start to keep
    for (const ReplayHandoff& h : handoffs_to(g, i)) {
      s = any ? std::max(s, t.end[h.from] + h.gap_ns) : t.end[h.from] + h.gap_ns;
      any = true;
    }
  }
  t.start[i] = s;
}

void time_node(const ReplayGraph& g, std::uint32_t i, ReplayTimes& t) {
  const ReplayNode& n = g.nodes[i];
  std::uint32_t bind = kNoNode;
  if (n.kind == ReplayNode::Kind::Call) {
    Ns e = t.start[i] + n.own_ns;
    // A launch call returns once the launch queue has room: when the activity that frees its
    // slot has started (graph.cpp, model_launch_queue).
    if (n.engine_prev != kNoNode && !n.removed && t.start[n.engine_prev] > e) {
      e = t.start[n.engine_prev];
      bind = n.engine_prev;
    }
    if (n.sync && !n.removed) {
      const Ns wake = g.round_trip_ns + (n.held ? sync_hold_ns(g, i) : 0);
      for (std::uint32_t w : n.waits)
        if (t.end[w] + wake > e) {
          e = t.end[w] + wake;
          bind = w;
        }
    }
    t.end[i] = e;
    t.binding[i] = bind;
    return;
  }
  Ns s;
  if (n.removed) {
    s = n.rec_start;  // passes its stream's order through, at no cost
    bool any = false;
    for (std::uint32_t p : {n.prev, n.engine_prev})
      if (p != kNoNode && (!any || t.end[p] > s)) {
        s = t.end[p];
        bind = p;
        any = true;
      }
    if (!any && n.launch != kNoNode) {
      s = t.start[n.launch];
      bind = n.launch;
    }
  } else {
    if (n.launch != kNoNode) {
      s = t.start[n.launch] + g.launch_latency_ns[static_cast<int>(n.kind)];
      bind = n.launch;
    } else {
      // No launch on a traced thread: anchored at its recorded start (and its stream's order).
      s = n.rec_start;
    }
    for_each_pred(n, [&](std::uint32_t p) {
      if (p != n.launch && t.end[p] > s) {
        s = t.end[p];
        bind = p;
      }
    });
    // What the trace does not show held it (graph.cpp): for a launch's own delay, that long after
    // what binds it; for a hold of kHeldExternalNs or more, until its recorded start.
    if (n.held) s = n.gap_ns >= kHeldExternalNs ? std::max(s, n.rec_start) : s + n.gap_ns;
  }
  t.start[i] = s;
  t.end[i] = s + (n.removed ? 0 : n.own_ns);
  // A collective ends when its peers' data has arrived: not before its recorded end.
  if (n.comm && !n.removed) t.end[i] = std::max(t.end[i], n.rec_end);
  t.binding[i] = bind;
}

}  // namespace graph_detail

using graph_detail::handoffs_to;
using graph_detail::time_call_start;
using graph_detail::time_node;

ReplayOrder replay_order(const ReplayGraph& g) {
  const std::size_t n = g.nodes.size();
  // Events: 2i = node i's start (calls only; a GPU node's is a no-op), 2i+1 = its end.
  const std::size_t ne = 2 * n;
  auto for_each_dep = [&](std::size_t ev, const auto& fn) {
    const std::size_t i = ev / 2;
    const ReplayNode& x = g.nodes[i];
    if (x.kind == ReplayNode::Kind::Call) {
      if (ev % 2 == 0) {
        if (x.prev != kNoNode) fn(2 * std::size_t{x.prev} + 1);
        if (x.handoff)
          for (const ReplayHandoff& h : handoffs_to(g, static_cast<std::uint32_t>(i))) fn(2 * std::size_t{h.from} + 1);
      } else {
        fn(2 * i);
        for (std::uint32_t w : x.waits) fn(2 * std::size_t{w} + 1);
        if (x.engine_prev != kNoNode) fn(2 * std::size_t{x.engine_prev} + 1);  // the launch queue's slot
      }
      return;
    }
    if (ev % 2 == 0) return;
    if (x.launch != kNoNode) fn(2 * std::size_t{x.launch});
    if (x.prev != kNoNode) fn(2 * std::size_t{x.prev} + 1);
    if (x.engine_prev != kNoNode) fn(2 * std::size_t{x.engine_prev} + 1);
    for (std::uint32_t w : x.waits) fn(2 * std::size_t{w} + 1);
  };
  std::vector<std::uint32_t> indeg(ne, 0), offs(ne + 1, 0), succ;
  for (std::size_t e = 0; e < ne; ++e)
    for_each_dep(e, [&](std::size_t p) {
      ++indeg[e];
      ++offs[p + 1];
    });
  for (std::size_t e = 0; e < ne; ++e) offs[e + 1] += offs[e];
  succ.resize(offs[ne]);
  {
    std::vector<std::uint32_t> fill(offs.begin(), offs.end() - 1);
    for (std::size_t e = 0; e < ne; ++e)
      for_each_dep(e, [&](std::size_t p) { succ[fill[p]++] = static_cast<std::uint32_t>(e); });
  }
  // Kahn's order, first in first out; the order holds every event, no-ops included, so that
  // the cycle's events below are found by what is missing.
  std::vector<std::uint32_t> seq;
  seq.reserve(ne);
  for (std::size_t e = 0; e < ne; ++e)
    if (indeg[e] == 0) seq.push_back(static_cast<std::uint32_t>(e));
  for (std::size_t head = 0; head < seq.size(); ++head) {
    const std::uint32_t e = seq[head];
    for (std::uint32_t k = offs[e]; k < offs[e + 1]; ++k)
      if (--indeg[succ[k]] == 0) seq.push_back(succ[k]);
  }
  ReplayOrder order;
  if (seq.size() < ne) {
    // A cycle (inconsistent timestamps): the rest in recorded order, from whatever their
    // predecessors hold (a predecessor in the cycle keeps its recorded time).
    std::vector<bool> done(ne, false);
    for (std::uint32_t e : seq) done[e] = true;
    std::vector<std::uint32_t> rest;
    for (std::size_t e = 0; e < ne; ++e)
      if (!done[e]) rest.push_back(static_cast<std::uint32_t>(e));
    std::sort(rest.begin(), rest.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::tie(g.nodes[a / 2].rec_start, a) < std::tie(g.nodes[b / 2].rec_start, b);
    });
    std::vector<bool> counted(n, false);
    for (std::uint32_t e : rest) counted[e / 2] = true;
    order.cycle_nodes = static_cast<std::uint64_t>(std::count(counted.begin(), counted.end(), true));
    seq.insert(seq.end(), rest.begin(), rest.end());
  }
  // Only the events that time something (a GPU node's start is a no-op), kept in place.
  std::size_t kept = 0;
  for (std::uint32_t e : seq)
    if (e % 2 == 1 || g.nodes[e / 2].kind == ReplayNode::Kind::Call) seq[kept++] = e;
  seq.resize(kept);
  seq.shrink_to_fit();
  order.events = std::move(seq);
  return order;
}

ReplayTimes run_replay(const ReplayGraph& g, const ReplayOrder& order) {
  const std::size_t n = g.nodes.size();
  ReplayTimes t;
  t.start.resize(n);
  t.end.resize(n);
  t.binding.assign(n, kNoNode);
  for (std::size_t i = 0; i < n; ++i) {
    t.start[i] = g.nodes[i].rec_start;
    t.end[i] = g.nodes[i].rec_end;
  }
  for (std::uint32_t e : order.events) {
    const std::uint32_t i = e / 2;
    if (e % 2 == 0) time_call_start(g, i, t);  // only calls' starts are in the order
    else time_node(g, i, t);
  }
  t.cycle_nodes = order.cycle_nodes;
  return t;
}

ReplayTimes run_replay(const ReplayGraph& g) { return run_replay(g, replay_order(g)); }

double ReplayedStep::error() const {
  return measured_ns > 0 ? static_cast<double>(replayed_ns - measured_ns) / static_cast<double>(measured_ns) : 0.0;
}

Ns replayed_time(const ReplayGraph& g, const ReplayTimes& t, std::int32_t thread, Ns x) {
  if (thread < 0 || static_cast<std::size_t>(thread) >= g.thread_calls.size()) return x;
  const auto& list = g.thread_calls[static_cast<std::size_t>(thread)];
  if (list.empty()) return x;
  auto it =
      std::upper_bound(list.begin(), list.end(), x, [&](Ns v, std::uint32_t n) { return v < g.nodes[n].rec_start; });
  if (it == list.begin()) return t.start[list.front()] - (g.nodes[list.front()].rec_start - x);
  const std::uint32_t c = *(it - 1);
  const ReplayNode& n = g.nodes[c];
  if (x < n.rec_end) return t.start[c] + std::min(x - n.rec_start, t.end[c] - t.start[c]);
  Ns r = t.end[c] + (x - n.rec_end);
  if (it != list.end()) r = std::min(r, t.start[*it]);
  return r;
}

std::vector<ReplayedStep> replay_steps(const ReplayGraph& g, const ReplayTimes& t) {
  std::vector<Ns> unbuilt;
  for (const auto& n : g.nodes)
    if (n.unbuilt) unbuilt.push_back(n.rec_start);
  std::sort(unbuilt.begin(), unbuilt.end());
  std::vector<ReplayedStep> out;
  for (const auto& w : g.steps) {
    ReplayedStep s;
    s.name = w.name;
    s.measured_ns = w.rec_end - w.rec_start;
    s.replayed_ns = replayed_time(g, t, w.thread, w.rec_end) - replayed_time(g, t, w.thread, w.rec_start);
    s.unbuilt = static_cast<std::uint64_t>(std::lower_bound(unbuilt.begin(), unbuilt.end(), w.rec_end) -
                                           std::lower_bound(unbuilt.begin(), unbuilt.end(), w.rec_start));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::size_t> critical_syncs(const ReplayGraph& g, const ReplayTimes& t, std::size_t step) {
  std::unordered_map<std::uint32_t, std::size_t> sync_of;
  for (std::size_t i = 0; i < g.syncs.size(); ++i) sync_of[g.syncs[i].node] = i;
  std::vector<std::size_t> out;
  for (std::uint32_t n : step_critical_sync_calls(g, t, step))
    if (auto it = sync_of.find(n); it != sync_of.end()) out.push_back(it->second);
  return out;
}

// The path analyze --critical-path walks (critical_path.cpp), in time order.
std::vector<CriticalSegment> critical_path(const Trace& trace, const ReplayGraph& g, const ReplayTimes& t,
                                           std::size_t step) {
  std::vector<CriticalSegment> out;
  for (CriticalRun& r : step_critical_runs(trace, g, t, step))
    out.push_back({std::move(r.where), std::move(r.what), r.start_ns, r.duration_ns});
  return out;
}

}  // namespace syncscope::replay
