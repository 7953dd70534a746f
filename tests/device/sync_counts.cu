// See sync_counts.hpp. Device code is C++17 (nvcc); no syncscope C++20 header here.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "sync_counts.hpp"

namespace syncscope::device_test {
namespace {

__global__ void touch(float* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * 0.5f + 1.0f;
}

// Spins for `ns` nanoseconds of the GPU's global timer (one thread): a kernel whose length
// does not depend on the GPU's speed.
__global__ void spin(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

struct Check {
  SyncWorkloadReport* report;
  bool operator()(cudaError_t e, const char* what) const {
    if (e == cudaSuccess) return true;
    if (report->error.empty()) report->error = std::string(what) + ": " + cudaGetErrorString(e);
    return false;
  }
};

}  // namespace

SyncWorkloadReport run_sync_workload(const SyncWorkload& w, void (*before_workload)(void*),
                                     void (*after_workload)(void*), void* user) {
  SyncWorkloadReport report;
  Check ok{&report};
  constexpr int kN = 1 << 16;
  float* dev = nullptr;
  void* dev_big = nullptr;
  void* pinned = nullptr;
  float* pageable = static_cast<float*>(std::malloc(kN * sizeof(float)));
  cudaStream_t main_stream = nullptr, copy_stream = nullptr;
  cudaEvent_t ev = nullptr, k0 = nullptr, k1 = nullptr, c0 = nullptr, c1 = nullptr;
  bool fine = pageable != nullptr && ok(cudaMalloc(&dev, kN * sizeof(float)), "cudaMalloc") &&
              ok(cudaMalloc(&dev_big, w.h2d_bytes), "cudaMalloc") &&
              ok(cudaMallocHost(&pinned, w.h2d_bytes), "cudaMallocHost") &&
              ok(cudaMemset(dev, 0, kN * sizeof(float)), "cudaMemset") &&
              ok(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags") &&
              // Non-blocking: a default-flag stream would serialize with the legacy stream
              // and silently remove the overlap (docs/sources.md#cuda-streams).
              ok(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags") &&
              ok(cudaEventCreate(&ev), "cudaEventCreate") && ok(cudaEventCreate(&k0), "cudaEventCreate") &&
              ok(cudaEventCreate(&k1), "cudaEventCreate") && ok(cudaEventCreate(&c0), "cudaEventCreate") &&
              ok(cudaEventCreate(&c1), "cudaEventCreate") && ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (fine) {
    std::memset(pinned, 1, w.h2d_bytes);
    const dim3 grid((kN + 255) / 256), block(256);
    before_workload(user);
    for (int i = 0; i < w.stream_syncs && fine; ++i) {
      touch<<<grid, block, 0, main_stream>>>(dev, kN);
      fine = ok(cudaGetLastError(), "touch") && ok(cudaStreamSynchronize(main_stream), "cudaStreamSynchronize");
    }
    for (int i = 0; i < w.event_syncs && fine; ++i) {
      touch<<<grid, block, 0, main_stream>>>(dev, kN);
      fine = ok(cudaEventRecord(ev, main_stream), "cudaEventRecord") &&
             ok(cudaEventSynchronize(ev), "cudaEventSynchronize");
    }
    for (int i = 0; i < w.pageable_copies && fine; ++i) {
      fine = ok(cudaMemcpyAsync(pageable, dev, kN * sizeof(float), cudaMemcpyDeviceToHost, main_stream),
                "cudaMemcpyAsync D2H pageable");
      touch<<<grid, block, 0, main_stream>>>(dev, kN);
      fine = fine && ok(cudaGetLastError(), "touch");
    }
    if (fine) {
      fine = ok(cudaEventRecord(k0, main_stream), "cudaEventRecord");
      spin<<<1, 1, 0, main_stream>>>(static_cast<unsigned long long>(w.long_kernel_ms * 1e6));
      fine = fine && ok(cudaGetLastError(), "spin") && ok(cudaEventRecord(k1, main_stream), "cudaEventRecord") &&
             ok(cudaEventRecord(c0, copy_stream), "cudaEventRecord") &&
             ok(cudaMemcpyAsync(dev_big, pinned, w.h2d_bytes, cudaMemcpyHostToDevice, copy_stream),
                "cudaMemcpyAsync H2D pinned") &&
             ok(cudaEventRecord(c1, copy_stream), "cudaEventRecord") &&
             ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    after_workload(user);
    float ms = 0;
    if (fine && cudaEventElapsedTime(&ms, k0, k1) == cudaSuccess) report.long_kernel_ms_measured = ms;
    if (fine && cudaEventElapsedTime(&ms, c0, c1) == cudaSuccess) report.h2d_ms_measured = ms;
    report.ok = fine;
  }
  for (cudaEvent_t e : {ev, k0, k1, c0, c1})
    if (e) cudaEventDestroy(e);
  if (main_stream) cudaStreamDestroy(main_stream);
  if (copy_stream) cudaStreamDestroy(copy_stream);
  if (dev) cudaFree(dev);
  if (dev_big) cudaFree(dev_big);
  if (pinned) cudaFreeHost(pinned);
  std::free(pageable);
  if (pageable == nullptr && report.error.empty()) report.error = "malloc failed";
  return report;
}

}  // namespace syncscope::device_test
