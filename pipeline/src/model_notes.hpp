// What a run says about its model before it starts. The model named (stderr,
// results.json's env.extra and notes, so the terminal summary and the report carry it),
// what its architecture has that the scenario leaves at baseline or the step leaves out,
// and the step's GPU memory against the GPU profile's (exit 2 over it, unless forced).
#pragma once

#include <string>
#include <vector>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/results.hpp"
#include "syncscope/pipeline/plan.hpp"

namespace syncscope::pipeline {

// Names each scenario's model (and its config file with its SHA-256 when --hf-config gave
// it), warns of assumed families, fills every job's network.base_parameters and family.
// Lines for stderr and notes are appended to `notes`; provenance goes to `env.extra`.
void describe_models(const std::vector<scenario::Scenario>& scenarios, RunPlan& plan, const RunRequest& request,
                     std::vector<std::string>& notes, model::Environment& env);

// The step memory check of every distinct job against `profile` (no-op without one).
// InputError (exit 2) over it; with request.force_memory the explanation becomes a note and
// env.extra["memory_check"] says "forced".
void check_models_memory(const std::vector<scenario::Scenario>& scenarios, const RunPlan& plan,
                         const model::GpuProfile* profile, const std::string& profile_name, bool force,
                         std::vector<std::string>& notes, model::Environment& env);

}  // namespace syncscope::pipeline
