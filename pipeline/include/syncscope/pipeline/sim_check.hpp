// The simulator checked against measurements: in a measured run, each measured trace against
// the simulation of the same variant; in a simulated run with --compare-measured DIR, each
// simulated trace against DIR's measured trace of the same variant.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "syncscope/pipeline/producers.hpp"
#include "syncscope/pipeline/summary.hpp"

namespace syncscope::pipeline {

// "<scenario>/<fix>/<variant>/<layers>" -> the trace file of that run.
using MeasuredTraces = std::map<std::string, std::filesystem::path>;
std::string measured_trace_key(const std::string& scenario, const std::string& fix, const std::string& variant,
                               int layers);

// The traces of the results directory `dir` (read_results); a note when that run is not
// measured.
MeasuredTraces read_compare_measured(const std::string& dir, std::vector<std::string>& notes);

// Simulates `job` with the checker's profile and compares it with the measured trace.
SimCheck check_measured(const Trace& measured, SimProducer& checker, const Job& job, const scenario::Scenario& s,
                        const std::string& label);
// Compares a simulated trace with a measured trace file.
SimCheck check_simulated(const Trace& simulated, const std::filesystem::path& measured_file,
                         const std::string& gpu_profile);

}  // namespace syncscope::pipeline
