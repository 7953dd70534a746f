// The run pipeline: scenarios -> jobs -> traces (simulated, or measured through the
// measured backend) -> analyses and predictions -> results.json, results.csv,
// timelines.json, report.html (and sim_check.json) in a directory written atomically ->
// validation. `syncscope run` is this plus option parsing and printing the verdict.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "syncscope/model/results.hpp"
#include "syncscope/model/validate.hpp"
#include "syncscope/pipeline/plan.hpp"

namespace syncscope::pipeline {

struct RunOutcome {
  model::RunResults results;
  model::ValidationReport validation;  // of results.json as published
  std::filesystem::path out;           // the published results directory
  std::size_t traces = 0;              // traces produced and written
  // What the run said about its model (also among results.notes), for the summary.
  std::vector<std::string> model_notes{};
};

// Runs it all. Progress, the mode and the reason for a fallback go to stderr. InputError on
// bad input (scenarios, options, an existing --out without --force), Error on failures;
// on a failure the complete files written so far stay in the partial directory.
RunOutcome run(const RunRequest& request);

}  // namespace syncscope::pipeline
