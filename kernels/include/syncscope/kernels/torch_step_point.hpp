// The LibTorch step as a fix's hooks see it (fix_spec.hpp: torch_step_point,
// torch_layer_point, torch_step_setup): the definitions of the registry's opaque
// fixes::TorchStepContext, TorchLayerContext and TorchStepSetup, and the pieces of the
// step a hook works with: its NVTX ranges, its device context, the packed batch, a layer's
// expert weights, counted host reads and a CUDA event on its stream.
// ReferenceStep (step.hpp) calls every registered fix's hooks in registry order at the points
// the step program calls build_program_layer (program_layer.hpp): inside each layer at
// BeforeAttention (the attention mask: fixes/packing) and ExpertDispatch (routing and the
// experts: fixes/moe_routing), once per step at BeforeOptimizer and AfterOptimizer
// (fixes/logging), and once when a ReferenceStep is built for what a fix resolves from the
// device and the layer schedule (fixes/offload), as the program calls build_program_schedule. A fix's hook here runs
// the operations its program hook describes.
//
// Includes <torch/torch.h>: only code built with LibTorch includes this header (the torch
// layer, kernels/src/torch, and a fix folder's LibTorch library, syncscope_fix_<name>_torch).
// The public step.hpp stays torch-free.
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <any>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_options.hpp"

// at::_grouped_mm (bf16 grouped GEMM with group ends read from device memory) and its
// autograd formulas exist from LibTorch 2.8 on. -DSYNCSCOPE_ENABLE_GROUPED_MM=OFF leaves it out
// (SYNCSCOPE_NO_GROUPED_MM, a public definition of syncscope_kernels).
#if !defined(SYNCSCOPE_NO_GROUPED_MM) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8))
#define SYNCSCOPE_HAVE_GROUPED_MM 1
#endif

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
  // What a fix resolved for its variant on this device, by fix: its torch_step_setup sets
  // its entry and its layer hooks read it (and may change it for good: MoE routing's
  // "device" sets "grouped" or "padded" and falls back to "padded" when at::_grouped_mm
  // refuses its inputs). The step reports the map as StepResult::fix_choices.
  std::map<fixes::Fix, std::string> fix_choices;
  torch::TensorOptions opts() const { return torch::TensorOptions().device(device).dtype(dtype); }
};

// The packed batch as uploaded for one step.
struct PackedBatch {
  std::vector<std::int32_t> host_lengths;         // known to the packer before upload
  torch::Tensor input_ids, labels, position_ids;  // [T] int64, device
  torch::Tensor seq_lengths;                      // [N] int32, device
  std::uint64_t generation = 0;                   // identity of this upload (a cache's key)
  int total = 0;
};

// Expert weights of one MoE layer: gate/up [E, H, I], down [E, I, H].
struct ExpertWeights {
  torch::Tensor gate, up, down;
};

// Host reads, counted where they would synchronize on CUDA. `counter` is where the caller
// counts them (a fix's SyncCounts::by_fix entry). Each performs exactly what ATen's ops do
// (the tensor is read back).
std::int64_t read_item_int(const torch::Tensor& t, int& counter);
std::vector<std::int64_t> read_list_int(const torch::Tensor& t, int& counter);

// Throws CudaError when rc != 0 (cudaSuccess).
void check_cuda(int rc, const char* what);

// Free device memory in bytes (cudaMemGetInfo) where the step runs on CUDA; nullopt on CPU.
std::optional<double> device_free_bytes(const Ctx& ctx);

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
  // synchronize on CUDA (.item(), cudaEventSynchronize) to syncs.by_fix[its fix], on CPU as well.
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

// What a fix's torch_layer_point hook sees inside one layer's forward (and its checkpoint
// recompute) of ReferenceStep::run() (declared opaque in fix_spec.hpp). Valid for the duration
// of the call. Hooks run in registry order; a later one sees what an earlier one set.
struct TorchLayerContext {
  const program::StepOptions& options;
  int layer = 0;
  // Device, compute dtype, cuda, and the step's bookkeeping: syncs (a hook adds each host read
  // to syncs->by_fix[its fix]), metadata_builds, ranges.
  kernels::detail::Ctx& device;
  const kernels::detail::PackedBatch& batch;
  std::map<Fix, std::any>& fix_states;  // each fix's state, kept across layers and steps

  // BeforeAttention. In: the layer's sliding window (0: full causal). Out: the additive
  // attention mask [1, 1, T, T] in the compute dtype, which the layer's attention reads; the
  // step throws when no hook sets it (a packed batch needs one).
  int attention_window = 0;
  torch::Tensor attention_mask;

  // ExpertDispatch (MoE layers only). In: the block's normed input x [T, H] (compute dtype),
  // the router's top-k expert ids [T, k] int64 and routing weights [T, k] fp32, the layer's
  // expert weights. Out: the weighted sum of the experts' outputs, fp32 [T, H]; the step
  // throws when no hook sets it.
  const torch::Tensor* moe_input = nullptr;
  const torch::Tensor* expert_ids = nullptr;
  const torch::Tensor* routing_weights = nullptr;
  const kernels::detail::ExpertWeights* experts = nullptr;
  torch::Tensor expert_output;

  std::any& state(Fix fix) { return fix_states[fix]; }
};

// What a fix's torch_step_setup hook sees when a ReferenceStep is built (declared opaque in
// fix_spec.hpp), called for every fix in registry order. A hook may resolve what it needs
// from the device into the step options (ReferenceStep::options() reports them: offload's
// budget read from free memory, double buffering falling back to single without room for
// the second buffer) or the device context (MoE "device"'s expert GEMM), and a fix that
// reorders the step's layers sets `schedule`, as the step program's build_program_schedule
// gives the program's (offload's reload choreography); the first that sets it wins, and
// without one the layers run the plain schedule.
struct TorchStepSetup {
  program::StepOptions& options;
  int layers = 0;
  kernels::detail::Ctx& device;
  std::optional<program::Choreography> schedule;  // the layer loop of every step
  // the first run()'s when it differs (Unsloth's first pass offloads every layer)
  std::optional<program::Choreography> first_step;
};

}  // namespace syncscope::fixes
