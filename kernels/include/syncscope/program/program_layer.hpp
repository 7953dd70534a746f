// What a fix's program hooks (FixSpec::build_program_layer and build_program_schedule,
// fix_spec.hpp) see of the step-program builder: the points of a layer where a fix adds its
// operators, the primitives it emits them with, and the step schedule a fix may replace.
// The shipped fixes' hooks are in kernels/src/program/fix_*_program.cpp; a fix registered
// elsewhere (tests/pipeline/test_fix_registry.cpp) uses the same interface. Torch-free.
#pragma once

#include <any>
#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::program {

// Where in each layer's forward (and its checkpoint recompute) the builder calls every
// registered fix's build_program_layer, in registry order. A hook emits nothing at the
// points it does not handle.
enum class ProgramPoint : std::uint8_t {
  // After RoPE and the grouped-query expansion, before the attention kernel: the packed
  // sequences' metadata (cu_seqlens, max_seqlen, the mask) the attention reads.
  BeforeAttention,
  // MoE layers only, after the router's top-k and softmax: routing the T*k (token, expert)
  // pairs and running the experts, leaving the weighted sum in the block's output.
  ExpertDispatch,
  // Once per step (layer() is -1), after backward and before the optimizer's kernels: where
  // a trainer clips the gradients (clip_grad_norm_).
  BeforeOptimizer,
  // Once per step (layer() is -1), after the optimizer's kernels and before the step's loss
  // read: where a trainer logs the loss and the gradient norm (fixes/logging). A hook that
  // reads the loss itself calls take_loss_read(), and the builder then emits no read of its own.
  AfterOptimizer,
};

// The builder as a fix's layer hook drives it. Every emitted operator belongs to the
// current layer and, in the forward pass, is remembered for the layer's backward.
class ProgramLayerBuilder {
 public:
  virtual ~ProgramLayerBuilder() = default;

  virtual const StepOptions& options() const = 0;
  virtual int layer() const = 0;                        // the layer being built
  virtual int tokens() const = 0;                       // T: packed tokens of the batch
  virtual const std::vector<int>& lengths() const = 0;  // the packed sequences' lengths
  virtual int element_bytes() const = 0;                // bytes of one element of the compute dtype
  // State a fix keeps for the whole step (a cache that spans layers and the recompute),
  // empty on first use; the hook stores its own type in it.
  virtual std::any& fix_state(fixes::Fix fix) = 0;

  virtual void push_range(const std::string& name) = 0;  // an NVTX range on the host
  virtual void pop_range() = 0;
  // An elementwise kernel autograd differentiates: `elems` elements of `bytes_per` bytes
  // read and written once.
  virtual program::Op& elementwise(const std::string& name, double elems, double bytes_per) = 0;
  // A kernel autograd does not differentiate (metadata, routing indices): `elems`
  // operations, `bytes` bytes moved.
  virtual program::Op& bookkeeping(const std::string& name, double elems, double bytes) = 0;
  // A GEMM [m, k] x [k, n] against a weight (frozen under lora/qlora).
  virtual program::Op& gemm(const std::string& name, double m, double n, double k) = 0;
  // A host read as ATen does it on CUDA: D2H into pageable memory, then
  // cudaStreamSynchronize (the host sync a fix removes). Returns the D2H copy (valid until
  // the next operator is emitted).
  virtual program::Op& host_read(const std::string& aten_op, double bytes) = 0;
  // A host-to-device copy from pageable memory on the main stream (a CPU tensor's
  // `.to(device, non_blocking=True)`: staged by the driver, no host sync).
  virtual program::Op& host_to_device(const std::string& name, double bytes) = 0;
  // One expert's feed-forward over `rows` rows as the model computes it (SwiGLU; gpt-oss's
  // clamped form when the options ask for it).
  virtual void expert(const std::string& prefix, double rows) = 0;
  // A non-blocking device-to-host copy into pinned memory on the main stream (no host sync).
  virtual program::Op& device_to_pinned(const std::string& name, double bytes) = 0;
  // A new event (its index) named `name`; its record on the main stream; a host wait on it
  // (cudaEventSynchronize: returns at once when the event was never recorded).
  virtual int new_event(const std::string& name) = 0;
  virtual void record_event(int event) = 0;
  virtual void event_sync(int event) = 0;
  // Operators emitted from now on are issued once every `steps` steps (Op::period); 1 again
  // to go back to every step.
  virtual void set_issue_period(int steps) = 0;
  // The step's own loss read (aten::item on the loss after the optimizer) is this hook's.
  virtual void take_loss_read() = 0;
};

// The step's layer loop as a fix schedules it (FixSpec::build_program_schedule): its
// choreography (layer_schedule.hpp) and one name per event it records. A schedule from a
// hook adds the copy stream, checkpoints every layer and recomputes it in backward.
struct ProgramSchedule {
  Choreography choreography;
  std::vector<std::string> event_names;
};

}  // namespace syncscope::program
