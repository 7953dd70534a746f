// syncscope validate RESULTS: predicted against measured speedups per scenario and variant,
// MAPE, max |error| and whether the model ranks the variants as measured. Exit 1 when a
// variant's error exceeds its tolerance or nothing was compared, 2 on bad input.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"

#include "syncscope/model/results.hpp"
#include "syncscope/model/validate.hpp"

namespace syncscope::cli {

namespace {
struct ValidateOptions {
  std::string results;
  std::string format = "table";
  std::string output;
  bool force = false;
};
}  // namespace

void add_validate_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Compare predicted and measured speedups in a results set: per scenario and variant the error and its "
      "tolerance, over the set the mean absolute percentage error, max |error| and whether the model orders the "
      "variants as measured (overlapping measured intervals count as ties). Exit status 1 when any variant is "
      "outside its tolerance or nothing could be compared, 2 on bad input.");
  cmd->add_option("results", o->results, "results.json, or a run directory holding one (from syncscope run)")
      ->required();
  cmd->add_option("--format", o->format, "Output format: table or json (schema_version'd)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Write to this file (atomically) instead of stdout");
  cmd->add_flag("--force", o->force, "Replace --output when it already exists");
  cmd->callback([o, &ctx] {
    if (!o->output.empty()) (void)plan_output_file(o->output, o->force);  // refuse before the work
    RunResults results = read_results(o->results);
    model::ValidationReport rep = model::validate_results(results, o->results);
    std::string text = o->format == "json" ? model::validation_to_json(rep) : model::validation_to_table(rep);
    if (o->output.empty()) {
      std::cout << text << std::flush;
    } else {
      write_file_atomic(o->output, text, o->force);
      std::fprintf(stderr, "syncscope: wrote %s\n", o->output.c_str());
    }
    if (rep.failures > 0)
      std::fprintf(stderr, "syncscope: %d variant(s) outside their tolerance\n", rep.failures);
    // A validation that compared nothing has not validated anything: not a pass.
    if (rep.compared == 0) {
      const bool any_variant = !results.variants.empty();
      bool any_non_baseline = false;
      for (const auto& v : results.variants) any_non_baseline |= !v.baseline;
      std::fprintf(stderr, "syncscope: validate: nothing to compare in %s: %s\n", o->results.c_str(),
                   !any_variant        ? "it holds no variants"
                   : !any_non_baseline ? "it holds only baselines"
                                       : "no variant beside a baseline carries a prediction");
      ctx.exit_code = 1;
      return;
    }
    ctx.exit_code = rep.failures > 0 ? 1 : 0;
  });
}

}  // namespace syncscope::cli
