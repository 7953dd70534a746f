// The files of a results directory besides the traces: results.json, results.csv,
// timelines.json, sim_check.json (when the simulator was checked) and report.html.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "syncscope/model/results.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/pipeline/summary.hpp"

namespace syncscope::pipeline {

// Writes them into `partial` (each atomically); `out` is where the directory will be
// published (the report names it as its source).
void write_run_outputs(const std::filesystem::path& partial, const std::filesystem::path& out,
                       const model::RunResults& results, const std::vector<scenario::Scenario>& scenarios,
                       const std::vector<Job>& jobs, const std::map<std::string, TraceSummary>& summaries);

}  // namespace syncscope::pipeline
