/* The MoE routing fix's CUDA kernel as a plain C interface (moe_histogram.cu): the LibTorch
 * hook (src/torch_step.cpp) and the device tests call it. Returns a cudaError_t value
 * (0 = cudaSuccess). */
#ifndef SYNCSCOPE_FIXES_MOE_ROUTING_CUDA_MOE_HISTOGRAM_H
#define SYNCSCOPE_FIXES_MOE_ROUTING_CUDA_MOE_HISTOGRAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One single-block kernel: counts[e] = #{i : expert_ids[i] == e} and offsets[0..E] their
 * exclusive prefix sums (offsets[E] = n), all int64 in device memory. Ids outside
 * [0, num_experts) are not counted. num_experts <= 8192. Ordered on `stream` (NULL: the
 * legacy default stream), no host synchronization. */
int ss_moe_histogram(const int64_t* expert_ids, int64_t n, int num_experts, int64_t* counts, int64_t* offsets,
                     void* stream);

#ifdef __cplusplus
}
#endif

#endif
