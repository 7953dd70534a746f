// Thin C wrappers over the CUDA runtime and NVTX for the LibTorch step and the device tests:
// the only host file that includes CUDA headers, so the rest builds without them.
#include "cuda/cuda_api.h"

#include <cuda_runtime.h>

#include <nvtx3/nvToolsExt.h>
#include <cstdio>

namespace {
cudaStream_t as_stream(void* s) { return s ? static_cast<cudaStream_t>(s) : cudaStreamLegacy; }
}  // namespace

extern "C" {

const char* ss_cuda_error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }

int ss_cuda_device_count(int* count) {
  *count = 0;
  return cudaGetDeviceCount(count);
}

int ss_cuda_device_name(char* name, int capacity, int* driver_version) {
  if (!name || capacity <= 0) return static_cast<int>(cudaErrorInvalidValue);
  name[0] = '\0';
  int device = 0;
  cudaError_t rc = cudaGetDevice(&device);
  if (rc != cudaSuccess) return rc;
  cudaDeviceProp prop{};
  rc = cudaGetDeviceProperties(&prop, device);
  if (rc != cudaSuccess) return rc;
  std::snprintf(name, static_cast<size_t>(capacity), "%s", prop.name);
  if (driver_version) rc = cudaDriverGetVersion(driver_version);
  return rc;
}

int ss_cuda_device_capability(int* major, int* minor) {
  if (!major || !minor) return static_cast<int>(cudaErrorInvalidValue);
  *major = *minor = 0;
  int device = 0;
  cudaError_t rc = cudaGetDevice(&device);
  if (rc != cudaSuccess) return rc;
  rc = cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, device);
  if (rc != cudaSuccess) return rc;
  return cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, device);
}

int ss_cuda_stream_create_nonblocking(void** stream) {
  cudaStream_t s = nullptr;
  const cudaError_t rc = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  *stream = s;
  return rc;
}
int ss_cuda_stream_destroy(void* stream) { return cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }
int ss_cuda_stream_synchronize(void* stream) { return cudaStreamSynchronize(as_stream(stream)); }
int ss_cuda_device_synchronize(void) { return cudaDeviceSynchronize(); }

int ss_cuda_event_create(void** event, int timing) {
  cudaEvent_t e = nullptr;
  const cudaError_t rc = cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming);
  *event = e;
  return rc;
}
int ss_cuda_event_destroy(void* event) { return cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
int ss_cuda_event_record(void* event, void* stream) {
  return cudaEventRecord(static_cast<cudaEvent_t>(event), as_stream(stream));
}
int ss_cuda_event_synchronize(void* event) { return cudaEventSynchronize(static_cast<cudaEvent_t>(event)); }
int ss_cuda_event_elapsed_ms(float* ms, void* start, void* end) {
  return cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end));
}
int ss_cuda_stream_wait_event(void* stream, void* event) {
  return cudaStreamWaitEvent(as_stream(stream), static_cast<cudaEvent_t>(event), 0);
}

int ss_cuda_memcpy_async(void* dst, const void* src, size_t bytes, int kind, void* stream) {
  return cudaMemcpyAsync(dst, src, bytes, static_cast<cudaMemcpyKind>(kind), as_stream(stream));
}
int ss_cuda_mem_get_info(size_t* free_bytes, size_t* total_bytes) { return cudaMemGetInfo(free_bytes, total_bytes); }
int ss_cuda_malloc(void** ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
int ss_cuda_free(void* ptr) { return cudaFree(ptr); }
int ss_cuda_memset(void* ptr, int value, size_t bytes) { return cudaMemset(ptr, value, bytes); }
int ss_cuda_memcpy(void* dst, const void* src, size_t bytes, int kind) {
  return cudaMemcpy(dst, src, bytes, static_cast<cudaMemcpyKind>(kind));
}

void ss_nvtx_push(const char* name) { nvtxRangePushA(name); }
void ss_nvtx_pop(void) { nvtxRangePop(); }

}  // extern "C"
