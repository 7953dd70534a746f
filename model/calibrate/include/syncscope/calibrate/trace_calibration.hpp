// `syncscope calibrate --from-trace`: a GPU profile estimated from torch.profiler (or
// syncscope) traces of a user's own run, no microbenchmarks, no CUDA. Each parameter a trace
// shows comes with a 90% interval and the number of events behind it; what a trace cannot
// show comes from a base profile, marked field by field. model/README.md ("Calibrating from
// a trace") says which trace events feed which parameter and how.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/interval.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::calibrate {

inline constexpr int kTraceCalibrationSchemaVersion = 1;

struct TraceCalibrationOptions {
  std::string step_glob = "ProfilerStep#*";  // step ranges; none: the whole trace
  int max_steps = 0;                         // fit from the first N step ranges only (0: all)
  // Steps longer than this times the median step are warm-up (the profiler's start-up, first
  // calls' set-up) or outliers, not fitted from; 0 keeps every step.
  double warmup_factor = 1.5;
  std::optional<model::GpuProfile> base;  // what the traces cannot show
  std::string base_label;                 // how the user named it ("H200", a file)
  std::string name;                       // profile name; "" -> from the GPU's name
  std::string date_utc;                   // for provenance (the caller's clock)
  int bootstrap = 1000;
  std::uint64_t seed = 20261130;
};

// One trace to fit from. `sha256` is the file's hash (hex), for provenance.
struct TraceInput {
  std::string path;
  std::string sha256;
  const Trace* trace = nullptr;
};

// A parameter estimated from the traces.
struct FittedEstimate {
  std::string field;      // the profile field ("sync_round_trip_ns", "host_op_ns", ...)
  model::Interval value;  // with its 90% interval
  std::int64_t events = 0;
  std::string estimator;  // what was measured how (also written as the field's source)
};

// Kernel time per class (gemm, attention, reduce, elementwise, other) at the traces' shapes.
struct KernelClassStats {
  std::string kernel_class;
  model::Interval median_ns;  // median duration with a bootstrap 90% interval
  double p10_ns = 0, p90_ns = 0;
  std::int64_t events = 0;
  int names = 0;  // distinct kernel names in the class
};

struct TraceCalibration {
  int schema_version = kTraceCalibrationSchemaVersion;
  model::GpuProfile profile;              // ready to write (gpu_profile_to_yaml)
  std::vector<FittedEstimate> estimates;  // from the traces
  std::vector<std::string> from_base;     // fields taken from the base profile
  std::vector<KernelClassStats> kernel_classes;
  std::vector<std::string> warnings;  // each field taken from the base, and why
  std::vector<std::string> notes;     // windows used, host-cost kind, ...
  const FittedEstimate* find(const std::string& field) const;
};

// Fits a profile. Throws InputError when a required field can be neither estimated nor taken
// from `options.base`, naming the field and the trace events that would have given it; when
// the traces disagree on the GPU; or when a trace holds no host or GPU records at all.
TraceCalibration calibrate_from_traces(const std::vector<TraceInput>& traces, const TraceCalibrationOptions& options);

// Kernel class by name: gemm (cuBLAS/cuBLASLt/CUTLASS GEMMs, matmul, bmm), attention
// (flash, fmha, sdpa), reduce (reductions, softmax, norms, split-K reduce), elementwise,
// or other.
std::string kernel_class_of(std::string_view kernel_name);
// The trace's kernel name without a leading "void " and its trailing parameter list.
std::string kernel_key(std::string_view kernel_name);

// The calibration as JSON (the table for people: reports/model_printers.hpp).
std::string calibration_to_json(const TraceCalibration& calibration);

// SHA-256 of a file, lowercase hex (FIPS 180-4; streamed in 1 MiB chunks).
std::string sha256_file(const std::string& path);
std::string sha256_hex(std::string_view bytes);

}  // namespace syncscope::calibrate
