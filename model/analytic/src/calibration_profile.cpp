#include "syncscope/model/calibration_profile.hpp"

#include <cctype>
#include <regex>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

GpuProfile profile_from_calibration(const CalibrationMeasurements& m, const std::string& name,
                                    const std::string& date_utc) {
  SYNCSCOPE_INPUT_ERROR_IF(name.empty(), "calibrate: the profile needs a name (--name)");
  struct Required {
    const char* field;
    double value;
  };
  const Required required[] = {
      {"sync_round_trip_ns", m.sync_round_trip_ns},
      {"launch_overhead_ns", m.launch_overhead_ns},
      {"launch_latency_ns", m.launch_latency_ns},
      {"h2d_pinned_bytes_per_s", m.h2d_pinned_bytes_per_s},
      {"d2h_pinned_bytes_per_s", m.d2h_pinned_bytes_per_s},
      {"dram_bytes_per_s", m.dram_bytes_per_s},
      {"bf16_flops_per_s", m.bf16_flops_per_s},
      {"memory_bytes", m.memory_bytes},
      {"sm_count", static_cast<double>(m.sm_count)},
  };
  for (const auto& r : required)
    SYNCSCOPE_INPUT_ERROR_IF(!(r.value > 0), fmt::format("calibrate: '{}' was not measured (value {}): refusing to "
                                                         "write a profile with holes",
                                                         r.field, r.value));
  GpuProfile p;
  p.name = name;
  p.description = fmt::format("{} (compute capability {}.{}), measured by syncscope calibrate", m.gpu_name,
                              m.compute_major, m.compute_minor);
  p.measured = true;
  p.measured_on =
      fmt::format("{}, {}, driver {}, CUDA runtime {}", date_utc, m.gpu_name,
                  m.driver_version.empty() ? "unknown (driver API " + m.cuda_driver_api + ")" : m.driver_version,
                  m.cuda_runtime);
  p.sync_round_trip_ns = m.sync_round_trip_ns;
  p.launch_overhead_ns = m.launch_overhead_ns;
  p.launch_latency_ns = m.launch_latency_ns;
  p.h2d_pinned_bytes_per_s = m.h2d_pinned_bytes_per_s;
  p.d2h_pinned_bytes_per_s = m.d2h_pinned_bytes_per_s;
  p.h2d_pageable_bytes_per_s = m.h2d_pageable_bytes_per_s;
  p.d2h_pageable_bytes_per_s = m.d2h_pageable_bytes_per_s;
  p.dram_bytes_per_s = m.dram_bytes_per_s;
  p.bf16_flops_per_s = m.bf16_flops_per_s;
  p.fp32_flops_per_s = m.fp32_flops_per_s;
  p.sm_count = m.sm_count;
  p.memory_bytes = m.memory_bytes;
  p.unified_memory = m.unified_memory;
  p.copy_compute_slowdown = m.copy_compute_slowdown;
  auto src = [&](const char* field, const char* fallback) {
    auto it = m.method.find(field);
    p.sources[field] = std::string("measured: ") + (it != m.method.end() ? it->second : fallback);
  };
  src("sync_round_trip_ns", "trivial kernel + cudaStreamSynchronize, host clock, median");
  src("launch_overhead_ns", "cudaLaunchKernel call duration, host clock, median");
  src("launch_latency_ns", "launch call to kernel start, median");
  src("h2d_pinned_bytes_per_s", "cudaMemcpyAsync, CUDA events, median");
  src("d2h_pinned_bytes_per_s", "cudaMemcpyAsync, CUDA events, median");
  if (m.h2d_pageable_bytes_per_s > 0) src("h2d_pageable_bytes_per_s", "cudaMemcpy from pageable memory, median");
  if (m.d2h_pageable_bytes_per_s > 0) src("d2h_pageable_bytes_per_s", "cudaMemcpy to pageable memory, median");
  src("dram_bytes_per_s", "D2D cudaMemcpyAsync, read + write counted, median");
  src("bf16_flops_per_s", "cublasGemmEx bf16, fp32 compute, median");
  if (m.fp32_flops_per_s > 0) src("fp32_flops_per_s", "FMA-chain kernel, median");
  src("sm_count", "cudaDeviceProp::multiProcessorCount");
  src("memory_bytes", "cudaDeviceProp::totalGlobalMem");
  src("unified_memory", "cudaDeviceProp::integrated");
  src("copy_compute_slowdown", "bandwidth-bound kernel with vs without a concurrent pinned H2D copy, median");
  return p;
}

std::string profile_slug(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (std::isalnum(c)) o += static_cast<char>(std::tolower(c));
    else if (!o.empty() && o.back() != '-') o += '-';
  }
  while (!o.empty() && o.back() == '-') o.pop_back();
  return o.empty() ? "gpu" : o;
}

std::string parse_nvidia_driver_version(const std::string& text) {
  static const std::regex re(R"(Kernel Module[^0-9]*([0-9]+\.[0-9]+(\.[0-9]+)?))");
  std::smatch m;
  if (std::regex_search(text, m, re)) return m[1].str();
  return "";
}

}  // namespace syncscope::model
