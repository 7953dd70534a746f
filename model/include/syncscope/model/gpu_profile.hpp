// A GPU profile: the handful of rates and latencies the analytical model and the simulator
// need. Shipped profiles (model/profiles/<name>.yaml) hold datasheet or published values,
// each with its source; `syncscope calibrate` measures them on the machine and writes a
// profile that replaces the datasheet values.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "syncscope/core/units.hpp"

namespace syncscope {

inline constexpr int kGpuProfileSchemaVersion = 1;

struct GpuProfile {
  std::string name;             // "H200", "B200", "GB10", ...
  std::string description;      // "NVIDIA H200 SXM 141 GB"
  bool measured = false;        // true when written by `syncscope calibrate`
  std::string measured_on;      // date and machine when measured
  // Host <-> device
  double sync_round_trip_ns = 0;   // cudaStreamSynchronize on an idle stream, host-observed
  double launch_overhead_ns = 0;   // host time per kernel launch (API call duration)
  double launch_latency_ns = 0;    // launch call -> kernel start, GPU idle
  double h2d_pinned_bytes_per_s = 0;
  double d2h_pinned_bytes_per_s = 0;
  double h2d_pageable_bytes_per_s = 0;
  double d2h_pageable_bytes_per_s = 0;
  // Device
  double dram_bytes_per_s = 0;     // device memory bandwidth (read + write counted)
  double bf16_flops_per_s = 0;     // dense bf16 matrix rate
  double fp32_flops_per_s = 0;     // plain fp32 (non-tensor-core) rate
  int sm_count = 0;
  double memory_bytes = 0;
  bool unified_memory = false;     // host and device share memory (GB10, APUs)
  // Kernels running beside a copy that shares memory bandwidth slow down by this fraction
  // (0 = free overlap). Fitted from traces when available.
  double copy_compute_slowdown = 0;
  std::map<std::string, std::string> sources;  // field name -> where its value comes from
  std::string source;  // the file it was loaded from ("" when built in code); named in errors
};

// Loads a profile by shipped name ("H200") or by file path (YAML or JSON). Strict: an
// unknown key or a missing or non-positive required value is an InputError naming the file
// and the field.
GpuProfile load_gpu_profile(const std::string& name_or_path);
// The same rules on text already read; `source` names it in errors (fuzzing, tests).
GpuProfile parse_gpu_profile(const std::string& text, const std::string& source);
std::vector<std::string> shipped_gpu_profiles();  // names under model/profiles
std::string gpu_profile_to_yaml(const GpuProfile& profile);

}  // namespace syncscope
