// CPU references for the fixes' device-side computations: the packed-sequence metadata
// (what the CUDA kernel in kernels/src/cuda builds), the MoE routing bookkeeping (counts,
// offsets and the stable expert order the sorted and device variants rely on) and the
// capacity layout of the device variant. Plain C++, no torch: the CUDA kernels' tests and
// the LibTorch CPU path both use these. Throws InputError on inconsistent inputs.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "syncscope/program/nf4_table.hpp"

namespace syncscope::program {

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

// ---- NF4 (QLoRA's 4-bit NormalFloat, bitsandbytes' storage) ---------------------------
// The 16 code values: kNf4Values, from nf4_table.hpp (one table for CPU and CUDA code).
inline constexpr int kNf4BlockSize = 64;         // values per absmax (bitsandbytes' QLoRA default)
inline constexpr int kNf4AbsmaxBlockSize = 256;  // absmax values per second-level absmax (double quant)

// A weight as bitsandbytes stores it for QLoRA (quantize_4bit, quant_type "nf4", blocksize
// 64): two codes per byte, the first value in the high nibble; per block of 64 values an
// fp32 absmax. With double quantization (compress_statistics) the absmax values, minus their
// mean (`offset`), are 8-bit quantized with the signed dynamic map in blocks of 256
// (`absmax_codes`, `absmax2`).
struct Nf4Tensor {
  std::int64_t numel = 0;
  std::vector<std::uint8_t> codes;  // ceil(numel/2)
  bool double_quant = false;
  std::vector<float> absmax;               // ceil(numel/64) (empty with double_quant)
  std::vector<std::uint8_t> absmax_codes;  // ceil(numel/64) (double_quant)
  std::vector<float> absmax2;              // ceil(blocks/256) (double_quant)
  float offset = 0;                        // mean absmax (double_quant)
};

// bitsandbytes' create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8): 256
// sorted values in [-1, 1].
std::vector<float> dynamic_map_signed();
// Nearest-value quantization (bitsandbytes' decision tree compares with the midpoints).
Nf4Tensor nf4_quantize(const std::vector<float>& values, bool double_quant);
// Per-block absmax as the dequantization uses it (after undoing the double quantization).
std::vector<float> nf4_block_absmax(const Nf4Tensor& t);
std::vector<float> nf4_dequantize(const Nf4Tensor& t);

}  // namespace syncscope::program
