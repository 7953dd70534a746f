// What is kept of one trace once it is written: the step-time estimate and the per-step
// medians of the analyses, the timeline strip of one layer, the baseline's prediction and
// the simulator check. The trace itself is not kept in memory.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/results.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/pipeline/backend.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/reports/html_report.hpp"
#include "syncscope/sim/compare.hpp"

namespace syncscope::pipeline {

// The simulator against a measurement of the same variant (sim_check.json).
struct SimCheck {
  sim::TraceComparison comparison;
  std::string gpu_profile;  // the profile the simulation used
};

struct TraceSummary {
  std::string trace_file;  // relative to the results directory
  model::Estimate step_ns;
  double syncs = 0, bubble = 0, blocked = 0, h2d = 0, d2h = 0;  // per-step medians
  std::vector<std::string> warnings;
  model::Estimate forward;                            // the forward pass per step
  std::optional<model::PredictionReport> prediction;  // when it is a baseline
  std::optional<TimelineStrip> strip;
  std::optional<SimCheck> sim_check;
  // The worst sync causes (analyze's order) and what replaying the trace without each saves
  // per step (replay/replay.hpp, removal_savings), the first kRunReplayCauses of them.
  std::vector<model::SyncRemoval> removals;
};

// As analyze's default `--replay-causes`: the causes its worst-offenders table shows.
inline constexpr std::size_t kRunReplayCauses = 6;

// The analyses every run trace gets (layer ranges "layer_*", as the reference steps name them).
AnalysisOptions run_analysis_options();

// Median step time with min..max as its interval: a handful of repeats gives no honest
// confidence interval, and their spread is what a reader needs to judge a speedup.
model::Estimate step_estimate(const AnalysisResult& a);

// Which layer each strip shows: a fix's strip shows the layer its baseline's strip shows,
// so summarize baselines first.
class StripLayers {
 public:
  // The strip of one layer of this trace when the job runs at the scenario's deepest depth
  // (what the report shows), else nullopt.
  std::optional<TimelineStrip> strip(const Trace& t, const AnalysisResult& a, const Job& job,
                                     const scenario::Scenario& s);

 private:
  std::map<std::string, std::string> layer_;  // baseline key -> layer range its strip shows
};

// Analyzes the trace (written at `trace_file`) into a summary with its strip. Error when the
// trace has no ProfilerStep# ranges (`label` names the variant).
TraceSummary summarize_trace(const Trace& t, const std::string& trace_file, const std::string& label, const Job& job,
                             const scenario::Scenario& s, StripLayers& strips);

// The baseline's prediction from its own trace, as `syncscope predict --trace` would make
// it. For MoE scenarios it records in env.extra how MoE "device" runs its expert GEMMs
// (asked of the backend when measured, modelled when simulated) and prices padding where
// the device pads.
model::PredictionReport predict_baseline(const Trace& t, const std::string& trace_file, const Job& job,
                                         const scenario::Scenario& s, const std::string& mode,
                                         const std::optional<model::GpuProfile>& profile,
                                         const MeasuredBackend* backend, model::Environment& env);

}  // namespace syncscope::pipeline
