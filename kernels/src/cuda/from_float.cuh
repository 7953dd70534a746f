// from_float<T>: a float converted to the kernels' storage dtype (float, bf16, fp16) with
// CUDA's round-to-nearest-even intrinsics. Shared by the .cu files that write a dtype
// chosen at launch (packing_mask.cu, nf4_dequant.cu). C++17, device code only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace syncscope::cuda_detail {

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half(v);
}

}  // namespace syncscope::cuda_detail
