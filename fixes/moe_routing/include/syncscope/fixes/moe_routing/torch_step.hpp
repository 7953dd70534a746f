// The MoE routing fix in the LibTorch reference step (syncscope_fix_moe_routing_torch, built
// only with LibTorch; includes torch): its hook at each MoE layer's ExpertDispatch routes the
// (token, expert) pairs and runs the experts the way the variant does, and when the step is
// built resolves which expert GEMM "device" uses here; plus the pieces the tests, the kernel
// benchmark and the device probe drive directly.
#pragma once

#include <cstdint>
#include <utility>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/kernels/torch_step_point.hpp"

namespace syncscope::fixes::moe_routing {

// Routing + experts + weighted sum: x [T, H] (dtype), expert ids [T, k] int64, routing
// weights [T, k] fp32. Returns the fp32 [T, H] output. Variants: "loop" (one nonzero per
// expert), "sorted" (stable argsort + bincount + one tolist), "device" (no host read:
// counts/offsets on the device, then grouped GEMMs or capacity-padded bmm with C = T, as
// ctx.fix_choices[kFix] says, which torch_step_setup set from resolve_expert_gemm and a
// refused at::_grouped_mm turns to "padded" for good). Host reads are counted in ctx.syncs->by_fix[kFix].
torch::Tensor moe_experts(Variant variant, const torch::Tensor& x, const torch::Tensor& expert_ids,
                          const torch::Tensor& weights, const kernels::detail::ExpertWeights& w,
                          kernels::detail::Ctx& ctx);
// How MoE "device" will run its expert GEMMs with these options: "grouped" when
// expert_gemm(options) is "grouped" or "auto" and at::_grouped_mm's sync-free path is
// available (LibTorch >= 2.8, device "cuda" with compute capability >= 9.0, bf16, hidden and
// intermediate sizes multiples of 8), else "padded". `why` gets the reason grouped is not
// available ("" when it is). InputError when "grouped" is asked for and not available. The
// measured backend answers it for `run`'s model notes (FixSpec::torch_device_choice,
// asked through BackendTable::fix_device_choice).
std::string resolve_expert_gemm(const program::StepOptions& options, std::string* why = nullptr);
// Counts [E] and exclusive offsets [E+1] (int64) without a host read: our histogram kernel
// on CUDA, scatter_add_ + cumsum on CPU.
std::pair<torch::Tensor, torch::Tensor> expert_counts_offsets(const torch::Tensor& flat_ids, int num_experts,
                                                              kernels::detail::Ctx& ctx);

#ifdef SYNCSCOPE_HAVE_GROUPED_MM
// The "device" variant's grouped GEMM with a fallback that covers the backward too
// (src/torch_grouped_gemm.cpp). at::_grouped_mm(a [N, K], b [E, K, M], offs = int32 group ends
// [E]) whose backward forms the gradients from a contiguous gradient and, if the grouped
// kernels refuse, from the capacity-padded layout with `capacity` rows per group (no host
// read; counted).
torch::Tensor grouped_mm(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& offs,
                         std::int64_t capacity);
// The same product through the capacity-padded layout (bmm), differentiable by autograd.
torch::Tensor grouped_mm_padded(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& offs,
                                std::int64_t capacity);
// Backward passes that took the padded fallback, since the process started.
std::uint64_t grouped_mm_backward_fallbacks();
// Tests: make every backward take the fallback.
void force_grouped_mm_backward_fallback(bool on);
#endif

}  // namespace syncscope::fixes::moe_routing
