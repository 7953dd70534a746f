// The LibTorch reference training step: a decoder stack with the real shapes of a
// ModelShape (random seeded weights, no downloads), a packed batch, forward + backward +
// AdamW, with each fix's variant plugged in by its LibTorch hooks (torch_step_point.hpp; the
// fixes' folders install them: fixes::register_shipped_torch_steps(), which whoever builds a
// ReferenceStep calls first). Torch-free header (pimpl) so the CLI links it without torch
// headers; built only with LibTorch.
//
// What one run() does, in host order (the step program, build_step_program, lists the
// same ops): upload the packed batch (pinned, non_blocking: a new batch object, so caches
// keyed on it miss once per step, as in training), embedding, RoPE tables, the layer loop of
// the schedule a fix gives (offload's reload choreography; else plain autograd split per
// layer so each layer gets its own NVTX range), with the fixes' hooks inside each layer
// (the attention mask: fixes/packing; routing and the experts: fixes/moe_routing), final norm
// + LM head + cross-entropy, backward, the fixes' hooks before and after AdamW (fixes/logging:
// "clip_grad_norm_" before it, "logging" after it, whose reads replace the loss read), and
// one host read of the loss. NVTX ranges: "step", "forward", "backward", "optimizer",
// "layer_%02d" (forward and backward), "offload_reload" (the schedule's copies and waits) and
// the fixes' own ("packing_metadata", "moe_routing", ...).
//
// Numerics: fp32 on CPU by default, bf16 on CUDA. Across packing and offload variants the
// arithmetic is the same sequence of operations on the same values, so on CPU losses and
// gradients are bitwise identical; MoE "device" uses other GEMM shapes (capacity-padded
// bmm, or grouped GEMMs on a GPU), so it agrees within rounding (see moe tolerances in the
// tests).
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::kernels {

// Host reads this step made that synchronize the host with the GPU on CUDA (.item(),
// .tolist(), nonzero, bincount's min/max reads), by where they come from. Counted the same
// on CPU, where they do not block, so the counts are testable anywhere.
struct SyncCounts {
  // A registered fix's LibTorch hooks (torch_step_point.hpp): packing's metadata and mask,
  // MoE routing, logging's reads of the loss and the gradient norm; absent: none.
  std::map<fixes::Fix, int> by_fix;
  int other = 0;  // the loss read at the end of the step
  int of(fixes::Fix fix) const {
    const auto it = by_fix.find(fix);
    return it == by_fix.end() ? 0 : it->second;
  }
  int total() const {
    int n = other;
    for (const auto& [fix, count] : by_fix) n += count;
    return n;
  }
};

struct StepResult {
  // Mean cross-entropy over labelled tokens as the step read it back: its own loss, or,
  // when a fix's hook took the read (TorchStepContext::loss_read_taken), what that hook read
  // (fixes/logging: `every` the window's mean on its last step, `deferred` the step before's);
  // NaN on a step that read no loss.
  double loss = 0;
  SyncCounts host_syncs;
  int metadata_builds = 0;          // a fix's metadata constructions this step (packing's metadata and masks)
  std::vector<std::string> ranges;  // NVTX ranges opened, in order (when record_ranges)
  // What each fix's device variant resolved on this machine and ran this step, by fix, as
  // its LibTorch hooks set it in the device context (detail::Ctx::fix_choices; MoE routing's
  // "device": which expert GEMM, "grouped" or "padded"); absent: the fix had nothing to resolve.
  std::map<fixes::Fix, std::string> fix_choices;
  std::string choice(fixes::Fix fix) const {
    const auto it = fix_choices.find(fix);
    return it == fix_choices.end() ? std::string() : it->second;
  }
};

struct NamedValues {
  std::string name;
  std::vector<float> values;  // converted to fp32 on the host
};

class ReferenceStep {
 public:
  // Validates the options (InputError), builds the weights from options.seed and uploads
  // batch 0. device "cuda" needs a CUDA build of LibTorch and a device (Error otherwise).
  explicit ReferenceStep(const program::StepOptions& options);
  ~ReferenceStep();
  ReferenceStep(ReferenceStep&&) noexcept;
  ReferenceStep& operator=(ReferenceStep&&) noexcept;
  ReferenceStep(const ReferenceStep&) = delete;
  ReferenceStep& operator=(const ReferenceStep&) = delete;

  // One full training step. Returns after the loss has been read back (a host sync).
  StepResult run();
  // Replace the packed batch (new lengths and tokens): cached metadata is invalidated.
  void next_batch();
  int batch_index() const;
  const std::vector<int>& lengths() const;  // the current batch's sequence lengths

  // The options as resolved: a fix's setup hook may resolve its settings from the device
  // (offload: a budget left to the device becomes free memory - kOffloadReserveBytes, 0 on
  // CPU), so build_step_program(options()) describes the plan this step runs.
  const program::StepOptions& options() const;
  // The offload plan in use (a default plan, no layer offloaded, when no fix scheduled the
  // layers).
  const program::LayerPlan& layer_plan() const;
  // Record NVTX range names into StepResult::ranges (tests); off by default.
  void record_ranges(bool on);
  // Wait for all queued device work (cudaDeviceSynchronize); a no-op on CPU.
  void synchronize();

  // After run(): parameter gradients and parameters (AdamW already applied), by name.
  std::vector<NamedValues> gradients() const;
  std::vector<NamedValues> parameters() const;
  // Overwrites every parameter with `values` (same names, order and sizes as parameters()),
  // e.g. to run the CPU and the CUDA step from identical weights: the seeded generators of
  // the two devices differ. InputError on a mismatch.
  void set_parameters(const std::vector<NamedValues>& values);
  // A fix's state kept across steps by its LibTorch hooks (TorchStepContext::state,
  // TorchLayerContext::state; fixes/packing's metadata cache); nullptr when it has none. The
  // fix's folder reads it (fixes::packing::cached_cu_seqlens).
  const std::any* fix_state(fixes::Fix fix) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when LibTorch was built with CUDA and a device is present.
bool cuda_available();
// "1.13.0", "2.11.0", ...
std::string torch_version();

}  // namespace syncscope::kernels
