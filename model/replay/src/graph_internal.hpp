// Shared by the replay graph's builder (graph.cpp, graph_edges.cpp), its inference of what a trace does not
// show (graph_infer.cpp) and its launch queue (graph_queue.cpp). Private to model/replay/src.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "syncscope/replay/replay.hpp"

namespace syncscope::replay::graph_detail {

// A GPU node's recorded start is explained by what the graph knows of it (its launch plus the
// launch latency, its stream's and engine's previous work, its event waits) when it starts
// within this of the latest of them; later, something the trace does not show held it. 10 us:
// ten ticks of a whole-microsecond Kineto trace, and above the 2-8 us a stream takes to run
// its next work after a cross-stream event it waited for resolves (the round trips and
// back-to-back gaps of the fixtures). A sync's return gets the same slack over its round trip.
inline constexpr Ns kWaitSlackNs = 10'000;

// The median (the mean of the two middle values for an even count).
inline Ns median_of(std::vector<Ns> v, Ns fallback) {
  if (v.empty()) return fallback;
  // The middle values by selection, not a full sort: the same values in linear time.
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2) return *mid;
  const Ns below = *std::max_element(v.begin(), mid);  // the (n/2 - 1)-th smallest
  return below + (*mid - below) / 2;
}

// The work a stream has been given up to a moment: per lane, nodes in stream order with
// the running maximum of their issue times (a launch call's start), so "the last activity
// issued before t" is one binary search.
struct LaneIndex {
  std::vector<std::vector<std::uint32_t>> nodes;
  std::vector<std::vector<Ns>> issue_max;
  std::uint32_t last_before(std::int32_t lane, Ns t) const {
    if (lane < 0 || static_cast<std::size_t>(lane) >= nodes.size()) return kNoNode;
    const auto& im = issue_max[static_cast<std::size_t>(lane)];
    auto k = static_cast<std::size_t>(std::lower_bound(im.begin(), im.end(), t) - im.begin());
    return k == 0 ? kNoNode : nodes[static_cast<std::size_t>(lane)][k - 1];
  }
  std::uint32_t first_at_or_after(std::int32_t lane, Ns t) const {
    if (lane < 0 || static_cast<std::size_t>(lane) >= nodes.size()) return kNoNode;
    const auto& im = issue_max[static_cast<std::size_t>(lane)];
    auto k = static_cast<std::size_t>(std::lower_bound(im.begin(), im.end(), t) - im.begin());
    return k == im.size() ? kNoNode : nodes[static_cast<std::size_t>(lane)][k];
  }
};

// How far above the median launch latency a launch-bound start still counts as launch latency,
// by kind: three median absolute deviations of the samples (the usual robust outlier bound, Leys
// et al. 2013, "Detecting outliers: do not use standard deviation around the mean, use absolute
// deviation around the median"; robust to the held starts among the samples themselves). A start
// is taken as held only beyond it, as starts below the median are never corrected: within it the
// two sides are treated alike.
using LatencySpread = std::array<Ns, 4>;

// Stream waits with no event record (graph_infer.cpp): the edge inferred, or its work held.
void infer_stream_waits(ReplayGraph& g, const LaneIndex& lanes, const std::vector<std::uint32_t>& waits,
                        const LatencySpread& spread);
// GPU work that starts later than the graph explains: an inferred edge, or held (graph_infer.cpp).
void explain_gpu_starts(ReplayGraph& g, const LaneIndex& lanes, const LatencySpread& spread);
// Communication kernels' transfer times: their shortest runs (graph_infer.cpp).
void comm_transfer_times(const Trace& trace, ReplayGraph& g);
// The launch queue's depth and each launch call's slot (graph_queue.cpp). `launched`: a call
// node's GPU nodes.
void model_launch_queue(ReplayGraph& g, std::size_t first_gpu,
                        const std::function<std::span<const std::uint32_t>(std::uint32_t)>& launched);

// Hand-offs between host threads that take turns: the edges and their counts (graph_threads.cpp).
void link_threads(ReplayGraph& g);
// The hand-offs that release call `to` (ReplayNode::handoff), from g.handoffs.
inline std::span<const ReplayHandoff> handoffs_to(const ReplayGraph& g, std::uint32_t to) {
  auto lo = std::lower_bound(g.handoffs.begin(), g.handoffs.end(), to,
                             [](const ReplayHandoff& h, std::uint32_t v) { return h.to < v; });
  auto hi =
      std::upper_bound(lo, g.handoffs.end(), to, [](std::uint32_t v, const ReplayHandoff& h) { return v < h.to; });
  return {lo, hi};
}

// One event of run_replay (replay.cpp): a call's start; a node's end (for GPU work, its start
// and end). The whole-job replay (job_run.cpp) runs the same events over several graphs.
void time_call_start(const ReplayGraph& g, std::uint32_t i, ReplayTimes& t);
void time_node(const ReplayGraph& g, std::uint32_t i, ReplayTimes& t);

}  // namespace syncscope::replay::graph_detail
