// Planning a run: what `syncscope run` was asked (RunRequest), the scenarios it loads, and
// the jobs they make. A job is one variant of one fix at one depth: the unit a results row
// describes. Jobs whose step options are identical share one trace (the same `key`).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "syncscope/model/results.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::pipeline {

// The options of `syncscope run` (cli/cmd_run.cpp fills it).
struct RunRequest {
  std::vector<std::string> scenarios;  // scenario files
  std::string device = "auto";         // auto | cuda | sim
  std::string gpu_profile;             // "" : H200 in simulation, matched to the GPU when measured
  std::string out;                     // "" : out/<first scenario>-<mode>
  bool force = false;
  std::optional<int> layers;
  std::optional<int> repeats;
  std::optional<int> warmup;
  std::string hf_config;
  std::string compare_measured;
  // Simulate a step whose memory estimate exceeds the GPU profile's memory (the
  // outputs say so); without it such a run exits 2 with the estimate and what would fit.
  bool force_memory = false;
  // The measured backend to load; "" : the search of backend.hpp.
  std::filesystem::path backend_library;
};

// Loads the scenarios, applies --hf-config, --layers, --repeats and --warmup, validates them
// and refuses two with one name (InputError naming the file).
std::vector<scenario::Scenario> load_run_scenarios(const RunRequest& request);

struct Job {
  std::size_t scenario = 0;  // index into the scenarios
  fixes::Fix fix{};          // a registered fix's id (fix_spec.hpp)
  std::string variant;
  bool baseline = false;
  int layers = 0;
  double tolerance = 0.1;
  program::StepOptions opts;
  std::string key;                            // identical step options share one trace
  std::string base_key;                       // the baseline run of this fix at this depth
  std::optional<model::NetworkInfo> network;  // the network the step builds (results.json's `network`)
};

struct RunPlan {
  std::vector<Job> jobs;  // scenario x depth x fix x variant, in scenario order
  std::map<std::string, std::size_t> first_job_of_key;
  std::set<std::string> baseline_keys;
  // The jobs whose traces are produced (the first of each key), baselines first:
  // predictions and the layer the timeline strips show come from the baselines.
  std::vector<std::size_t> produce_order;
};

RunPlan plan_jobs(const std::vector<scenario::Scenario>& scenarios);

// The step options of one variant: the fix under test takes the variant, every other fix
// stays at its baseline; offload schedules are compared with every layer offloaded.
program::StepOptions step_options(const scenario::Scenario& s, fixes::Fix fix, const std::string& variant, int layers);
std::string variant_option_key(const program::StepOptions& o);
// The trace file stem: "<scenario>__<fix>-<variant>[__L<layers>]", file-name safe; one over
// kMaxFileStem bytes is cut to that, ending in "-" and a hash of the whole (a long name).
inline constexpr std::size_t kMaxFileStem = 200;
std::string file_stem(const std::string& scenario, const Job& j, bool sweep);
// "<scenario> <fix>=<variant>[ L=<layers>]": progress lines and trace names.
std::string job_label(const scenario::Scenario& s, const Job& j);

}  // namespace syncscope::pipeline
