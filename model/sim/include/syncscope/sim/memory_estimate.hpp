// How much memory a simulated run will need, known before anything large is allocated
// (`run` refuses what exceeds the machine's memory, with the estimate).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "syncscope/program/step_options.hpp"

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

// The GPU memory one training step of `options` holds at its peak, by part, in bytes, as
// a real run would need it. An estimate from the architecture's parameter list and the
// step's shapes, not a measurement:
//   weights      the base as the checkpoint has it, at the depth run: the compute dtype, or
//                under qlora NF4 codes and absmax for every nn.Linear of the decoder layers
//                (bitsandbytes; routed experts too where transformers holds them as
//                nn.Linear modules: program::experts_quantized);
//   adapters     LoRA A and B in fp32 (PEFT upcasts bf16/fp16 adapters);
//   gradients    full: one per parameter in the compute dtype; adapters: fp32;
//   fp32 master weights  full fine-tune in bf16/fp16 (mixed precision): 4 B per parameter;
//   AdamW moments  two fp32 moments per trained value (8 B), or 8-bit AdamW's two bytes
//                plus an fp32 absmax per 2048 values (training.optimizer: adamw_8bit);
//   activations  by the checkpointing mode (checkpointing_mode()): "none", every layer's
//                working set (its projections, MLA's latents and per-head q/k/v where the
//                model has them, its dense MLP or routed and shared experts, the [T, T]
//                packing mask and, for eager attention with sinks, the [heads, T, T] scores);
//                "full" and "offload", the largest one layer's, while it is recomputed and
//                back-propagated; plus the logits and their gradient in fp32;
//   checkpoints  the layer inputs kept for recompute ([T, hidden] each): none without
//                checkpointing, all L on the device with "full", the reload buffers (2, or
//                k+1 for prefetch) with "offload";
//   CUDA context 723 MiB (a measured floor; memory_estimate.cpp cites it);
//   allocator rounding  PyTorch's caching allocator rounds each weight, gradient and state
//                tensor to 512 B, or 2 MiB above 1 MiB.
// A full bf16 fine-tune with AdamW thus needs about 16 B per parameter before activations.
struct StepMemory {
  std::vector<std::pair<std::string, double>> parts;  // name -> bytes, in the order above
  std::vector<std::string> notes;                     // what was assumed (which layers qlora quantizes)
  std::string checkpointing;                          // the mode the activations were counted for
  double total() const;
};

// The gradient checkpointing a step runs: "offload" when a fix schedules the layers
// (program::fix_program_schedule: the offload fix, Unsloth's layer inputs in host memory), else
// training.gradient_checkpointing's "full" (transformers' gradient_checkpointing: each layer's input kept on the
// device, the layer recomputed in the backward) or "none" (every layer's activations kept).
std::string checkpointing_mode(const program::StepOptions& options);
// The mode in words, for the printed estimate and results.json.
std::string describe_checkpointing(const std::string& mode);
StepMemory estimate_step_memory(const program::StepOptions& options);

// "needs 71.3 GB of the H100 profile's 80.0 GB (weights 16.1 GB, ...)": the estimate of a
// step that fits, for the run to print and keep in results.json.
std::string describe_step_memory(const program::StepOptions& options, double capacity_bytes, const std::string& gpu);

// Refuses (InputError, exit 2) a step whose estimate exceeds `capacity_bytes` (the GPU
// profile's memory), naming the largest parts and what would fit: lora or qlora, 8-bit
// AdamW, checkpoint offload, fewer layers (--layers). With `force` it returns the same text
// instead, for the run to label its outputs; "" when the step fits. `what` names the model
// (and the scenario), `gpu` the profile.
std::string check_step_memory(const program::StepOptions& options, double capacity_bytes, const std::string& gpu,
                              const std::string& what, bool force);

}  // namespace syncscope::sim
