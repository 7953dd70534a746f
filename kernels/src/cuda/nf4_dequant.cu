// NF4 dequantization for the qlora training mode: bitsandbytes' storage (two 4-bit codes per
// byte, the first value in the high nibble; an fp32 absmax per block of 64 values) turned
// back into the compute dtype before each GEMM that reads a frozen base weight (forward,
// recompute and the backward's input gradient, as bitsandbytes' MatMul4Bit does).
//
// Numbered variants in the llm.c dev/cuda style: each is validated against the CPU reference
// (kernels/reference.hpp nf4_dequantize) by tests/kernels before bench/kernels times it.
//   1  one thread per output value: reads its byte, picks its nibble (the obvious kernel)
//   2  one thread per byte: both values of the byte, one 2-value store
//   3  one thread per 8 bytes (a 64-bit load): 16 values, the code table in registers and
//      the block's absmax read once (8 bytes never straddle a block of 64 values)
// Double quantization is undone first by ss_nf4_absmax (one thread per block).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/cuda_api.h"
#include "cuda/from_float.cuh"
#include "syncscope/program/nf4_table.hpp"

namespace {

using syncscope::cuda_detail::from_float;

constexpr int kThreads = 256;
constexpr int kBlock = 64;  // values per absmax

// The codebook in constant memory, initialized at compile time from the one table the CPU
// reference also uses (nf4_table.hpp): no second copy of the values to drift.
__constant__ syncscope::program::Nf4Codebook kNf4 = syncscope::program::kNf4Codebook;

template <typename T>
__global__ void nf4_kernel1(const uint8_t* __restrict__ codes, const float* __restrict__ absmax, int64_t n,
                            T* __restrict__ out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint8_t byte = codes[i >> 1];
  const int c = (i & 1) ? (byte & 0x0F) : (byte >> 4);
  out[i] = from_float<T>(kNf4.values[c] * absmax[i / kBlock]);
}

template <typename T>
__global__ void nf4_kernel2(const uint8_t* __restrict__ codes, const float* __restrict__ absmax, int64_t n,
                            T* __restrict__ out) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t i = 2 * b;
  if (i >= n) return;
  const uint8_t byte = codes[b];
  const float m = absmax[i / kBlock];
  out[i] = from_float<T>(kNf4.values[byte >> 4] * m);
  if (i + 1 < n) out[i + 1] = from_float<T>(kNf4.values[byte & 0x0F] * m);
}

template <typename T>
__global__ void nf4_kernel3(const uint8_t* __restrict__ codes, const float* __restrict__ absmax, int64_t n,
                            T* __restrict__ out) {
  float table[16];
#pragma unroll
  for (int k = 0; k < 16; ++k) table[k] = kNf4.values[k];
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // group of 8 bytes
  const int64_t first = 16 * g;
  if (first >= n) return;
  const float m = absmax[first / kBlock];
  if (first + 16 <= n) {
    // 16 values = 8 bytes, 8-byte aligned (the code buffer comes from cudaMalloc).
    const uint2 w = reinterpret_cast<const uint2*>(codes)[g];
    const uint32_t words[2] = {w.x, w.y};
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const uint32_t byte = (words[k / 4] >> (8 * (k % 4))) & 0xFFu;
      out[first + 2 * k] = from_float<T>(table[byte >> 4] * m);
      out[first + 2 * k + 1] = from_float<T>(table[byte & 0x0F] * m);
    }
    return;
  }
  for (int64_t i = first; i < n; ++i) {  // the tail
    const uint8_t byte = codes[i >> 1];
    out[i] = from_float<T>(table[(i & 1) ? (byte & 0x0F) : (byte >> 4)] * m);
  }
}

__global__ void absmax_kernel(const uint8_t* __restrict__ qabsmax, const float* __restrict__ map,
                              const float* __restrict__ absmax2, float offset, int64_t nblocks,
                              float* __restrict__ absmax) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b < nblocks) absmax[b] = map[qabsmax[b]] * absmax2[b / 256] + offset;
}

template <typename T>
int launch(int variant, const uint8_t* codes, const float* absmax, int64_t n, T* out, cudaStream_t s) {
  const int64_t items = variant == 1 ? n : variant == 2 ? (n + 1) / 2 : (n + 15) / 16;
  const int64_t grid = (items + kThreads - 1) / kThreads;
  if (grid > 0x7FFFFFFF) return static_cast<int>(cudaErrorInvalidValue);
  if (grid == 0) return 0;
  const auto g = static_cast<unsigned>(grid);
  switch (variant) {
    case 1: nf4_kernel1<T><<<g, kThreads, 0, s>>>(codes, absmax, n, out); break;
    case 2: nf4_kernel2<T><<<g, kThreads, 0, s>>>(codes, absmax, n, out); break;
    case 3: nf4_kernel3<T><<<g, kThreads, 0, s>>>(codes, absmax, n, out); break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

extern "C" int ss_nf4_absmax(const uint8_t* absmax_codes, const float* code_map, const float* absmax2, float offset,
                             int64_t nblocks, float* absmax, void* stream) {
  if (nblocks < 0 || (nblocks > 0 && (!absmax_codes || !code_map || !absmax2 || !absmax)))
    return static_cast<int>(cudaErrorInvalidValue);
  if (nblocks == 0) return 0;
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
  const int64_t grid = (nblocks + kThreads - 1) / kThreads;
  absmax_kernel<<<static_cast<unsigned>(grid), kThreads, 0, s>>>(absmax_codes, code_map, absmax2, offset, nblocks,
                                                                 absmax);
  return static_cast<int>(cudaGetLastError());
}

extern "C" int ss_nf4_dequantize(const uint8_t* codes, const float* absmax, int64_t numel, void* out, int out_dtype,
                                 int variant, void* stream) {
  if (numel < 0 || variant < 1 || variant > SS_NF4_VARIANTS || (numel > 0 && (!codes || !absmax || !out)))
    return static_cast<int>(cudaErrorInvalidValue);
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
  switch (out_dtype) {
    case SS_DTYPE_F32: return launch(variant, codes, absmax, numel, static_cast<float*>(out), s);
    case SS_DTYPE_BF16: return launch(variant, codes, absmax, numel, static_cast<__nv_bfloat16*>(out), s);
    case SS_DTYPE_F16: return launch(variant, codes, absmax, numel, static_cast<__half*>(out), s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}
