// How much memory a simulated run will need, known before anything large is allocated
// (issue 17: `run` refuses what exceeds the machine's memory, with the estimate).
#pragma once

#include <cstdint>
#include <string>

#include "syncscope/kernels/step_options.hpp"

namespace syncscope::sim {

// Ops per step that kernels::build_step_program(options) makes, without building it: step
// programs grow linearly in layers, in sequences and in their product (per-layer
// rebuilds of per-sequence metadata), so four programs of 1-2 layers x 1-2 sequences give
// the count for any shape; 10% is added for what is not exactly linear (an upper bound on
// the shipped scenarios, tests/model/test_safety.cpp).
std::uint64_t estimate_step_program_ops(const kernels::StepOptions& options);

// Refuses, with an InputError giving the estimate, a simulation of `options` for `steps`
// steps (the program and simulate()'s own memory) that needs more memory than this machine
// has available (MemAvailable). `what` names the run in the message.
void check_simulation_memory(const kernels::StepOptions& options, int steps, const std::string& what);

}  // namespace syncscope::sim
