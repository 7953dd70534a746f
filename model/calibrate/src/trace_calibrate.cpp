// calibrate --from-trace: samples from every trace (host_costs.cpp, gpu_estimators.cpp),
// estimates with intervals, and the profile: fitted fields, base fields marked as such,
// provenance.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/model/calibration_profile.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "trace_estimators.hpp"

namespace syncscope::calibrate {

using calib::Samples;

namespace {

constexpr std::size_t kMaxProfileKernels = 256;  // by total GPU time: the ones that matter

// What each field needs from a trace, for warnings and errors.
struct FieldNeed {
  const char* field;
  bool required;
  const char* events;
};
constexpr FieldNeed kNeeds[] = {
    {"sync_round_trip_ns", true,
     "sync points that waited for GPU work (cudaStreamSynchronize, cudaDeviceSynchronize, .item()) with the kernel "
     "or copy records they waited for"},
    {"launch_overhead_ns", true,
     "launch calls (cuda_runtime/cuda_driver events whose correlation id names a kernel, copy or memset record)"},
    {"launch_latency_ns", true, "launch calls with their GPU records, on a stream that was idle at the call"},
    {"h2d_pinned_bytes_per_s", true, "host-to-device copies of >= 256 KiB from pinned memory"},
    {"d2h_pinned_bytes_per_s", true, "device-to-host copies of >= 256 KiB to pinned memory"},
    {"h2d_pageable_bytes_per_s", false, "host-to-device copies of >= 256 KiB from pageable memory"},
    {"d2h_pageable_bytes_per_s", false, "device-to-host copies of >= 256 KiB to pageable memory"},
    {"dram_bytes_per_s", true, "device-to-device copies of >= 256 KiB"},
    {"bf16_flops_per_s", true, "(a trace holds no FLOP counts: always from a base profile or syncscope calibrate)"},
    {"fp32_flops_per_s", false, "(a trace holds no FLOP counts)"},
    {"sm_count", true, "deviceProperties.numSms"},
    {"memory_bytes", true, "deviceProperties.totalGlobalMem"},
    {"unified_memory", false, "(Kineto's deviceProperties has no integrated-memory flag)"},
    {"copy_compute_slowdown", false,
     "kernels that ran both alone and beside a host-to-device copy of >= 1 MiB (3+ launches each way per name)"},
    {"host_op_ns", false, "top-level CPU ops (cpu_op) that launch nothing, on a thread that launches GPU work"},
    {"host_launch_op_ns", false, "top-level CPU ops or launch calls that launch GPU work"},
    {"host_after_launch_ns", false, "top-level CPU ops that launch GPU work"},
    {"host_range_ns", false, "range boundaries (user_annotation/NVTX starts and ends) on a launching thread"},
    {"launches_per_op", false, "top-level CPU ops that launch GPU work"},
    {"plain_ops_per_launch_op", false, "top-level CPU ops and launch calls"},
    {"copy_latency_ns", false, "copy launch calls with their copy records, on a stream that was idle at the call"},
    {"kernel_floor_ns", false, "kernel records"},
    {"copy_floor_ns", false, "host copies of < 64 KiB"},
};

double* field_ptr(model::GpuProfile& p, const std::string& f) {
  static const std::map<std::string, double model::GpuProfile::*> m = {
      {"sync_round_trip_ns", &model::GpuProfile::sync_round_trip_ns},
      {"launch_overhead_ns", &model::GpuProfile::launch_overhead_ns},
      {"launch_latency_ns", &model::GpuProfile::launch_latency_ns},
      {"h2d_pinned_bytes_per_s", &model::GpuProfile::h2d_pinned_bytes_per_s},
      {"d2h_pinned_bytes_per_s", &model::GpuProfile::d2h_pinned_bytes_per_s},
      {"h2d_pageable_bytes_per_s", &model::GpuProfile::h2d_pageable_bytes_per_s},
      {"d2h_pageable_bytes_per_s", &model::GpuProfile::d2h_pageable_bytes_per_s},
      {"dram_bytes_per_s", &model::GpuProfile::dram_bytes_per_s},
      {"bf16_flops_per_s", &model::GpuProfile::bf16_flops_per_s},
      {"fp32_flops_per_s", &model::GpuProfile::fp32_flops_per_s},
      {"memory_bytes", &model::GpuProfile::memory_bytes},
      {"copy_compute_slowdown", &model::GpuProfile::copy_compute_slowdown},
      {"host_op_ns", &model::GpuProfile::host_op_ns},
      {"host_launch_op_ns", &model::GpuProfile::host_launch_op_ns},
      {"host_after_launch_ns", &model::GpuProfile::host_after_launch_ns},
      {"host_range_ns", &model::GpuProfile::host_range_ns},
      {"launches_per_op", &model::GpuProfile::launches_per_op},
      {"plain_ops_per_launch_op", &model::GpuProfile::plain_ops_per_launch_op},
      {"copy_latency_ns", &model::GpuProfile::copy_latency_ns},
      {"kernel_floor_ns", &model::GpuProfile::kernel_floor_ns},
      {"copy_floor_ns", &model::GpuProfile::copy_floor_ns},
  };
  auto it = m.find(f);
  return it == m.end() ? nullptr : &(p.*(it->second));
}

double field_value(const model::GpuProfile& p, const std::string& f) {
  if (f == "sm_count") return p.sm_count;
  if (f == "unified_memory") return p.unified_memory ? 1 : 0;
  return *field_ptr(const_cast<model::GpuProfile&>(p), f);
}

std::string basename_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Eager Python or C++: what ran the host side, and the evidence.
std::string host_cost_kind(const std::vector<TraceInput>& traces) {
  for (const auto& in : traces) {
    const Trace& t = *in.trace;
    for (const auto& r : t.ranges)
      if (r.kind == RangeKind::PythonFunction) return "eager Python (python_function events in the trace)";
    for (const auto& n : t.track_names)
      if (n.tid.empty() && n.name.find("python") != std::string::npos)
        return fmt::format("eager Python (the traced process is '{}')", n.name);
    for (const auto& r : t.ranges) {
      const std::string_view name = t.str(r.name);
      if (name.rfind("Optimizer.step#", 0) == 0 || name.rfind("nn.Module: ", 0) == 0)
        return fmt::format("eager Python (a '{}' range: torch's Python hooks)", name);
    }
  }
  for (const auto& in : traces) {
    if (in.trace->meta.source_tool == "syncscope-sim") return "simulated (the simulator's own host costs)";
    for (const auto& n : in.trace->track_names)
      if (n.tid.empty() && !n.name.empty())
        return fmt::format("C++ (the traced process is '{}', no Python frames)", n.name);
  }
  return "unknown (no process names or Python frames in the trace)";
}

// The device most GPU records ran on, and its properties.
const DeviceProperties* main_device(const Trace& t) {
  std::map<std::int32_t, std::size_t> n;
  for (const auto& k : t.kernels) n[k.device]++;
  for (const auto& m : t.memcpys) n[m.device]++;
  std::int32_t best = t.devices.empty() ? -1 : t.devices.front().id;
  std::size_t most = 0;
  for (const auto& [d, c] : n)
    if (c > most) most = c, best = d;
  for (const auto& d : t.devices)
    if (d.id == best) return &d;
  return t.devices.empty() ? nullptr : &t.devices.front();
}

// What every trace gave: the samples, the GPU, the overlap slowdown, the windows fitted.
struct TraceSamples {
  Samples s;
  std::string gpu_name;
  const DeviceProperties* props = nullptr;
  std::optional<model::SlowdownEstimate> sigma;
  std::vector<std::string> windows_text;  // per trace, which of its steps were fitted
};

TraceSamples collect_samples(const std::vector<TraceInput>& traces, const TraceCalibrationOptions& opt) {
  TraceSamples ts;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const TraceInput& in = traces[i];
    const Trace& t = *in.trace;
    SYNCSCOPE_INPUT_ERROR_IF(t.api_calls.empty() && t.kernels.empty() && t.memcpys.empty() && t.ranges.empty(),
                             in.path +
                                 ": the trace holds no host calls, CPU ops or GPU records: nothing to calibrate "
                                 "from (record with torch.profiler's ProfilerActivity.CPU and CUDA)");
    AnalysisOptions ao;
    ao.step_glob = opt.step_glob;
    const AnalysisResult an = analyze(t, ao);
    std::vector<std::string> skipped;
    const auto windows = calib::fit_windows(an, t, opt.max_steps, opt.warmup_factor, skipped);
    ts.windows_text.push_back(
        an.steps.empty()
            ? fmt::format("{}: the whole trace (no '{}' step ranges)", basename_of(in.path), opt.step_glob)
            : fmt::format("{}: {} of {} '{}' step ranges{}", basename_of(in.path), windows.size(), an.steps.size(),
                          opt.step_glob,
                          skipped.empty() ? ""
                                          : fmt::format(" ({} skipped: longer than {:g}x the median step, warm-up)",
                                                        fmt::join(skipped, ", "), opt.warmup_factor)));
    calib::collect_host_costs(t, an, windows, ts.s);
    calib::collect_gpu_samples(t, an, windows, ts.s);
    if (const DeviceProperties* d = main_device(t)) {
      if (!ts.gpu_name.empty() && !d->name.empty() && d->name != ts.gpu_name)
        throw InputError(
            fmt::format("calibrate --from-trace: {} ran on '{}', {} on '{}': one profile describes one "
                        "GPU; calibrate them apart",
                        basename_of(in.path), d->name, basename_of(traces.front().path), ts.gpu_name));
      if (!d->name.empty()) ts.gpu_name = d->name;
      if (!ts.props) ts.props = d;
    }
    auto est = model::estimate_overlap_slowdown(t, opt.bootstrap, opt.seed + 7);
    if (est && (!ts.sigma || est->beside > ts.sigma->beside)) ts.sigma = est;
  }
  return ts;
}

// Each field's estimate with its interval, from the samples. `seed` advances once per
// bootstrap (the kernel classes continue from it).
void add_estimates(const TraceSamples& ts, int B, std::uint64_t& seed, TraceCalibration& out) {
  const Samples& s = ts.s;
  auto add = [&](const std::string& field, model::Interval v, std::int64_t events, std::string how) {
    // A count ratio may be 0 (no op that launches nothing); every time and rate is positive.
    const bool zero_ok = field == "plain_ops_per_launch_op";
    if (events <= 0 || !std::isfinite(v.value) || v.value < 0 || (v.value == 0 && !zero_ok)) return;
    out.estimates.push_back({field, v, events, std::move(how)});
  };
  add("sync_round_trip_ns", calib::median_ci(s.round_trip_ns, B, ++seed),
      static_cast<std::int64_t>(s.round_trip_ns.size()),
      fmt::format("median of (sync return - end of the last GPU activity it waited for) over {} of {} syncs that "
                  "waited",
                  s.round_trip_ns.size(), s.syncs));
  add("launch_overhead_ns", calib::grouped_median_mean(s.launch_call_ns, B, ++seed),
      calib::total_count(s.launch_call_ns), "launch call duration: per API name the median, weighted by calls");
  add("launch_latency_ns", calib::median_ci(s.latency_ns, B, ++seed), static_cast<std::int64_t>(s.latency_ns.size()),
      "median of (kernel or memset start - launch call start) for work on a stream idle at the call");
  add("copy_latency_ns", calib::median_ci(s.copy_latency_ns, B, ++seed),
      static_cast<std::int64_t>(s.copy_latency_ns.size()),
      "median of (copy start - its call's start) for copies on a stream idle at the call");
  for (const char* key : {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"}) {
    auto it = s.copies.find(key);
    if (it == s.copies.end()) continue;
    add(std::string(key) + "_bytes_per_s", calib::rate_ci(it->second, B, ++seed),
        static_cast<std::int64_t>(it->second.size()), "total bytes / total time of copies >= 256 KiB");
  }
  if (auto it = s.copies.find("d2d"); it != s.copies.end()) {
    model::Interval r = calib::rate_ci(it->second, B, ++seed);
    add("dram_bytes_per_s", {2 * r.value, 2 * r.lo, 2 * r.hi}, static_cast<std::int64_t>(it->second.size()),
        "2 x bytes / time of device-to-device copies >= 256 KiB (each byte read and written)");
  }
  const DeviceProperties* props = ts.props;
  if (props && props->sm_count > 0)
    add("sm_count", model::Interval::exact(props->sm_count), 1, "deviceProperties.numSms");
  if (props && props->total_memory_bytes > 0)
    add("memory_bytes", model::Interval::exact(static_cast<double>(props->total_memory_bytes)), 1,
        "deviceProperties.totalGlobalMem");
  if (ts.sigma && ts.sigma->sigma.value > 0)
    add("copy_compute_slowdown", ts.sigma->sigma, ts.sigma->beside + ts.sigma->alone,
        fmt::format("median over {} kernel names of (median beside a >= 1 MiB H2D copy / median alone) - 1",
                    ts.sigma->kernel_names));
  add("host_op_ns", calib::grouped_median_mean(s.plain_ops, B, ++seed), calib::total_count(s.plain_ops),
      "top-level CPU ops that launch nothing: own time + host gap before, per op name the median, weighted by ops");
  add("host_launch_op_ns", calib::grouped_median_mean(s.launch_ops, B, ++seed), calib::total_count(s.launch_ops),
      "top-level CPU ops that launch GPU work: host gap before + own time up to the first launch call, per op "
      "name the median, weighted by ops");
  add("host_after_launch_ns", calib::grouped_median_mean(s.launch_ops_after, B, ++seed),
      calib::total_count(s.launch_ops_after),
      "the same ops' own time after their first launch call, launch and sync calls excluded, per op name the "
      "median, weighted by ops");
  add("host_range_ns", calib::grouped_median_mean(s.boundaries, B, ++seed), calib::total_count(s.boundaries),
      "host gap before each range push and pop: per kind the median, weighted");
  const auto n_launch_ops = calib::total_count(s.launch_ops);
  if (n_launch_ops > 0) {
    add("launches_per_op",
        model::Interval::exact(static_cast<double>(s.launches_in_launch_ops) / static_cast<double>(n_launch_ops)),
        n_launch_ops, "launch calls / top-level ops that launch");
    add("plain_ops_per_launch_op",
        model::Interval::exact(static_cast<double>(calib::total_count(s.plain_ops)) /
                               static_cast<double>(n_launch_ops)),
        n_launch_ops, "top-level ops that launch nothing / top-level ops that launch");
  }
  std::vector<double> all_kernels;
  for (const auto& [k, v] : s.kernels) all_kernels.insert(all_kernels.end(), v.begin(), v.end());
  add("kernel_floor_ns", calib::quantile_ci(all_kernels, 0.1, B, ++seed), static_cast<std::int64_t>(all_kernels.size()),
      "10th percentile of kernel durations");
  add("copy_floor_ns", calib::median_ci(s.small_copy_ns, B, ++seed), static_cast<std::int64_t>(s.small_copy_ns.size()),
      "median duration of host copies < 64 KiB");
}

// Kernel durations per class (kernel_class_of), with intervals.
void add_kernel_classes(const Samples& s, int B, std::uint64_t& seed, TraceCalibration& out) {
  std::map<std::string, std::vector<double>> classes;
  std::map<std::string, int> class_names;
  for (const auto& [k, v] : s.kernels) {
    const std::string c = kernel_class_of(k);
    classes[c].insert(classes[c].end(), v.begin(), v.end());
    class_names[c]++;
  }
  for (const auto& [c, v] : classes)
    out.kernel_classes.push_back({c, calib::median_ci(v, B, ++seed), model::quantile(v, 0.1), model::quantile(v, 0.9),
                                  static_cast<std::int64_t>(v.size()), class_names[c]});
}

// The profile's fitted part: its name and description, each estimated field with its
// source, and the kernel table (per name, for the simulator: the kMaxProfileKernels with
// the most GPU time).
void fill_fitted_profile(const std::vector<TraceInput>& traces, const TraceSamples& ts,
                         const TraceCalibrationOptions& opt, TraceCalibration& out) {
  model::GpuProfile& p = out.profile;
  const std::string& gpu_name = ts.gpu_name;
  p.name = !opt.name.empty() ? opt.name : (gpu_name.empty() ? "fitted" : model::profile_slug(gpu_name) + "-fitted");
  p.description = fmt::format("{} fitted from {} trace(s) by syncscope calibrate --from-trace{}",
                              gpu_name.empty() ? "a GPU" : gpu_name, traces.size(),
                              opt.base ? ", other fields from " + opt.base_label : "");
  p.measured = true;
  std::vector<std::string> files;
  for (const auto& t : traces) files.push_back(basename_of(t.path));
  p.measured_on = fmt::format("{}, {}, from trace(s) {}", opt.date_utc, gpu_name.empty() ? "unknown GPU" : gpu_name,
                              fmt::join(files, ", "));
  for (const auto& e : out.estimates) {
    if (e.field == "sm_count") p.sm_count = static_cast<int>(e.value.value);
    else *field_ptr(p, e.field) = e.value.value;
    p.sources[e.field] = fmt::format("fitted from trace: {}; {} events; 90% interval {:.6g}..{:.6g}", e.estimator,
                                     e.events, e.value.lo, e.value.hi);
  }
  const Samples& s = ts.s;
  std::vector<std::pair<double, std::string>> by_total;
  for (const auto& [k, v] : s.kernels) by_total.emplace_back(std::accumulate(v.begin(), v.end(), 0.0), k);
  std::sort(by_total.rbegin(), by_total.rend());
  for (std::size_t i = 0; i < by_total.size() && i < kMaxProfileKernels; ++i) {
    const std::string& key = by_total[i].second;
    const auto& v = s.kernels.at(key);
    model::FittedKernel k{key, kernel_class_of(key), model::quantile(v, 0.5), static_cast<std::int64_t>(v.size())};
    if (auto b = s.kernel_host_before.find(key); b != s.kernel_host_before.end()) {
      k.host_before_ns = model::quantile(b->second, 0.5);
      k.host_after_ns = model::quantile(s.kernel_host_after.at(key), 0.5);
      k.host_events = static_cast<std::int64_t>(b->second.size());
    }
    p.kernels.push_back(std::move(k));
  }
}

// The fields no trace gave: from the base profile, marked as such (a warning each), or an
// error naming every required one when there is no base.
void fill_from_base(const std::string& gpu_name, const TraceCalibrationOptions& opt, TraceCalibration& out) {
  model::GpuProfile& p = out.profile;
  std::vector<std::string> missing;
  for (const auto& n : kNeeds) {
    const std::string f = n.field;
    if (out.find(f)) continue;
    // A base field counts when it has a value (or, for the flag, a stated source).
    const bool in_base =
        opt.base && (f == "unified_memory" ? opt.base->sources.count(f) > 0 : field_value(*opt.base, f) > 0);
    if (in_base) {
      if (f == "sm_count") p.sm_count = opt.base->sm_count;
      else if (f == "unified_memory") p.unified_memory = opt.base->unified_memory;
      else *field_ptr(p, f) = field_value(*opt.base, f);
      auto src = opt.base->sources.find(f);
      p.sources[f] = fmt::format("from base profile {}: {}", opt.base_label,
                                 src != opt.base->sources.end() ? src->second : "(no source given)");
      out.from_base.push_back(f);
      out.warnings.push_back(
          fmt::format("{}: not in the trace(s) (needs {}); taken from base profile {}", f, n.events, opt.base_label));
    } else if (n.required) {
      missing.push_back(fmt::format("  {}: needs {}", f, n.events));
    }
  }
  if (opt.base && !opt.base->kernels.empty() && p.kernels.empty()) {
    p.kernels = opt.base->kernels;
    out.warnings.push_back(
        fmt::format("kernels: no kernel records in the trace(s); the kernel table of base profile "
                    "{} is kept",
                    opt.base_label));
  }
  if (!missing.empty())
    throw InputError(fmt::format(
        "calibrate --from-trace: the trace(s) cannot give {} required profile field(s), and no --base profile was "
        "given:\n{}\nPass --base PROFILE (a shipped name such as {} or a profile file) to take them from it; the "
        "profile marks each such field as taken from the base",
        missing.size(), fmt::join(missing, "\n"),
        gpu_name.empty() ? "H200" : fmt::format("H200; the trace's GPU is \"{}\"", gpu_name)));
}

// Where the profile came from: the traces and their hashes, the GPU, the date, the base.
void add_provenance(const std::vector<TraceInput>& traces, const TraceSamples& ts, const std::string& host_kind,
                    const TraceCalibrationOptions& opt, model::GpuProfile& p) {
  std::vector<std::string> files, hashes;
  for (const auto& t : traces) {
    files.push_back(basename_of(t.path));
    hashes.push_back(t.sha256.empty() ? "unknown" : t.sha256);
  }
  p.provenance["traces"] = fmt::format("{}", fmt::join(files, "; "));
  p.provenance["trace_sha256"] = fmt::format("{}", fmt::join(hashes, "; "));
  p.provenance["gpu"] = ts.gpu_name.empty() ? "unknown (no deviceProperties)" : ts.gpu_name;
  p.provenance["date_utc"] = opt.date_utc;
  p.provenance["base"] = opt.base ? opt.base_label : "none";
  p.provenance["host_costs"] = host_kind;
  p.provenance["windows"] = fmt::format("{}", fmt::join(ts.windows_text, "; "));
  p.provenance["tool"] = "syncscope calibrate --from-trace";
}

}  // namespace

const FittedEstimate* TraceCalibration::find(const std::string& field) const {
  for (const auto& e : estimates)
    if (e.field == field) return &e;
  return nullptr;
}

TraceCalibration calibrate_from_traces(const std::vector<TraceInput>& traces, const TraceCalibrationOptions& opt) {
  SYNCSCOPE_INPUT_ERROR_IF(traces.empty(), "calibrate --from-trace: no trace given");
  TraceCalibration out;
  const TraceSamples ts = collect_samples(traces, opt);
  out.notes.push_back("fitted from " + fmt::format("{}", fmt::join(ts.windows_text, "; ")));

  std::uint64_t seed = opt.seed;
  add_estimates(ts, opt.bootstrap, seed, out);
  add_kernel_classes(ts.s, opt.bootstrap, seed, out);

  // The profile: fitted fields, then the base's, marked.
  const std::string host_kind = host_cost_kind(traces);
  fill_fitted_profile(traces, ts, opt, out);
  fill_from_base(ts.gpu_name, opt, out);
  add_provenance(traces, ts, host_kind, opt, out.profile);
  out.notes.push_back("host costs: " + host_kind);
  if (ts.s.syncs_idle > 0)
    out.notes.push_back(
        fmt::format("{} of {} syncs found the GPU idle and do not enter the round trip", ts.s.syncs_idle, ts.s.syncs));
  return out;
}

}  // namespace syncscope::calibrate
