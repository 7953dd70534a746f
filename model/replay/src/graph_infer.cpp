// What a trace does not show, inferred from its timeline (replay.hpp, model/README.md "Replay"):
// stream waits with no event record, GPU work that starts later than the graph explains, and
// communication kernels' transfer times.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "graph_internal.hpp"

namespace syncscope::replay::graph_detail {
namespace {

Ns known_ready(const ReplayGraph& g, const ReplayNode& n) {
  Ns ready = std::numeric_limits<Ns>::min();
  if (n.launch != kNoNode) ready = g.nodes[n.launch].rec_start + g.launch_latency_ns[static_cast<int>(n.kind)];
  if (n.prev != kNoNode) ready = std::max(ready, g.nodes[n.prev].rec_end);
  if (n.engine_prev != kNoNode) ready = std::max(ready, g.nodes[n.engine_prev].rec_end);
  for (std::uint32_t w : n.waits) ready = std::max(ready, g.nodes[w].rec_end);
  return ready;
}

// On `lane`, the work issued before `issued_before` that ended last at or before `end_by`
// (kNoNode: none). A stream's work ends in stream order, so the scan back stops early; it is
// bounded (64 nodes) so that a pathological lane costs no more than that.
std::uint32_t latest_end_before(const ReplayGraph& g, const LaneIndex& lanes, std::size_t lane, Ns issued_before,
                                Ns end_by) {
  const auto& im = lanes.issue_max[lane];
  auto k = static_cast<std::size_t>(std::lower_bound(im.begin(), im.end(), issued_before) - im.begin());
  for (std::size_t scanned = 0; k > 0 && scanned < 64; --k, ++scanned) {
    const std::uint32_t x = lanes.nodes[lane][k - 1];
    if (g.nodes[x].rec_end <= end_by) return x;
  }
  return kNoNode;
}

// A GPU node whose recorded start is later than anything the graph knows of it explains.
bool unexplained(const ReplayGraph& g, const ReplayNode& n, const LatencySpread& spread) {
  return n.rec_start > known_ready(g, n) + kWaitSlackNs + spread[static_cast<int>(n.kind)];
}

std::int32_t launch_thread(const ReplayGraph& g, std::uint32_t gpu_node) {
  const std::uint32_t l = g.nodes[gpu_node].launch;
  return l == kNoNode ? -1 : g.nodes[l].thread;
}

}  // namespace

// A stream wait whose event record the trace does not hold (older Kineto writes no cuda_sync
// events; nsys without --cuda-event-trace): which stream waited, and for what, is taken from
// the timeline (issue 36). First by evidence: a stream's first work issued after the wait that
// starts later than anything the graph knows of it can explain, right after (kWaitSlackNs) work
// of another stream of its device issued before the wait: that work is the edge. Else by
// PyTorch's pattern (record on the current stream, wait on another, launch there): the thread's
// next launch after the wait waits for the work it last gave another stream. Else unbuilt.
void infer_stream_waits(ReplayGraph& g, const LaneIndex& lanes, const std::vector<std::uint32_t>& waits,
                        const LatencySpread& spread) {
  auto issue = [&](std::uint32_t x) { return g.nodes[g.nodes[x].launch].rec_start; };
  auto add_edge = [&](std::uint32_t src, std::uint32_t dst) {
    auto& v = g.nodes[dst].waits;
    if (std::find(v.begin(), v.end(), src) == v.end()) v.push_back(src);
    ++g.problems.inferred_waits;
  };
  for (std::uint32_t wi : waits) {
    const ReplayNode& w = g.nodes[wi];
    std::uint32_t best_dst = kNoNode, best_src = kNoNode;
    std::uint32_t next_dst = kNoNode;  // the thread's next launch after the wait
    std::int32_t last_lane = -1;       // the lane the thread last gave work to before it
    Ns last_issue = std::numeric_limits<Ns>::min();
    for (std::size_t l = 0; l < lanes.nodes.size(); ++l) {
      const auto lane = static_cast<std::int32_t>(l);
      if (const std::uint32_t b = lanes.last_before(lane, w.rec_start);
          b != kNoNode && launch_thread(g, b) == w.thread && issue(b) > last_issue) {
        last_issue = issue(b);
        last_lane = lane;
      }
      const std::uint32_t dst = lanes.first_at_or_after(lane, w.rec_start);
      if (dst == kNoNode || g.nodes[dst].launch == kNoNode) continue;
      if (launch_thread(g, dst) == w.thread && (next_dst == kNoNode || issue(dst) < issue(next_dst))) next_dst = dst;
      const ReplayNode& d = g.nodes[dst];
      if (!unexplained(g, d, spread)) continue;  // nothing the trace does not show held it
      for (std::size_t m = 0; m < lanes.nodes.size(); ++m) {
        if (m == l || g.lanes[m].first != g.lanes[l].first) continue;
        const std::uint32_t src = latest_end_before(g, lanes, m, w.rec_start, d.rec_start);
        if (src == kNoNode || d.rec_start - g.nodes[src].rec_end > kWaitSlackNs) continue;
        if (best_dst == kNoNode || issue(dst) < issue(best_dst) ||
            (dst == best_dst && g.nodes[src].rec_end > g.nodes[best_src].rec_end)) {
          best_dst = dst;
          best_src = src;
        }
      }
    }
    if (best_dst != kNoNode) {
      add_edge(best_src, best_dst);
      continue;
    }
    // The thread's next launch, when it starts later than the graph can explain and no other
    // stream's work ended right before: held by what the trace does not show (the wait's event,
    // or the SMs another stream's kernel held). It keeps that delay (ReplayNode::held).
    if (next_dst != kNoNode && unexplained(g, g.nodes[next_dst], spread)) {
      g.nodes[next_dst].held = true;
      g.nodes[next_dst].gap_ns = g.nodes[next_dst].rec_start - known_ready(g, g.nodes[next_dst]);
      ++g.problems.held_anchored;
      continue;
    }
    if (next_dst != kNoNode && last_lane >= 0 && last_lane != g.nodes[next_dst].lane &&
        g.lanes[static_cast<std::size_t>(last_lane)].first ==
            g.lanes[static_cast<std::size_t>(g.nodes[next_dst].lane)].first) {
      const std::uint32_t src =
          latest_end_before(g, lanes, static_cast<std::size_t>(last_lane), w.rec_start, g.nodes[next_dst].rec_start);
      if (src != kNoNode) {
        add_edge(src, next_dst);
        continue;
      }
    }
    g.nodes[wi].unbuilt = true;
    ++g.problems.waits_without_record;
  }
}

// Any GPU activity (a traced launch, not already held) that starts later than what the graph
// knows of it allows: right after (kWaitSlackNs) work of another stream of its device issued
// before it, that work is taken as what it waited for (an edge, inferred: a wait the trace does
// not show, or the SMs that work held); with no such work, it was held by something the trace
// does not show at all (a launch slower than the median, another process, lost records) and
// keeps that delay after whatever binds it in the replay (not the moment: a launch's delay moves
// with the launch). In stream order, so that an edge inferred for one activity explains the work
// queued behind it.
void explain_gpu_starts(ReplayGraph& g, const LaneIndex& lanes, const LatencySpread& spread) {
  for (std::size_t l = 0; l < lanes.nodes.size(); ++l)
    for (std::uint32_t x : lanes.nodes[l]) {
      ReplayNode& n = g.nodes[x];
      if (n.launch == kNoNode || n.held || !unexplained(g, n, spread)) continue;
      const Ns issued = g.nodes[n.launch].rec_start;
      std::uint32_t best = kNoNode;
      for (std::size_t m = 0; m < lanes.nodes.size(); ++m) {
        if (m == l || g.lanes[m].first != g.lanes[l].first) continue;
        const std::uint32_t src = latest_end_before(g, lanes, m, issued + 1, n.rec_start);
        if (src != kNoNode && n.rec_start - g.nodes[src].rec_end <= kWaitSlackNs &&
            (best == kNoNode || g.nodes[src].rec_end > g.nodes[best].rec_end))
          best = src;
      }
      if (best != kNoNode) {
        n.waits.push_back(best);
        ++g.problems.inferred_deps;
      } else {
        n.held = true;
        n.gap_ns = n.rec_start - known_ready(g, n);
        ++g.problems.held_anchored;
      }
    }
}

// A communication kernel's transfer time: the shortest run of that kernel (by name) in the
// trace. Its other runs waited for peers as well; the shortest is the closest the trace comes to
// a run whose peers were already there, so it is a lower bound, and only bounds the kernel's end
// when an edit makes the rank reach it later than it did (its recorded end anchors it otherwise).
void comm_transfer_times(const Trace& trace, ReplayGraph& g) {
  std::unordered_map<StringId, Ns> shortest;
  for (const ReplayNode& n : g.nodes)
    if (n.comm) {
      auto [it, fresh] = shortest.try_emplace(trace.kernels[n.record].name, n.own_ns);
      if (!fresh) it->second = std::min(it->second, n.own_ns);
    }
  for (ReplayNode& n : g.nodes)
    if (n.comm) n.own_ns = shortest[trace.kernels[n.record].name];
}

}  // namespace syncscope::replay::graph_detail
