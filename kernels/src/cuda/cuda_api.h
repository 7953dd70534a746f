/* The CUDA side of the step as a plain C interface: streams, events, copies, NVTX and the
 * NF4 kernels. The LibTorch step (C++20), the fixes' LibTorch hooks and the device tests call
 * these; the implementations (cuda_runtime.cpp, *.cu) are the only files that include CUDA
 * headers. A fix's own kernels are in its folder behind a header like this one
 * (syncscope/fixes/packing/packing_mask.h, syncscope/fixes/moe_routing/moe_histogram.h).
 * Every function returns a cudaError_t value (0 = cudaSuccess); ss_cuda_error_string names
 * it. A NULL stream means the legacy default stream (cudaStreamLegacy), the one LibTorch
 * queues its work on unless told otherwise. */
#ifndef SYNCSCOPE_KERNELS_CUDA_API_H
#define SYNCSCOPE_KERNELS_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

const char* ss_cuda_error_string(int code);
int ss_cuda_device_count(int* count);
/* Name of the current device and the driver version (e.g. 13000), for provenance. */
int ss_cuda_device_name(char* name, int capacity, int* driver_version);
int ss_cuda_device_capability(int* major, int* minor); /* of the current device */
int ss_cuda_stream_create_nonblocking(void** stream);  /* cudaStreamNonBlocking: no implicit sync with stream 0 */
int ss_cuda_stream_destroy(void* stream);
int ss_cuda_stream_synchronize(void* stream);
int ss_cuda_device_synchronize(void);
int ss_cuda_event_create(void** event, int timing); /* timing 0: cudaEventDisableTiming */
int ss_cuda_event_destroy(void* event);
int ss_cuda_event_record(void* event, void* stream);
int ss_cuda_event_synchronize(void* event);
int ss_cuda_event_elapsed_ms(float* ms, void* start, void* end);
int ss_cuda_stream_wait_event(void* stream, void* event);
/* kind: 1 host->device, 2 device->host, 3 device->device (cudaMemcpyKind values). */
int ss_cuda_memcpy_async(void* dst, const void* src, size_t bytes, int kind, void* stream);
int ss_cuda_mem_get_info(size_t* free_bytes, size_t* total_bytes);
int ss_cuda_malloc(void** ptr, size_t bytes);
int ss_cuda_free(void* ptr);
int ss_cuda_memset(void* ptr, int value, size_t bytes);
int ss_cuda_memcpy(void* dst, const void* src, size_t bytes, int kind); /* synchronous */

void ss_nvtx_push(const char* name);
void ss_nvtx_pop(void);

/* Element types of a kernel's floating-point output (the packed mask, NF4's dequantization). */
enum { SS_DTYPE_F32 = 0, SS_DTYPE_BF16 = 1, SS_DTYPE_F16 = 2 };

/* NF4 dequantization (qlora): codes[ceil(n/2)] (first value in the high nibble) and one
 * fp32 absmax per 64 values -> out[n] in out_dtype. variant 1..SS_NF4_VARIANTS picks the
 * kernel (nf4_dequant.cu); SS_NF4_DEFAULT_VARIANT is the one the training step uses. */
#define SS_NF4_VARIANTS 3
#define SS_NF4_DEFAULT_VARIANT 3
int ss_nf4_dequantize(const uint8_t* codes, const float* absmax, int64_t numel, void* out, int out_dtype, int variant,
                      void* stream);
/* Double quantization undone: absmax[b] = code_map[absmax_codes[b]] * absmax2[b/256] + offset. */
int ss_nf4_absmax(const uint8_t* absmax_codes, const float* code_map, const float* absmax2, float offset,
                  int64_t nblocks, float* absmax, void* stream);

#ifdef __cplusplus
}
#endif

#endif
