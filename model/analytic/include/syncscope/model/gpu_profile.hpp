// A GPU profile: the handful of rates and latencies the analytical model and the simulator
// need. Shipped profiles (model/profiles/<name>.yaml) hold datasheet or published values,
// each with its source; `syncscope calibrate` measures them on the machine and writes a
// profile that replaces the datasheet values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "syncscope/core/units.hpp"

namespace syncscope::model {

inline constexpr int kGpuProfileSchemaVersion = 1;

// One kernel as a trace showed it at that trace's shapes (`calibrate --from-trace`): its
// duration, and the host time of the framework op whose first launch it was. The simulator
// uses them for a program kernel whose name appears in `name` as a whole identifier.
struct FittedKernel {
  std::string name;          // the trace's kernel name without "void " and its parameter list
  std::string kernel_class;  // gemm, attention, reduce, elementwise or other (by name)
  double median_ns = 0;
  std::int64_t events = 0;  // launches behind the median
  // The op that launched it first (0 and 0 events when it never was an op's first launch):
  // host time before that launch call (the gap before the op and its own time up to the
  // call) and after it (the op's own time after its first launch call, calls excluded).
  double host_before_ns = 0;
  double host_after_ns = 0;
  std::int64_t host_events = 0;
};

struct GpuProfile {
  std::string name;         // "H200", "B200", "GB10", ...
  std::string description;  // "NVIDIA H200 SXM 141 GB"
  bool measured = false;    // true when written by `syncscope calibrate`
  std::string measured_on;  // date and machine when measured
  // Host <-> device
  double sync_round_trip_ns = 0;  // cudaStreamSynchronize on an idle stream, host-observed
  double launch_overhead_ns = 0;  // host time per kernel launch (API call duration)
  double launch_latency_ns = 0;   // launch call -> kernel start, GPU idle
  double h2d_pinned_bytes_per_s = 0;
  double d2h_pinned_bytes_per_s = 0;
  double h2d_pageable_bytes_per_s = 0;
  double d2h_pageable_bytes_per_s = 0;
  // Device
  double dram_bytes_per_s = 0;  // device memory bandwidth (read + write counted)
  double bf16_flops_per_s = 0;  // dense bf16 matrix rate
  double fp32_flops_per_s = 0;  // plain fp32 (non-tensor-core) rate
  int sm_count = 0;
  double memory_bytes = 0;
  bool unified_memory = false;  // host and device share memory (GB10, APUs)
  // Kernels running beside a copy that shares memory bandwidth slow down by this fraction
  // (0 = free overlap). Fitted from traces when available.
  double copy_compute_slowdown = 0;
  // Host cost per framework op, launch latency of copies and GPU-side floors, fitted from a
  // trace by `calibrate --from-trace` (model/README.md, "Calibrating from a trace"). 0 = not
  // modelled: datasheet profiles leave them out, and the simulator then charges only
  // launch_overhead_ns per call (plus each op's own host_ns), as before.
  double host_op_ns = 0;               // an op that launches nothing: its own time and the gap before it
  double host_launch_op_ns = 0;        // an op that launches GPU work, up to its first launch call
  double host_after_launch_ns = 0;     // the same op after its first launch call (calls excluded)
  double host_range_ns = 0;            // one range boundary (a push or a pop) and the gap before it
  double launches_per_op = 0;          // launch calls per op that launches (>= 1)
  double plain_ops_per_launch_op = 0;  // ops that launch nothing, per op that launches
  double copy_latency_ns = 0;          // copy launch call -> copy start, stream idle (else launch_latency_ns)
  double kernel_floor_ns = 0;          // the shortest kernels' duration (10th percentile)
  double copy_floor_ns = 0;            // a small (< 64 KiB) copy's duration (median)
  std::vector<FittedKernel> kernels;
  // Where a fitted profile came from: traces and their SHA-256, GPU, date, base profile,
  // whether the host costs are eager Python or C++ (key -> text).
  std::map<std::string, std::string> provenance;
  std::map<std::string, std::string> sources;  // field name -> where its value comes from
  std::string source;                          // the file it was loaded from ("" when built in code); named in errors
};

// Loads a profile by shipped name ("H200") or by file path (YAML or JSON). Strict: an
// unknown key or a missing or non-positive required value is an InputError naming the file
// and the field.
GpuProfile load_gpu_profile(const std::string& name_or_path);
// The same rules on text already read; `source` names it in errors (fuzzing, tests).
GpuProfile parse_gpu_profile(const std::string& text, const std::string& source);
std::vector<std::string> shipped_gpu_profiles();  // names under model/profiles
std::string gpu_profile_to_yaml(const GpuProfile& profile);

}  // namespace syncscope::model
