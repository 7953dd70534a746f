// Summarizing one trace of a run (summary.hpp): analyses, step estimate, timeline strip.
#include "syncscope/pipeline/summary.hpp"

#include <fmt/format.h>

#include "syncscope/core/error.hpp"
#include "syncscope/model/forward_time.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::pipeline {

AnalysisOptions run_analysis_options() {
  AnalysisOptions ao;
  ao.layer_glob = "layer_*";
  return ao;
}

model::Estimate step_estimate(const AnalysisResult& a) {
  model::Estimate e;
  const auto& d = a.step_summary.duration_ns;
  e.value = d.median;
  e.lo = d.min;
  e.hi = d.max;
  e.n = static_cast<int>(d.n);
  return e;
}

std::optional<TimelineStrip> StripLayers::strip(const Trace& t, const AnalysisResult& a, const Job& job,
                                                const scenario::Scenario& s) {
  // The strip of one layer (at the deepest run of a sweep: that is what the report shows).
  const int deepest = s.measure.layer_sweep.empty() ? s.layers() : s.measure.layer_sweep.back();
  if (job.layers != deepest) return std::nullopt;
  TimelineOptions to;
  to.prefer_copies = fixes::fix_spec(job.fix).timeline_shows_copies;
  if (auto it = layer_.find(job.base_key); it != layer_.end()) to.layer_name = it->second;
  TimelineStrip strip = extract_timeline(t, a, to);
  if (job.key == job.base_key) layer_[job.key] = strip.range;
  return strip;
}

TraceSummary summarize_trace(const Trace& t, const std::string& trace_file, const std::string& label, const Job& job,
                             const scenario::Scenario& s, StripLayers& strips) {
  TraceSummary sum;
  sum.trace_file = trace_file;
  AnalysisResult a = analyze(t, run_analysis_options());
  a.source = sum.trace_file;
  if (a.steps.empty())
    throw Error(fmt::format("{}: the trace has no ProfilerStep# ranges: cannot measure step time", label));
  sum.step_ns = step_estimate(a);
  sum.syncs = a.step_summary.syncs.median;
  sum.bubble = a.step_summary.sync_bubble_ns.median;
  sum.blocked = a.step_summary.sync_blocked_ns.median;
  sum.h2d = a.step_summary.h2d_overlap_fraction.median;
  sum.d2h = a.step_summary.d2h_overlap_fraction.median;
  sum.warnings = a.warnings;
  sum.forward = model::forward_time_estimate(t);
  sum.strip = strips.strip(t, a, job, s);
  for (const auto& c : replay::removal_savings(a, t, kRunReplayCauses)) {
    sum.removals.push_back(model::SyncRemoval{c.cause, c.syncs_per_step, c.saving_ns});
  }
  // The strip's step gets its critical path over the replay graph `analyze --critical-path`
  // walks, only for the traces whose strip the report shows (the replay costs about a fifth
  // of an analysis). It is break_down_step's step: the middle analysis step.
  if (sum.strip && sum.strip->step) {
    replay::add_critical_paths(t, a);
    const WindowStats& w = a.steps[a.steps.size() / 2];
    if (w.name == sum.strip->step->step) sum.strip->critical_path = w.critical_path;
  }
  return sum;
}

}  // namespace syncscope::pipeline
