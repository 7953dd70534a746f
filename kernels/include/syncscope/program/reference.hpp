// CPU references for the step's own device-side computations: NF4 quantization and
// dequantization (QLoRA's storage, what kernels/src/cuda's NF4 kernels compute). Plain C++, no
// torch: the CUDA kernels' tests and the LibTorch CPU path both use these. The fixes' CPU
// references live in their folders (fixes/<name>/include/syncscope/fixes/<name>/reference.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "syncscope/program/nf4_table.hpp"

namespace syncscope::program {

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
