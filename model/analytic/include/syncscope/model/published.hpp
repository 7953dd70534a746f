// The published figures (docs/sources.md: the Unsloth blog and PRs) beside runs: every
// registered fix's speedups as printed (FixSpec::published), a run's speedup beside them, and
// the table `validate --published` prints. Each fix's figures, and how its closed form
// reproduces them, are in its folder (fixes/<name>/include/syncscope/fixes/<name>/published.hpp).
#pragma once

#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/results.hpp"

namespace syncscope::model {

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
