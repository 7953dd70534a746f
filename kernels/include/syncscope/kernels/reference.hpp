// CPU references for the fixes' device-side computations: the packed-sequence metadata
// (what the CUDA kernel in kernels/src/cuda builds), the MoE routing bookkeeping (counts,
// offsets and the stable expert order the sorted and device variants rely on) and the
// capacity layout of the device variant. Plain C++, no torch: the CUDA kernels' tests and
// the LibTorch CPU path both use these. Throws InputError on inconsistent inputs.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace syncscope::kernels {

struct PackedMetadata {
  std::vector<std::int32_t> cu_seqlens;  // N+1 prefix sums of the lengths, starting at 0
  std::vector<std::int64_t> positions;   // T: position within its own sequence (RoPE)
  std::int32_t max_seqlen = 0;
  std::int32_t total = 0;                // T
};

// Lengths must be positive and sum to a positive total.
PackedMetadata packed_metadata(const std::vector<std::int32_t>& lengths);

// Additive block-diagonal causal mask [T*T], row-major: 0 where token i may attend to j
// (same sequence, j <= i, and i - j < window when window > 0), -infinity elsewhere. This
// is the mask Unsloth's build_sdpa_packed_attention_mask builds for SDPA.
std::vector<float> packed_causal_mask(const std::vector<std::int32_t>& lengths, int sliding_window = 0);
inline bool mask_allows(float v) { return v == 0.0f; }

struct MoeRouting {
  std::vector<std::int64_t> counts;   // E: tokens routed to each expert (slots counted)
  std::vector<std::int64_t> offsets;  // E+1: exclusive prefix sums of counts
  std::vector<std::int64_t> order;    // T*k: flat (token*k + slot) indices, stably sorted by expert
};

// `expert_ids` is the flat [T*k] top-k expert index array (row-major over tokens);
// each id must lie in [0, num_experts).
MoeRouting moe_routing(const std::vector<std::int64_t>& expert_ids, int num_experts);

// Destination row of each flat entry in the device variant's capacity-padded layout
// [E, capacity, H]: expert * capacity + rank of the entry among its expert's entries in
// flat order. capacity must be >= the largest count (capacity = T always is).
std::vector<std::int64_t> moe_capacity_rows(const std::vector<std::int64_t>& expert_ids, int num_experts,
                                            std::int64_t capacity);

}  // namespace syncscope::kernels
