// The offload fix's published figures (docs/sources.md#offload-double-buffer: the Unsloth blog,
// B200): the speedups the blog prints (the registry's `published` hook, which validate and the
// report compare runs with), and the same figures run through the closed forms: how close the
// plain (L-1) min(c, g) lands, and how much of the gap the overlap-slowdown term sigma
// explains. The inputs are the published numbers; everything else is computed here and checked
// independently by tests/model/test_published.cpp.
#pragma once

#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::fixes::offload {

struct PublishedCase {
  std::string model;
  int layers = 0;
  double steps_per_s_before = 0, steps_per_s_after = 0;
  double step_before_ms = 0, step_after_ms = 0;  // 1000 / steps_per_s
  double measured_saving_ms = 0;                 // step_before - step_after
  double measured_speedup = 0;                   // after / before (steps/s)
  double extra_buffer_gb = 0;                    // published extra memory of the second buffer
  double reload_ms = 0;                          // published one-reload time c
  double reload_ms_from_bandwidth = 0;           // extra_buffer_gb / 55.7 GB/s
  double hidden_reloads = 0;                     // measured saving / c
  double plain_predicted_ms = 0;                 // (L-1) min(c, g), compute-bound: (L-1) c
  double plain_error = 0;                        // (plain - measured) / measured
  double sigma_implied = 0;                      // sigma that makes the model exact for this case
  double slowed_predicted_ms = 0;                // (L-1) c / (1 + sigma_pooled)
  double slowed_error = 0;
  double loo_sigma = 0;         // sigma fitted on the other two cases
  double loo_predicted_ms = 0;  // prediction with loo_sigma (out of sample)
  double loo_error = 0;
};

struct PublishedReport {
  std::vector<PublishedCase> cases;
  double pinned_h2d_bytes_per_s = 0;  // 55.7 GB/s
  // Pooled slowdown (relative least squares over the three models) and the range of the
  // per-model values: n = 3, so this range, not a bootstrap, is the honest interval.
  double sigma_pooled = 0, sigma_min = 0, sigma_max = 0;
  double plain_mape = 0, slowed_mape = 0, loo_mape = 0;  // fractions
  double plain_max_abs_error = 0, slowed_max_abs_error = 0, loo_max_abs_error = 0;
  std::vector<std::string> notes;
};

// The blog's Qwen3-8B/14B/32B double-buffering gains through the plain and the slowed forms.
PublishedReport reproduce_published_figures();
// The blog's speedups of this fix, as printed (FixSpec::published).
std::vector<PublishedFigure> published_figures();
// Its figures beside the runs of scenarios/published/ (FixSpec::published_scenarios: validate
// --published's table).
std::vector<PublishedScenarioFigure> published_scenario_figures();
// The reproduction as a Markdown table (docs/published-figures.md).
std::string published_to_markdown(const PublishedReport& report);

}  // namespace syncscope::fixes::offload
