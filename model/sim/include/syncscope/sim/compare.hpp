// Checking the simulator against a measured trace: the same analyses on both, then the
// differences of the numbers the model and the report rely on (step time, sync points per
// step, blocked and bubble time, copy/compute overlap).
#pragma once

#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::sim {

inline constexpr int kComparisonSchemaVersion = 1;

struct MetricComparison {
  std::string metric;  // "step_time_ns", "syncs_per_step", ...
  std::string unit;    // "ns", "count", "fraction"
  double simulated = 0;
  double measured = 0;
  double difference = 0;  // simulated - measured
  // difference / |measured| for ns and counts; for fractions the difference itself (a
  // relative error of an overlap fraction near 0 says nothing). 0 when both are 0.
  double relative = 0;
};

struct TraceComparison {
  int schema_version = kComparisonSchemaVersion;
  std::string simulated_source;
  std::string measured_source;
  std::size_t simulated_steps = 0;
  std::size_t measured_steps = 0;
  std::vector<MetricComparison> metrics;
  std::vector<std::string> notes;  // e.g. "no step ranges in the measured trace"
  double max_abs_relative = 0;     // over metrics
  const MetricComparison* find(const std::string& metric) const;
};

// Medians over steps when both sides have step ranges, else whole-trace values.
TraceComparison compare_analyses(const AnalysisResult& simulated, const AnalysisResult& measured);
TraceComparison compare_traces(const Trace& simulated, const Trace& measured, const AnalysisOptions& options = {});

std::string comparison_to_json(const TraceComparison& comparison, int indent = 2);

}  // namespace syncscope::sim
