// The packing fix in the LibTorch reference step (syncscope_fix_packing_torch, built only with
// LibTorch; includes torch): its hook at each layer's BeforeAttention builds the attention
// mask of the packed batch the way the variant does, and the metadata class it keeps across
// layers and steps, for the tests and the kernel benchmark to drive directly.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/kernels/torch_step_point.hpp"

namespace syncscope::fixes::packing {

// Packing metadata per variant: "rebuild" (Unsloth's baseline, every call), "cached"
// (keyed like Unsloth's caches: the metadata once per batch, on the batch's identity like
// its `is` check; the mask in one entry per (dtype, window), so alternating windows rebuild
// it), "device" (no host read: our kernel on CUDA, the CPU reference on CPU; one mask per
// window per batch). Host reads are counted in ctx.syncs->by_fix[kFix], builds in
// ctx.metadata_builds.
class PackingMetadata {
 public:
  explicit PackingMetadata(Variant variant) : variant_(variant) {}
  // The additive mask [1, 1, T, T] in ctx.dtype for `window` (0: full causal).
  torch::Tensor mask(const kernels::detail::PackedBatch& batch, int window, kernels::detail::Ctx& ctx);
  // cu_seqlens as last built (the cache's for cached/device), on the host.
  std::vector<std::int32_t> cu_seqlens() const;
  std::int64_t max_seqlen() const { return max_seqlen_; }
  Variant variant() const { return variant_; }

 private:
  torch::Tensor unsloth_mask(const kernels::detail::PackedBatch& batch, int window, kernels::detail::Ctx& ctx);
  void unsloth_metadata(const kernels::detail::PackedBatch& batch, kernels::detail::Ctx& ctx);
  torch::Tensor device_mask(const kernels::detail::PackedBatch& batch, int window, kernels::detail::Ctx& ctx);
  int& reads(kernels::detail::Ctx& ctx) const;

  Variant variant_;
  std::uint64_t generation_ = 0;  // batch the cache holds; 0: none
  torch::Tensor cu_seqlens_;
  std::int64_t max_seqlen_ = 0;
  std::map<int, torch::Tensor> masks_;  // "device": by sliding window
  torch::Tensor cached_mask_;           // "cached": Unsloth's single (dtype, window) entry
  int cached_window_ = -1;
};

// The cu_seqlens the step's packing cache holds after its last run() (empty when nothing is
// cached or the step has not run).
std::vector<std::int32_t> cached_cu_seqlens(const kernels::ReferenceStep& step);

}  // namespace syncscope::fixes::packing
