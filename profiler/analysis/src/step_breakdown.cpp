// break_down_step: one step's GPU time split into compute, copies, sync bubbles and other
// idle time, for the report's "where the step time goes" bars.
#include "syncscope/analysis/step_breakdown.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace syncscope {

namespace {

using Intervals = std::vector<std::pair<Ns, Ns>>;

// Sorted, disjoint union of intervals (empty ones dropped).
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(s, e);
    }
  }
  return out;
}

Ns clipped_length(const Intervals& disjoint, Ns ws, Ns we) {
  Ns n = 0;
  for (const auto& [s, e] : disjoint) n += std::max<Ns>(0, std::min(e, we) - std::max(s, ws));
  return n;
}

}  // namespace

StepBreakdown break_down_step(const Trace& trace, const AnalysisResult& analysis) {
  StepBreakdown b;
  Ns ws = 0, we = 0;
  if (!analysis.steps.empty()) {
    const WindowStats& w = analysis.steps[analysis.steps.size() / 2];
    ws = w.start;
    we = w.end;
    b.step = w.name;
    b.steps = analysis.steps.size();
    b.host_blocked_ns = w.syncs.blocked_ns;
    b.syncs = w.syncs.total;
    b.idle = w.idle;
    b.verdict = w.verdict;
  } else {
    std::tie(ws, we) = trace.time_span();
    b.step = "whole trace";
    b.host_blocked_ns = analysis.totals.syncs.blocked_ns;
    b.syncs = analysis.totals.syncs.total;
    b.idle = analysis.totals.idle;
    b.verdict = analysis.totals.verdict;
  }
  b.idle.sync_bubble_by_cause.clear();
  b.duration_ns = std::max<Ns>(0, we - ws);

  // Whole-trace activity per device: a bubble is a gap of the device's activity, and a gap
  // that starts before the step (the previous step's final sync) still counts inside it.
  std::map<std::int32_t, Intervals> compute, busy;
  for (const auto& k : trace.kernels) {
    compute[k.device].emplace_back(k.start, k.end);
    busy[k.device].emplace_back(k.start, k.end);
  }
  for (const auto& m : trace.memsets) {
    compute[m.device].emplace_back(m.start, m.end);
    busy[m.device].emplace_back(m.start, m.end);
  }
  for (const auto& m : trace.memcpys) busy[m.device].emplace_back(m.start, m.end);
  // The device shown: the busiest in the step (ties: the lowest id).
  Intervals dev_busy;
  Ns best = -1;
  for (auto& [dev, v] : busy) {
    Intervals u = merged(std::move(v));
    const Ns n = clipped_length(u, ws, we);
    if (n > best) {
      best = n;
      b.device = dev;
      dev_busy = std::move(u);
    }
  }
  if (best < 0) {  // no GPU activity at all: the step is idle
    b.other_idle_ns = b.duration_ns;
    return b;
  }
  b.compute_ns = clipped_length(merged(std::move(compute[b.device])), ws, we);
  b.copy_ns = best - b.compute_ns;

  // When each host sync of this device (or a device-wide one) returned, sorted.
  std::vector<Ns> returns;
  for (const auto& sp : analysis.sync_points)
    if (sp.device == b.device || sp.device < 0) returns.push_back(sp.end);
  std::sort(returns.begin(), returns.end());
  // Gaps between activities (not before the first or after the last one: as in the
  // analysis, a sync with no work on one side leaves no bubble).
  for (std::size_t i = 0; i + 1 < dev_busy.size(); ++i) {
    const Ns gs = dev_busy[i].second, ge = dev_busy[i + 1].first;
    const Ns len = std::max<Ns>(0, std::min(ge, we) - std::max(gs, ws));
    if (len == 0) continue;
    auto it = std::lower_bound(returns.begin(), returns.end(), gs);
    if (it != returns.end() && *it <= ge) b.sync_bubble_ns += len;
  }
  b.other_idle_ns = b.duration_ns - b.compute_ns - b.copy_ns - b.sync_bubble_ns;
  return b;
}

}  // namespace syncscope
