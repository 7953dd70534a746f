// The packed-sequence metadata kernel of the "device" packing variant: cu_seqlens and the
// additive block-diagonal causal SDPA mask in one launch, from lengths already in device
// memory (uploaded by the packer, pinned and non_blocking). No host read: the host knows
// the lengths (and max_seqlen) before upload. C++17, plain C interface (packing_mask.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>

#include "cuda/cuda_api.h"  // SS_DTYPE_*
#include "cuda/from_float.cuh"
#include "syncscope/fixes/packing/packing_mask.h"

namespace {

using syncscope::cuda_detail::from_float;

// One block per mask row i. Thread 0 finds where row i's sequence starts by walking the
// lengths (O(num_seqs), tiny next to the T-wide row write); block 0 also writes cu_seqlens.
template <typename T>
__global__ void packed_mask_kernel(const int32_t* __restrict__ lengths, int num_seqs, int total, int window,
                                   int32_t* __restrict__ cu_seqlens, T* __restrict__ mask) {
  const int i = blockIdx.x;
  __shared__ int start;
  if (threadIdx.x == 0) {
    int acc = 0;
    int s = -1;
    for (int n = 0; n < num_seqs; ++n) {
      const int len = lengths[n];
      if (i >= acc && i < acc + len) {
        s = acc;
        break;
      }
      acc += len;
    }
    start = s;  // -1: row past the packed tokens, fully masked
    if (i == 0) {
      int run = 0;
      cu_seqlens[0] = 0;
      for (int n = 0; n < num_seqs; ++n) {
        run += lengths[n];
        cu_seqlens[n + 1] = run;
      }
    }
  }
  __syncthreads();
  const T zero = from_float<T>(0.0f);
  const T neg_inf = from_float<T>(-INFINITY);
  T* row = mask + static_cast<size_t>(i) * static_cast<size_t>(total);
  for (int j = threadIdx.x; j < total; j += blockDim.x) {
    const bool allowed = start >= 0 && j >= start && j <= i && (window <= 0 || i - j < window);
    row[j] = allowed ? zero : neg_inf;
  }
}

template <typename T>
int launch(const int32_t* lengths, int num_seqs, int total, int window, int32_t* cu, void* mask, cudaStream_t s) {
  packed_mask_kernel<T><<<total, 256, 0, s>>>(lengths, num_seqs, total, window, cu, static_cast<T*>(mask));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

extern "C" int ss_packed_mask(const int32_t* lengths, int num_seqs, int total_tokens, int sliding_window,
                              int32_t* cu_seqlens, void* mask, int mask_dtype, void* stream) {
  if (num_seqs <= 0 || total_tokens <= 0 || sliding_window < 0 || !lengths || !cu_seqlens || !mask)
    return static_cast<int>(cudaErrorInvalidValue);
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
  switch (mask_dtype) {
    case SS_DTYPE_F32: return launch<float>(lengths, num_seqs, total_tokens, sliding_window, cu_seqlens, mask, s);
    case SS_DTYPE_BF16:
      return launch<__nv_bfloat16>(lengths, num_seqs, total_tokens, sliding_window, cu_seqlens, mask, s);
    case SS_DTYPE_F16: return launch<__half>(lengths, num_seqs, total_tokens, sliding_window, cu_seqlens, mask, s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}
