// syncscope validate RESULTS: predicted against measured speedups per scenario and variant,
// MAPE, max |error| and whether the model ranks the variants as measured. Exit 1 when a
// variant's error exceeds its tolerance or nothing was compared, 2 on bad input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "syncscope/api/results.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"

#include "syncscope/model/published.hpp"
#include "syncscope/model/results.hpp"
#include "syncscope/model/validate.hpp"
#include "syncscope/reports/model_printers.hpp"

namespace syncscope::cli {

namespace {

struct ValidateOptions {
  std::vector<std::string> results;
  bool published = false;
  std::string format = "table";
  std::string output;
  bool force = false;
};
void emit(const ValidateOptions& o, const std::string& text) { emit_output(o.output, o.force, text); }

// validate --published: the published figures beside the runs of scenarios/published/.
void run_published(const ValidateOptions& o, Context& ctx) {
  std::vector<model::RunResults> runs;
  std::set<std::string> modes, profiles, commits;
  for (const auto& arg : o.results) {
    runs.push_back(api::read_results(arg));
    modes.insert(runs.back().mode);
    profiles.insert(runs.back().env.gpu_profile);
    commits.insert(runs.back().env.commit);
  }
  auto joined = [](const std::set<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + (x.empty() ? std::string("?") : x);
    return s;
  };
  const auto rows = model::published_figure_rows(runs);
  std::string label =
      fmt::format("runs of mode {}, GPU profile {}, commit {}", joined(modes), joined(profiles), joined(commits));
  if (modes.count("simulated")) label += " (simulated: our simulator on our assumptions, not a measurement)";
  emit(o, model::published_figure_table(rows, label, o.format == "markdown"));
  const bool any = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.found; });
  if (!any)
    std::fprintf(stderr,
                 "syncscope: validate --published: no run of a scenarios/published/ scenario in the results given\n");
  ctx.exit_code = any ? 0 : 1;
}

}  // namespace

void add_validate_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Compare predicted and measured speedups in a results set: per scenario and variant the error and its "
      "tolerance, over the set the mean absolute percentage error, max |error| and whether the model orders the "
      "variants as measured (overlapping measured intervals count as ties). Exit status 1 when any variant is "
      "outside its tolerance or nothing could be compared, 2 on bad input.");
  cmd->add_option("results", o->results,
                  "results.json, or a run directory holding one (from syncscope run); with --published, one or "
                  "more")
      ->required();
  cmd->add_flag("--published", o->published,
                "Print every published figure (Unsloth's blog) beside the runs of scenarios/published/ in RESULTS: "
                "published and simulated gain, their ratio against the goal 0.8-1.25 and the assumptions behind "
                "each (model/README.md, \"Published figures\"). Exit 1 when no published scenario was run");
  cmd->add_option("--format", o->format,
                  "Output format: table or json (schema_version'd); with --published, table or markdown")
      ->check(CLI::IsMember({"table", "json", "markdown"}))
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Write to this file (atomically) instead of stdout");
  cmd->add_flag("--force", o->force, "Replace --output when it already exists");
  cmd->callback([o, &ctx] {
    if (!o->output.empty()) (void)plan_output_file(o->output, o->force);  // refuse before the work
    SYNCSCOPE_INPUT_ERROR_IF(o->published && o->format == "json",
                             "validate --published: --format json is not offered; give table or markdown");
    SYNCSCOPE_INPUT_ERROR_IF(!o->published && o->format == "markdown",
                             "validate: --format markdown goes with --published; give table or json");
    if (o->published) {
      run_published(*o, ctx);
      return;
    }
    SYNCSCOPE_INPUT_ERROR_IF(o->results.size() != 1,
                             fmt::format("validate: {} results given; give one (or several with --published)",
                                         o->results.size()));
    const api::Validation v = api::validate_run(o->results.front());
    const model::ValidationReport& rep = v.report;
    std::string text = o->format == "json" ? model::validation_to_json(rep) : validation_to_table(rep);
    emit_output(o->output, o->force, text);
    if (rep.failures > 0) std::fprintf(stderr, "syncscope: %d variant(s) outside their tolerance\n", rep.failures);
    if (!v.nothing_compared.empty())
      std::fprintf(stderr, "syncscope: validate: nothing to compare in %s: %s\n", o->results.front().c_str(),
                   v.nothing_compared.c_str());
    ctx.exit_code = v.exit_code();
  });
}

}  // namespace syncscope::cli
