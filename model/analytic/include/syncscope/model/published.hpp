// The published figures (docs/sources.md#packing-cache: Unsloth blog and PRs) run through the model: how close
// the plain forms land, and how much of the offload gap the overlap-slowdown term explains.
// The inputs are the published numbers; everything else is computed here and checked
// independently by tests/model/test_published.cpp.
#pragma once

#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/results.hpp"

namespace syncscope::model {

struct PackingPublishedCase {
  std::string model;
  int layers = 0;
  double per_layer_ms = 0;       // s = 13.7 ms (mask rebuild on a Blackwell GPU)
  double predicted_ms = 0;       // (L-1) s
  double measured_ms = 0;        // saving per step
  double measured_fraction = 0;  // saving / baseline step time
  double step_ms = 0;            // implied baseline step: measured_ms / measured_fraction
  double error = 0;              // (predicted - measured) / measured
  double predicted_speedup = 0;  // T / (T - predicted)
  double measured_speedup = 0;   // T / (T - measured) = 1 / (1 - fraction)
};

struct OffloadPublishedCase {
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
  std::vector<PackingPublishedCase> packing;
  std::vector<OffloadPublishedCase> offload;
  double pinned_h2d_bytes_per_s = 0;  // 55.7 GB/s
  // Pooled slowdown (relative least squares over the three models) and the range of the
  // per-model values: n = 3, so this range, not a bootstrap, is the honest interval.
  double sigma_pooled = 0, sigma_min = 0, sigma_max = 0;
  double plain_mape = 0, slowed_mape = 0, loo_mape = 0;  // fractions
  double plain_max_abs_error = 0, slowed_max_abs_error = 0, loo_max_abs_error = 0;
  std::vector<std::string> notes;
};

PublishedReport reproduce_published_figures();

// Speedups the blog prints (docs/sources.md#packing-cache), as printed, with the model, fix, variant and training
// mode they were measured with ("" where the blog does not say). forward/step 0: not published.
struct PublishedSpeedup {
  std::string model, fix, variant, training;
  double forward_speedup = 0;  // e.g. 1.433 for "+43.3% forward"
  double step_speedup = 0;     // whole step (batch)
  std::string source;
};
// Every registered fix's figures (FixSpec::published), in registry order; computed once.
const std::vector<PublishedSpeedup>& published_speedups();
// The blog's figures of the packing and of the offload fix, the hooks their folders install
// (fixes/packing, fixes/offload): the tables stay here, beside reproduce_published_figures,
// which runs the same figures through the closed forms.
std::vector<fixes::PublishedFigure> packing_published_figures();
std::vector<fixes::PublishedFigure> offload_published_figures();

// A run's speedup beside the published one for the same model, fix and variant (the model
// name from results.json's network block). Informational: another GPU and another
// framework, so no tolerance applies.
struct PublishedCheck {
  std::string scenario, fix, variant, model;
  std::string what;  // "forward" | "step"
  double published = 0, measured = 0;
  double difference = 0;  // (measured - published) / published
  std::string training_published, training_run, source;
};
std::vector<PublishedCheck> published_checks(const RunResults& results);
std::string published_report_to_markdown(const PublishedReport& report);

// published_table.cpp: every published figure beside the run of its scenario in
// scenarios/published/ (matched by scenario name), as `validate --published` prints it.
// Gains are speedup - 1; the ratio is simulated gain / published gain (for the rebuild
// microbenchmark: simulated cost / published cost). Goal: 0.8 <= ratio <= 1.25.
struct PublishedFigureRow {
  std::string figure;    // "Llama-3.2-1B packing cache, step"
  std::string scenario;  // scenarios/published/*.yaml `name`
  std::string fix, variant;
  std::string what;                           // "step" | "forward" | "backward" | "rebuild_ms"
  double published = 0;                       // gain (fraction), or ms for rebuild_ms
  double published_lo = 0, published_hi = 0;  // a published range ("10-15%"); else = published
  bool found = false;                         // a run of the scenario with this fix and variant was given
  double simulated = 0;                       // same unit as `published`
  double ratio = 0;                           // simulated / published
  bool independent = true;                    // false: a profile value was fitted to this figure (say so)
  std::string assumptions;                    // what the comparison rests on, beyond the scenario's header
  std::string source;                         // docs/sources.md anchor of the published figure
};
inline constexpr double kPublishedGoalLo = 0.8, kPublishedGoalHi = 1.25;
// True for a scenarios/published/ scenario name; and whether it stands for a figure of kind
// `what` ("step", "forward", ...): published_checks compares only those (the 2048-token
// rebuild microbenchmark runs Llama-3.2-1B's shape but is not its step figure).
bool published_scenario(const std::string& scenario);
bool published_scenario_shows(const std::string& scenario, const std::string& what);
std::vector<PublishedFigureRow> published_figure_rows(const std::vector<RunResults>& runs);
// The table, its goal column and the numbered assumptions; `label` names the runs (mode,
// profile, commit). Markdown when `markdown`, else aligned text.
std::string published_figure_table(const std::vector<PublishedFigureRow>& rows, const std::string& label,
                                   bool markdown);

}  // namespace syncscope::model
