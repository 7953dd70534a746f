// The simulator checked against measurements (sim_check.hpp).
#include "syncscope/pipeline/sim_check.hpp"

#include <fmt/format.h>

#include "syncscope/io/trace_io.hpp"

namespace syncscope::pipeline {

std::string measured_trace_key(const std::string& scenario, const std::string& fix, const std::string& variant,
                               int layers) {
  return fmt::format("{}/{}/{}/{}", scenario, fix, variant, layers);
}

MeasuredTraces read_compare_measured(const std::string& dir, std::vector<std::string>& notes) {
  MeasuredTraces traces;
  model::RunResults m = model::read_results(dir);
  if (m.mode != "measured")
    notes.push_back(
        fmt::format("--compare-measured {}: that run is {}, not measured: sim_check.json compares two "
                    "simulations",
                    dir, m.mode));
  for (const auto& v : m.variants)
    if (!v.trace_file.empty())
      traces[measured_trace_key(v.scenario, v.fix, v.variant, v.layers)] = std::filesystem::path(dir) / v.trace_file;
  return traces;
}

SimCheck check_measured(const Trace& measured, SimProducer& checker, const Job& job, const scenario::Scenario& s,
                        const std::string& label) {
  Trace simulated = checker.produce(job, s, label + " (simulated)");
  return SimCheck{sim::compare_traces(simulated, measured, run_analysis_options()), checker.profile().name};
}

SimCheck check_simulated(const Trace& simulated, const std::filesystem::path& measured_file,
                         const std::string& gpu_profile) {
  Trace m = read_trace(measured_file);
  return SimCheck{sim::compare_traces(simulated, m, run_analysis_options()), gpu_profile};
}

}  // namespace syncscope::pipeline
