/* The packing fix's CUDA kernel as a plain C interface (packing_mask.cu), beside the step's
 * own (kernels/src/cuda/cuda_api.h: SS_DTYPE_*): the LibTorch hook (src/torch_step.cpp) and
 * the device tests call it. Returns a cudaError_t value (0 = cudaSuccess). */
#ifndef SYNCSCOPE_FIXES_PACKING_CUDA_PACKING_MASK_H
#define SYNCSCOPE_FIXES_PACKING_CUDA_PACKING_MASK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel: cu_seqlens[num_seqs+1] (int32 prefix sums of lengths, from 0) and the
 * additive block-diagonal causal mask [total x total] (0 where token i may attend to j:
 * same sequence, j <= i, and i - j < sliding_window when sliding_window > 0; -inf
 * elsewhere) in mask_dtype (SS_DTYPE_*). lengths live in device memory; their sum must equal
 * total_tokens (rows past the sum are fully masked). Launch only: ordered on `stream` (NULL:
 * the legacy default stream), no host synchronization. */
int ss_packed_mask(const int32_t* lengths, int num_seqs, int total_tokens, int sliding_window, int32_t* cu_seqlens,
                   void* mask, int mask_dtype, void* stream);

#ifdef __cplusplus
}
#endif

#endif
