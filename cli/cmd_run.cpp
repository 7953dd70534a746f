// `syncscope run`: parses the options and runs the pipeline (pipeline/run.hpp): scenarios ->
// traces -> analyses -> model predictions -> results.json, results.csv, timelines.json,
// report.html (and sim_check.json when the simulator is compared with measurements).
// Measured on a CUDA GPU through the measured backend (loaded on demand), or simulated from
// the step programs with a GPU profile; then prints the verdict.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/model/validate.hpp"
#include "syncscope/pipeline/run.hpp"
#include "syncscope/reports/model_printers.hpp"

namespace syncscope::cli {

namespace {

int run_command(const pipeline::RunRequest& request) {
  const pipeline::RunOutcome r = pipeline::run(request);
  std::fputs(validation_to_table(r.validation).c_str(), stdout);
  // The summary names the model and what the run says about it (also in
  // results.json's notes: its family and size, what stays at baseline, memory).
  for (const auto& n : r.model_notes) std::printf("%s\n", printable(n).c_str());
  std::printf("wrote %s (results.json, results.csv, report.html, %zu trace(s))\n", printable(r.out.string()).c_str(),
              r.traces);
  if (r.validation.failures > 0) {
    std::fprintf(stderr, "syncscope run: %d variant(s) outside their tolerance\n", r.validation.failures);
    return 1;
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<pipeline::RunRequest>();
  auto* cmd = app.add_subcommand(
      "run",
      "Run scenarios: each fix's variants, measured on a CUDA GPU under the tracer or simulated with a GPU "
      "profile; writes traces, results.json, results.csv and report.html. Exit 1 when a prediction misses its "
      "tolerance, 2 on bad input.");
  cmd->add_option("scenarios", args->scenarios, "Scenario files (scenarios/*.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--device", args->device,
                  "auto: a CUDA GPU when present (and the measured backend, libsyncscope_backend.so, loads), else "
                  "the simulator; cuda; sim")
      ->capture_default_str();
  cmd->add_option("--gpu-profile", args->gpu_profile,
                  "GPU profile for the simulator (shipped name such as H200, B200, GB10, or a file); default H200. "
                  "When measuring, the profile the simulator check uses (default: matched to the GPU's name)")
      ->capture_default_str();
  cmd->add_option("--out", args->out,
                  "Results directory (default: out/<first scenario>-<mode>; with --hf-config "
                  "out/<scenario>--<model>-<mode>); must not exist")
      ->capture_default_str();
  cmd->add_flag("--force", args->force,
                "Replace an existing results directory, only one syncscope run wrote (results.json and our files)");
  cmd->add_option("--layers", args->layers, "Run this many decoder layers (overrides measure.layers and any sweep)")
      ->check(int_in(bounds::kLayers));
  cmd->add_option("--repeats", args->repeats, "Measured steps per variant (overrides measure.repeat_steps)")
      ->check(int_in(bounds::kSteps));
  cmd->add_option("--warmup", args->warmup, "Untraced warm-up steps per variant (overrides measure.warmup_steps)")
      ->check(int_in(bounds::kWarmupSteps));
  cmd->add_option("--hf-config", args->hf_config,
                  "A model's Hugging Face config.json: replaces the scenarios' model shape")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--force-memory", args->force_memory,
                "Run even when the step's memory estimate exceeds the GPU profile's memory (labelled in every "
                "output); without it such a run exits 2 with the estimate and what would fit");
  cmd->add_option("--compare-measured", args->compare_measured,
                  "With --device sim: a measured results directory whose traces the simulated ones are compared "
                  "with (written to sim_check.json and the report)")
      ->check(CLI::ExistingDirectory);
  cmd->callback([args, &ctx] { ctx.exit_code = run_command(*args); });
}

}  // namespace syncscope::cli
