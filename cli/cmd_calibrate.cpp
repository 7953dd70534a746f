// syncscope calibrate: CUDA microbenchmarks (sync round trip, launch overhead and latency,
// pinned/pageable H2D/D2H, device memory bandwidth, bf16 GEMM rate, FP32 rate, copy/compute
// interference) written as a GPU profile YAML that predict and the simulator read. The
// benchmarks live in the measured backend (libsyncscope_backend.so), loaded only here; when
// it is absent, cannot load or was built without CUDA, the message says which file and why.
// With --from-trace it fits the profile from torch.profiler traces instead (CPU only, every
// build, no backend: model/calibrate/src).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"

#include <fmt/format.h>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/calibration.hpp"
#include "syncscope/model/calibration_profile.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/pipeline/backend.hpp"
#include "syncscope/reports/model_printers.hpp"

namespace syncscope::cli {

namespace {
struct CalibrateOptions {
  std::string output;
  std::string name;
  bool quick = false;
  bool force = false;
  int device = 0;
  // --from-trace
  std::vector<std::string> traces;
  std::string base;
  std::string step_range = "ProfilerStep#*";
  int steps = 0;
  double warmup_factor = 1.5;
  std::string format = "text";
};

// Where the profile may go, by core/output_policy's rule like every other output: a regular
// file only with --force; /dev/null, a FIFO, /dev/stdout are written through.
void check_output(const std::string& out, bool force) { (void)plan_output_file(out, force); }

// The profile as YAML, once its own loader accepts it: calibrate never writes a profile that
// `run --gpu-profile` would refuse (a trace gave 1e27 B/s). From a trace the trace
// is the bad input (exit 2); from the microbenchmarks the measurement failed (exit 1).
std::string checked_yaml(const model::GpuProfile& p, const std::string& out, bool from_trace) {
  const std::string yaml = model::gpu_profile_to_yaml(p);
  try {
    (void)model::parse_gpu_profile(yaml, out);
  } catch (const InputError& e) {
    const std::string msg = std::string("the fitted profile was not written: ") + e.what() +
                            (from_trace ? "; the trace does not hold a plausible measurement of that value (give "
                                          "--base to take it from a known profile)"
                                        : "; the measurement is implausible: run calibrate again on an idle GPU");
    if (from_trace) throw InputError(msg);
    throw Error(msg);
  }
  return yaml;
}

// calibrate --from-trace: no GPU, no CUDA; exit 2 (InputError) when a required field can be
// neither estimated nor taken from --base.
void calibrate_from_trace(const CalibrateOptions& o) {
  SYNCSCOPE_INPUT_ERROR_IF(o.format != "text" && o.format != "json",
                           "--format: expected text or json, got '" + o.format + "'");
  SYNCSCOPE_INPUT_ERROR_IF(o.steps < 0, "--steps: expected 0 (all) or a positive count");
  SYNCSCOPE_INPUT_ERROR_IF(!(o.warmup_factor == 0 || o.warmup_factor >= 1),
                           "--warmup-factor: expected 0 (keep every step) or a factor >= 1");
  if (!o.output.empty()) check_output(o.output, o.force);
  calibrate::TraceCalibrationOptions co;
  co.step_glob = o.step_range;
  co.max_steps = o.steps;
  co.warmup_factor = o.warmup_factor;
  co.name = o.name;
  co.date_utc = utc_now_iso8601();
  if (!o.base.empty()) {
    co.base = model::load_gpu_profile(o.base);
    co.base_label = o.base;
  }
  std::vector<Trace> traces;
  traces.reserve(o.traces.size());
  std::vector<calibrate::TraceInput> inputs;
  for (const auto& path : o.traces) {
    traces.push_back(read_trace(path));
    print_read_warnings(traces.back(), path);
    inputs.push_back({path, calibrate::sha256_file(path), &traces.back()});
  }
  const calibrate::TraceCalibration cal = calibrate::calibrate_from_traces(inputs, co);
  const std::string out = o.output.empty() ? cal.profile.name + ".yaml" : o.output;
  check_output(out, o.force);
  write_file_atomic(out, checked_yaml(cal.profile, out, true), o.force);
  if (o.format == "json") {
    for (const auto& w : cal.warnings) std::fprintf(stderr, "syncscope: warning: %s\n", printable(w).c_str());
    std::cout << calibrate::calibration_to_json(cal);
  } else {
    std::cout << calibration_to_text(cal) << "wrote " << printable(out) << "\n";
  }
}

// The calibration microbenchmarks, from the measured backend.
model::CalibrationMeasurements calibrate_with_backend(const model::CalibrationOptions& co) {
  const pipeline::BackendLoad load = pipeline::load_measured_backend();
  if (!load.backend)
    throw Error("syncscope calibrate needs the measured backend: " + load.error +
                ". It is built with -DSYNCSCOPE_ENABLE_CUDA=ON (nvcc and the CUDA toolkit with cuBLAS); run it on a "
                "machine with an NVIDIA GPU. Without one, fit a profile from a torch.profiler trace of your run: "
                "syncscope calibrate --from-trace TRACE --base H200. The shipped profiles (model/profiles: H100, H200, "
                "B200, RTX5090, GB10) "
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
      "and a GPU. With --from-trace, fit the profile from torch.profiler traces of your own run instead (no GPU "
      "needed): host cost per op, launch, round trip, copy rates, kernel times, each with a 90% interval; what "
      "the traces cannot show comes from --base.");
  cmd->add_option("--output", o->output, "Profile file to write (default: <name>.yaml in the current directory)");
  cmd->add_option("--name", o->name, "Profile name (default: from the GPU's name, e.g. nvidia-h200)")
      ->check(name_rule());
  cmd->add_flag("--quick", o->quick, "Fewer repeats and smaller sizes: a smoke check, not a profile to trust");
  cmd->add_option("--device", o->device, "CUDA device index")->capture_default_str();
  cmd->add_flag("--force", o->force, "Replace --output when it already exists");
  cmd->add_option("--from-trace", o->traces,
                  "Fit from these traces (torch.profiler .json/.json.gz, or syncscope's) instead of microbenchmarks: "
                  "CPU only");
  cmd->add_option("--base", o->base,
                  "With --from-trace: profile (shipped name such as H200, or a file) for what the traces cannot show "
                  "(FLOP rates, and copy rates without large copies); each such field is marked in the profile");
  cmd->add_option("--step-range", o->step_range, "With --from-trace: glob over the range names that delimit steps")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "With --from-trace: fit from the first N steps only (0: all)")
      ->capture_default_str();
  cmd->add_option("--warmup-factor", o->warmup_factor,
                  "With --from-trace: skip steps longer than this times the median step (warm-up); 0 keeps all")
      ->capture_default_str();
  cmd->add_option("--format", o->format, "With --from-trace: the summary on stdout, text or json")
      ->capture_default_str();
  cmd->callback([o, &ctx] {
    if (!o->traces.empty()) {
      calibrate_from_trace(*o);
      ctx.exit_code = 0;
      return;
    }
    SYNCSCOPE_INPUT_ERROR_IF(!o->base.empty(), "--base is for --from-trace (give the traces to fit from)");
    if (!o->output.empty()) check_output(o->output, o->force);
    model::CalibrationOptions co;
    co.device = o->device;
    co.quick = o->quick;
    model::CalibrationMeasurements m = calibrate_with_backend(co);
    std::string name = o->name.empty() ? model::profile_slug(m.gpu_name) : o->name;
    std::string out = o->output.empty() ? name + ".yaml" : o->output;
    check_output(out, o->force);
    model::GpuProfile p = model::profile_from_calibration(m, name, utc_now_iso8601());
    if (o->quick) p.description += " (--quick: smoke check, fewer repeats)";  // printed-name-ok
    write_file_atomic(out, checked_yaml(p, out, false), o->force);
    std::cout << fmt::format(
        "{} ({} SMs, {:.1f} GB{}), driver {}, CUDA runtime {}, {:.1f} s\n"
        "  sync round trip   {:9.1f} us\n  launch overhead   {:9.2f} us\n  launch latency    {:9.2f} us\n"
        "  H2D pinned        {:9.1f} GB/s   D2H pinned   {:7.1f} GB/s\n"
        "  H2D pageable      {:9.1f} GB/s   D2H pageable {:7.1f} GB/s\n"
        "  device memory     {:9.1f} GB/s (read + write)\n  bf16 GEMM         {:9.1f} TFLOP/s\n"
        "  fp32 FMA          {:9.1f} TFLOP/s\n  copy/compute slowdown {:.3f}\nwrote {}\n",
        printable(m.gpu_name), m.sm_count, m.memory_bytes / 1e9, m.unified_memory ? ", unified memory" : "",
        m.driver_version.empty() ? "unknown" : m.driver_version, m.cuda_runtime, m.wall_seconds,
        m.sync_round_trip_ns / 1e3, m.launch_overhead_ns / 1e3, m.launch_latency_ns / 1e3,
        m.h2d_pinned_bytes_per_s / 1e9, m.d2h_pinned_bytes_per_s / 1e9, m.h2d_pageable_bytes_per_s / 1e9,
        m.d2h_pageable_bytes_per_s / 1e9, m.dram_bytes_per_s / 1e9, m.bf16_flops_per_s / 1e12,
        m.fp32_flops_per_s / 1e12, m.copy_compute_slowdown, printable(out));
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
