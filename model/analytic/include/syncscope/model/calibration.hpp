// `syncscope calibrate`: what the CUDA microbenchmarks measure, and how a measurement
// becomes a GPU profile. This header is plain C++17 (no CUDA, no C++20, no other syncscope
// header) because the .cu that fills CalibrationMeasurements includes it.
#pragma once

#include <map>
#include <string>

namespace syncscope::model {

struct CalibrationOptions {
  int device = 0;
  bool quick = false;  // fewer repeats and smaller sizes (a smoke check, not a profile to trust)
};

// Every time in ns, rate in bytes/s or FLOP/s; each value is the median over repeats after
// warm-up, timed with CUDA events unless `method` says host-observed.
struct CalibrationMeasurements {
  std::string gpu_name;         // cudaDeviceProp::name
  std::string driver_version;   // NVIDIA kernel driver (e.g. "580.159.04") when readable, else ""
  std::string cuda_driver_api;  // cudaDriverGetVersion as "13.0"
  std::string cuda_runtime;     // cudaRuntimeGetVersion as "13.0"
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  double memory_bytes = 0;
  bool unified_memory = false;  // cudaDeviceProp::integrated

  double sync_round_trip_ns = 0;  // host: trivial kernel launch + cudaStreamSynchronize
  double launch_overhead_ns = 0;  // host: cudaLaunchKernel call duration, many back to back
  double launch_latency_ns = 0;   // launch call -> kernel start on an idle GPU
  double h2d_pinned_bytes_per_s = 0;
  double d2h_pinned_bytes_per_s = 0;
  double h2d_pageable_bytes_per_s = 0;
  double d2h_pageable_bytes_per_s = 0;
  double dram_bytes_per_s = 0;                // D2D cudaMemcpy, read + write counted
  double bf16_flops_per_s = 0;                // cublasGemmEx bf16 in, fp32 compute
  double fp32_flops_per_s = 0;                // FMA-chain kernel
  double copy_compute_slowdown = 0;           // bandwidth-bound kernel beside an H2D copy: t_with/t_alone - 1
  std::map<std::string, std::string> method;  // field -> how it was measured (sizes, repeats)
  double wall_seconds = 0;                    // how long the calibration took
};

// Runs the microbenchmarks (syncscope_calibrate, CUDA builds only). Throws syncscope::CudaError
// (declared in core/error.hpp) on any failed CUDA/cuBLAS call.
CalibrationMeasurements run_calibration(const CalibrationOptions& options);

}  // namespace syncscope::model
