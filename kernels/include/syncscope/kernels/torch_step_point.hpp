// The LibTorch step as a fix's hook sees it (FixSpec::torch_step_point, fix_spec.hpp): the
// definition of the registry's opaque fixes::TorchStepContext, and the pieces of the step a
// hook works with: its NVTX ranges, its device context and a CUDA event on its stream.
// ReferenceStep (step.hpp) calls every registered fix's torch_step_point at the step's points
// BeforeOptimizer (before AdamW) and AfterOptimizer (after it, before the loss read), in
// registry order, as the step program calls build_program_layer at the same points
// (program_layer.hpp): a fix's hook here runs the operations its program hook describes.
//
// Includes <torch/torch.h>: only code built with LibTorch includes this header (the torch
// layer, kernels/src/torch, and a fix folder's LibTorch library such as fixes/logging's
// syncscope_fix_logging_torch). The public step.hpp stays torch-free.
#pragma once

#include <torch/torch.h>

#include <any>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::kernels::detail {

// NVTX ranges (CUDA builds) plus an optional record of their names (tests).
class Ranges {
 public:
  void enable_nvtx(bool on) { nvtx_ = on; }
  void record(bool on) { record_ = on; }
  void push(const std::string& name);
  void pop();
  std::vector<std::string> take();
  int depth() const { return depth_; }

 private:
  bool nvtx_ = false;
  bool record_ = false;
  int depth_ = 0;
  std::vector<std::string> names_;
};

class RangeGuard {
 public:
  RangeGuard(Ranges& r, const std::string& name) : r_(r) { r_.push(name); }
  ~RangeGuard() { r_.pop(); }
  RangeGuard(const RangeGuard&) = delete;
  RangeGuard& operator=(const RangeGuard&) = delete;

 private:
  Ranges& r_;
};

// Where the step runs and what it counts.
struct Ctx {
  torch::Device device{torch::kCPU};
  torch::ScalarType dtype = torch::kFloat32;
  bool cuda = false;
  SyncCounts* syncs = nullptr;
  int* metadata_builds = nullptr;
  Ranges* ranges = nullptr;
  // MoE "device": "grouped" or "padded" (resolve_moe_expert_gemm; "" when the step has no
  // MoE device variant, which moe.cpp treats as padded); moe.cpp falls back to "padded" for
  // good if at::_grouped_mm refuses its inputs.
  std::string moe_expert_gemm;
  torch::TensorOptions opts() const { return torch::TensorOptions().device(device).dtype(dtype); }
};

// A timing-free CUDA event on the step's stream (the legacy default stream LibTorch queues
// on), for a hook that stages values behind one. On CPU (cuda false) every call is a no-op:
// work there completes in order. Needs a CUDA build of syncscope when cuda is true (Error).
class StepEvent {
 public:
  explicit StepEvent(bool cuda);
  ~StepEvent();
  StepEvent(const StepEvent&) = delete;
  StepEvent& operator=(const StepEvent&) = delete;
  void record();  // cudaEventRecord on the main stream
  // cudaEventSynchronize: a host wait (a host sync, counted by the caller); returns at once
  // when the event was never recorded or its work is done.
  void synchronize();

 private:
  void* event_ = nullptr;
};

}  // namespace syncscope::kernels::detail

namespace syncscope::fixes {

// What a fix's torch_step_point hook sees of one ReferenceStep::run() (declared opaque in
// fix_spec.hpp). Valid for the duration of the call.
struct TorchStepContext {
  const program::StepOptions& options;
  // What trains (AdamW's parameters), by name, in network_parameters() order; at
  // BeforeOptimizer their gradients are the step's (a hook may change them in place: clipping).
  const std::vector<std::pair<std::string, torch::Tensor>>& parameters;
  const torch::Tensor& loss;  // this step's loss, 0-d, in the compute dtype on the device
  // The step's host-sync bookkeeping: a hook adds each host read it makes that would
  // synchronize on CUDA (.item(), cudaEventSynchronize) to syncs.fixes, on CPU as well.
  kernels::SyncCounts& syncs;
  kernels::detail::Ranges& ranges;      // NVTX ranges: open one with kernels::detail::RangeGuard
  const kernels::detail::Ctx& device;   // device, compute dtype, cuda
  int step = 0;                         // this run()'s index, from 0 across the ReferenceStep's life
  std::map<Fix, std::any>& fix_states;  // each fix's state, kept across steps (empty at first)
  // Set by a hook that reads the loss itself (the step program's take_loss_read()): the step
  // then makes no read of its own and reports `loss_read` as StepResult::loss (NaN when the
  // hook read none this step).
  bool loss_read_taken = false;
  std::optional<double> loss_read;

  std::any& state(Fix fix) { return fix_states[fix]; }
};

}  // namespace syncscope::fixes
