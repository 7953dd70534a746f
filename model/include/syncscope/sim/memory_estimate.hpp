// How much memory a simulated run will need, known before anything large is allocated
// (`run` refuses what exceeds the machine's memory, with the estimate).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "syncscope/kernels/step_options.hpp"

namespace syncscope::sim {

// Ops per step that kernels::build_step_program(options) makes, without building it: step
// programs grow linearly in layers, in sequences and in their product (per-layer
// rebuilds of per-sequence metadata), so four programs of 1-2 layers x 1-2 sequences give
// the count for any shape; 10% is added for what is not exactly linear (an upper bound on
// the shipped scenarios, tests/model/test_safety.cpp).
std::uint64_t estimate_step_program_ops(const program::StepOptions& options);

// Refuses, with an InputError giving the estimate, a simulation of `options` for `steps`
// steps (the program and simulate()'s own memory) that needs more memory than this machine
// has available (MemAvailable). `what` names the run in the message.
void check_simulation_memory(const program::StepOptions& options, int steps, const std::string& what);

// The GPU memory one training step of `options` holds at its peak, by part, in
// bytes. An estimate from the step's own parameter list and shapes, not a measurement:
//   weights      the frozen or trained base as the step stores it (the compute dtype; NF4
//                codes and absmax for qlora's projections), at the depth run;
//   adapters     LoRA A and B in the compute dtype;
//   gradients    one per trainable value, in the compute dtype;
//   optimizer    AdamW's two moments per trainable value (LibTorch keeps them in the
//                parameter's dtype);
//   activations  one layer's working set while it is recomputed and back-propagated (its
//                projections, MLP or routed experts, the [T, T] packing mask and, for
//                eager attention with sinks, the [heads, T, T] scores), plus the logits and
//                their gradient in fp32 ([T, vocab] each);
//   checkpoints  the layer inputs kept for recompute ([T, hidden] each): all L on the
//                device without offload, the reload buffers (2, or k+1 for prefetch) with it.
struct StepMemory {
  std::vector<std::pair<std::string, double>> parts;  // name -> bytes, in the order above
  double total() const;
};
StepMemory estimate_step_memory(const program::StepOptions& options);

// Refuses (InputError, exit 2) a step whose estimate exceeds `capacity_bytes` (the GPU
// profile's memory), giving the estimate by part and what would fit: qlora, fewer layers
// (--layers), checkpoint offload. With `force` it returns the same text instead, for the
// run to label its outputs; "" when the step fits. `what` names the scenario, `gpu` the
// profile.
std::string check_step_memory(const program::StepOptions& options, double capacity_bytes, const std::string& gpu,
                              const std::string& what, bool force);

}  // namespace syncscope::sim
