// The MoE "device" variant's grouped GEMM with a fallback that covers the backward too
// (grouped_gemm.cpp). Only where LibTorch has at::_grouped_mm (SYNCSCOPE_HAVE_GROUPED_MM,
// internal.hpp).
#pragma once

#include "torch/internal.hpp"

#ifdef SYNCSCOPE_HAVE_GROUPED_MM
namespace syncscope::kernels::detail {

// at::_grouped_mm(a [N, K], b [E, K, M], offs = int32 group ends [E]) whose backward forms
// the gradients from a contiguous gradient and, if the grouped kernels refuse, from the
// capacity-padded layout with `capacity` rows per group (no host read; counted).
torch::Tensor grouped_mm(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& offs,
                         std::int64_t capacity);
// The same product through the capacity-padded layout (bmm), differentiable by autograd.
torch::Tensor grouped_mm_padded(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& offs,
                                std::int64_t capacity);
// Backward passes that took the padded fallback, since the process started.
std::uint64_t grouped_mm_backward_fallbacks();
// Tests: make every backward take the fallback.
void force_grouped_mm_backward_fallback(bool on);

}  // namespace syncscope::kernels::detail
#endif
