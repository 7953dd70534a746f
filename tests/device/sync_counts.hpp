// A CUDA workload with a known number of host-device sync points, for checking the tracer
// and the sync-point analysis end to end on a GPU (tests/device/test_sync_counts.cpp).
// Plain C++17 (included by nvcc-compiled and C++20 code alike); no CUDA header.
#pragma once

#include <string>

namespace syncscope::device_test {

struct SyncWorkload {
  int stream_syncs = 5;                           // N x cudaStreamSynchronize (each after a small kernel)
  int event_syncs = 4;                            // M x cudaEventRecord + cudaEventSynchronize
  int pageable_copies = 3;                        // K x cudaMemcpyAsync device -> malloc'd host memory, no sync after
  double long_kernel_ms = 20;                     // the kernel the pinned H2D copy overlaps with
  std::size_t h2d_bytes = std::size_t{32} << 20;  // the pinned copy on the side stream
};

// What the workload did, as the program saw it.
struct SyncWorkloadReport {
  bool ok = false;
  std::string error;                   // the first CUDA error, when !ok
  double long_kernel_ms_measured = 0;  // by CUDA events around the long kernel
  double h2d_ms_measured = 0;          // by CUDA events around the pinned copy
};

// Allocates everything first (cudaMalloc, cudaMallocHost, streams, events: none of these
// happen inside the traced part), calls `before_workload`, runs exactly
//   N stream syncs, M event syncs, K pageable D2H copies (each followed by a kernel launch,
//   so no copy is "immediately followed by a sync of its stream"), then a long kernel on
//   the main stream with a pinned H2D copy on a non-blocking side stream, then one
//   cudaDeviceSynchronize,
// calls `after_workload`, and frees everything.
SyncWorkloadReport run_sync_workload(const SyncWorkload& w, void (*before_workload)(void*),
                                     void (*after_workload)(void*), void* user);

}  // namespace syncscope::device_test
