// Queue length over time per stream and the time blocked on a full launch queue (definitions
// in syncscope/analysis/hta_extras.hpp; HTA: hta/analyzers/trace_counters.py,
// _get_queue_length_time_series_for_rank and get_time_spent_blocked_on_full_queue).
#include <algorithm>
#include <map>

#include "hta_extras_internal.hpp"

namespace syncscope::analysis_detail {

namespace {

using StreamKey = std::pair<std::int32_t, std::int64_t>;

struct Step {
  Ns t;
  std::int32_t depth;    // +1 / -1 / 0
  std::int32_t pending;  // +1 / -1 / 0
};

// All steps at one instant become one point (an activity leaving as another enters is not
// counted twice; HTA's cumulative sum over rows of equal ts can show either order).
std::vector<QueuePoint> change_points(std::vector<Step>& steps) {
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.t < b.t; });
  std::vector<QueuePoint> pts;
  std::int64_t depth = 0, pending = 0;
  for (std::size_t i = 0; i < steps.size();) {
    const Ns now = steps[i].t;
    for (; i < steps.size() && steps[i].t == now; ++i) {
      depth += steps[i].depth;
      pending += steps[i].pending;
    }
    const QueuePoint p{now, static_cast<std::uint64_t>(std::max<std::int64_t>(depth, 0)),
                       static_cast<std::uint64_t>(std::max<std::int64_t>(pending, 0))};
    // Both counts start at 0 before the first point: an instant that leaves them there is no change.
    const QueuePoint before = pts.empty() ? QueuePoint{} : pts.back();
    if (before.depth != p.depth || before.pending != p.pending) pts.push_back(p);
  }
  return pts;
}

// HTA's rule: each point's value holds until the next point; the last point holds for no time.
Ns blocked(const std::vector<QueuePoint>& pts, std::uint64_t threshold) {
  Ns ns = 0;
  for (std::size_t i = 0; i + 1 < pts.size(); ++i)
    if (pts[i].pending >= threshold) ns += pts[i + 1].t_ns - pts[i].t_ns;
  return ns;
}

// kQueueSeriesMaxPoints equal buckets over [first, last]; each bucket's point is the maximum of
// each count over the bucket, including the value carried into it from the bucket before.
// Points equal to the previous one are left out (the step function is unchanged).
std::vector<QueuePoint> bucketed(const std::vector<QueuePoint>& pts, Ns& bucket_ns) {
  const Ns first = pts.front().t_ns, span = pts.back().t_ns - first;
  const auto n = static_cast<Ns>(kQueueSeriesMaxPoints);
  bucket_ns = std::max<Ns>(1, (span + n) / n);  // n buckets of this width cover [first, last]
  std::vector<QueuePoint> out;
  std::size_t i = 0;
  QueuePoint carried{first, 0, 0};
  for (Ns b = 0; b < n && i < pts.size(); ++b) {
    const Ns lo = first + b * bucket_ns, hi = lo + bucket_ns;
    QueuePoint m{lo, carried.depth, carried.pending};
    for (; i < pts.size() && pts[i].t_ns < hi; ++i) {
      m.depth = std::max(m.depth, pts[i].depth);
      m.pending = std::max(m.pending, pts[i].pending);
      carried = pts[i];
    }
    if (out.empty() || out.back().depth != m.depth || out.back().pending != m.pending) out.push_back(m);
  }
  return out;
}

}  // namespace

void queue_series(const Trace& trace, const LaunchIndex& launches, std::uint64_t threshold, QueueSeries& out) {
  out.threshold = threshold;
  const auto [t0, t1] = trace.time_span();
  out.trace_ns = t1 - t0;
  std::map<StreamKey, std::vector<Step>> per;
  auto push = [&](const GpuActivity& g) {
    auto& v = per[{g.device, g.stream}];
    const Ns l = launches.start(g.correlation);
    if (l == kNoLaunch) {  // no launch call: in the queue while it runs (as StreamQueue), never pending
      v.push_back({g.start, +1, 0});
      v.push_back({g.end, -1, 0});
      return;
    }
    // A launch recorded after its activity started or ended (clock skew) enters at that time.
    v.push_back({std::min(l, g.end), +1, 0});
    v.push_back({g.end, -1, 0});
    v.push_back({std::min(l, g.start), 0, +1});
    v.push_back({g.start, 0, -1});
  };
  for (const auto& k : trace.kernels) push(k);
  for (const auto& m : trace.memcpys) push(m);
  for (const auto& m : trace.memsets) push(m);
  for (auto& [key, steps] : per) {
    StreamQueueSeries s;
    s.device = key.first;
    s.stream = key.second;
    auto pts = change_points(steps);
    s.change_points = pts.size();
    for (const auto& p : pts) s.max_pending = std::max(s.max_pending, p.pending);
    s.blocked_ns = blocked(pts, threshold);
    s.points = pts.size() > kQueueSeriesMaxPoints ? bucketed(pts, s.bucket_ns) : std::move(pts);
    out.streams.push_back(std::move(s));
  }
}

}  // namespace syncscope::analysis_detail
