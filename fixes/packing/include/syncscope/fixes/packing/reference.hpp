// The packing fix's CPU reference: the packed-sequence metadata and the packed causal mask,
// what its CUDA kernel (src/cuda/packing_mask.cu) and its LibTorch code on the CPU
// (src/torch_step.cpp) build. Plain C++, no torch. Throws InputError on inconsistent inputs.
#pragma once

#include <cstdint>
#include <vector>

namespace syncscope::fixes::packing {

struct PackedMetadata {
  std::vector<std::int32_t> cu_seqlens;  // N+1 prefix sums of the lengths, starting at 0
  std::vector<std::int64_t> positions;   // T: position within its own sequence (RoPE)
  std::int32_t max_seqlen = 0;
  std::int32_t total = 0;  // T
};

// Lengths must be positive and sum to a positive total.
PackedMetadata packed_metadata(const std::vector<std::int32_t>& lengths);

// Additive block-diagonal causal mask [T*T], row-major: 0 where token i may attend to j
// (same sequence, j <= i, and i - j < window when window > 0), -infinity elsewhere. This
// is the mask Unsloth's build_sdpa_packed_attention_mask builds for SDPA.
std::vector<float> packed_causal_mask(const std::vector<std::int32_t>& lengths, int sliding_window = 0);
inline bool mask_allows(float v) { return v == 0.0f; }

}  // namespace syncscope::fixes::packing
