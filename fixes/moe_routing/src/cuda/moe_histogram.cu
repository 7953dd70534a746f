// Expert counts and offsets for the "device" MoE routing variant, without a host read:
// torch.bincount reads min and max back to the host on CUDA (SummaryOps.cu), this does not.
// One block: n = T*top_k is a few thousand ids, E at most a few hundred experts.
#include <cuda_runtime.h>

#include "syncscope/fixes/moe_routing/moe_histogram.h"

namespace {

constexpr int kThreads = 1024;
constexpr int kMaxExperts = 8192;

__global__ void moe_histogram_kernel(const int64_t* __restrict__ ids, int64_t n, int num_experts,
                                     int64_t* __restrict__ counts, int64_t* __restrict__ offsets) {
  extern __shared__ unsigned int bins[];
  for (int e = threadIdx.x; e < num_experts; e += blockDim.x) bins[e] = 0u;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t e = ids[i];
    if (e >= 0 && e < num_experts) atomicAdd(&bins[e], 1u);
  }
  __syncthreads();
  for (int e = threadIdx.x; e < num_experts; e += blockDim.x) counts[e] = static_cast<int64_t>(bins[e]);
  if (threadIdx.x == 0) {
    int64_t run = 0;
    for (int e = 0; e < num_experts; ++e) {
      offsets[e] = run;
      run += bins[e];
    }
    offsets[num_experts] = run;
  }
}

}  // namespace

extern "C" int ss_moe_histogram(const int64_t* expert_ids, int64_t n, int num_experts, int64_t* counts,
                                int64_t* offsets, void* stream) {
  if (n < 0 || num_experts <= 0 || num_experts > kMaxExperts || !counts || !offsets || (n > 0 && !expert_ids))
    return static_cast<int>(cudaErrorInvalidValue);
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
  const size_t shared = static_cast<size_t>(num_experts) * sizeof(unsigned int);
  moe_histogram_kernel<<<1, kThreads, shared, s>>>(expert_ids, n, num_experts, counts, offsets);
  return static_cast<int>(cudaGetLastError());
}
