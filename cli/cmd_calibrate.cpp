// syncscope calibrate: CUDA microbenchmarks (sync round trip, launch overhead and latency,
// pinned/pageable H2D/D2H, device memory bandwidth, bf16 GEMM rate, FP32 rate, copy/compute
// interference) written as a GPU profile YAML that predict and the simulator read. The
// benchmarks live in the measured backend (libsyncscope_backend.so), loaded only here; when
// it is absent, cannot load or was built without CUDA, the message says which file and why.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/version.hpp"

#include <fmt/format.h>

#include "syncscope/model/calibration.hpp"
#include "syncscope/model/calibration_profile.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/pipeline/backend.hpp"

namespace syncscope::cli {

namespace {
struct CalibrateOptions {
  std::string output;
  std::string name;
  bool quick = false;
  bool force = false;
  int device = 0;
};

// "NVIDIA H200" -> "nvidia-h200": a file-name-safe profile name.
std::string slug(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (std::isalnum(c)) o += static_cast<char>(std::tolower(c));
    else if (!o.empty() && o.back() != '-') o += '-';
  }
  while (!o.empty() && o.back() == '-') o.pop_back();
  return o.empty() ? "gpu" : o;
}

// The calibration microbenchmarks, from the measured backend.
CalibrationMeasurements calibrate_with_backend(const CalibrationOptions& co) {
  const pipeline::BackendLoad load = pipeline::load_measured_backend();
  if (!load.backend)
    throw Error("syncscope calibrate needs the measured backend: " + load.error +
                ". It is built with -DSYNCSCOPE_ENABLE_CUDA=ON (nvcc and the CUDA toolkit with cuBLAS); run it on a "
                "machine with an NVIDIA GPU. The shipped profiles (model/profiles: H100, H200, B200, RTX5090, GB10) "
                "hold datasheet values meanwhile.");
  if (!load.backend->can_calibrate())
    throw Error("syncscope calibrate: the measured backend " + load.backend->file().string() +
                " was built without CUDA (" + load.backend->description() +
                "); configure with -DSYNCSCOPE_ENABLE_CUDA=ON (nvcc and the CUDA toolkit with cuBLAS)");
  return load.backend->calibrate(co);
}
}  // namespace

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure this machine's GPU with CUDA microbenchmarks (sync round trip, launch overhead and latency, pinned "
      "and pageable copy rates, device memory bandwidth, bf16 GEMM rate, copy/compute interference) and write a "
      "GPU profile (measured: true) for predict, run and the simulator. Takes under a minute; needs a CUDA build "
      "and a GPU.");
  cmd->add_option("--output", o->output, "Profile file to write (default: <name>.yaml in the current directory)");
  cmd->add_option("--name", o->name, "Profile name (default: from the GPU's name, e.g. nvidia-h200)");
  cmd->add_flag("--quick", o->quick, "Fewer repeats and smaller sizes: a smoke check, not a profile to trust");
  cmd->add_option("--device", o->device, "CUDA device index")->capture_default_str();
  cmd->add_flag("--force", o->force, "Replace --output when it already exists");
  cmd->callback([o, &ctx] {
    std::error_code ec;
    if (!o->output.empty())
      SYNCSCOPE_INPUT_ERROR_IF(!o->force && std::filesystem::exists(o->output, ec),
                               o->output + ": already exists; choose another name or pass --force to replace it");
    CalibrationOptions co;
    co.device = o->device;
    co.quick = o->quick;
    CalibrationMeasurements m = calibrate_with_backend(co);
    std::string name = o->name.empty() ? slug(m.gpu_name) : o->name;
    std::string out = o->output.empty() ? name + ".yaml" : o->output;
    SYNCSCOPE_INPUT_ERROR_IF(!o->force && std::filesystem::exists(out, ec),
                             out + ": already exists; choose another name (--output, --name) or pass --force");
    GpuProfile p = profile_from_calibration(m, name, utc_now_iso8601());
    if (o->quick) p.description += " (--quick: smoke check, fewer repeats)";
    write_file_atomic(out, gpu_profile_to_yaml(p), o->force);
    std::cout << fmt::format(
        "{} ({} SMs, {:.1f} GB{}), driver {}, CUDA runtime {}, {:.1f} s\n"
        "  sync round trip   {:9.1f} us\n  launch overhead   {:9.2f} us\n  launch latency    {:9.2f} us\n"
        "  H2D pinned        {:9.1f} GB/s   D2H pinned   {:7.1f} GB/s\n"
        "  H2D pageable      {:9.1f} GB/s   D2H pageable {:7.1f} GB/s\n"
        "  device memory     {:9.1f} GB/s (read + write)\n  bf16 GEMM         {:9.1f} TFLOP/s\n"
        "  fp32 FMA          {:9.1f} TFLOP/s\n  copy/compute slowdown {:.3f}\nwrote {}\n",
        m.gpu_name, m.sm_count, m.memory_bytes / 1e9, m.unified_memory ? ", unified memory" : "",
        m.driver_version.empty() ? "unknown" : m.driver_version, m.cuda_runtime, m.wall_seconds,
        m.sync_round_trip_ns / 1e3, m.launch_overhead_ns / 1e3, m.launch_latency_ns / 1e3,
        m.h2d_pinned_bytes_per_s / 1e9, m.d2h_pinned_bytes_per_s / 1e9, m.h2d_pageable_bytes_per_s / 1e9,
        m.d2h_pageable_bytes_per_s / 1e9, m.dram_bytes_per_s / 1e9, m.bf16_flops_per_s / 1e12,
        m.fp32_flops_per_s / 1e12, m.copy_compute_slowdown, out);
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
