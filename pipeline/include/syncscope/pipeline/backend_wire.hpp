// What crosses the measured backend's C interface (backend_abi.hpp), as bytes: the requests
// and results as JSON (each object carries "wire": kBackendWireVersion), the trace as
// syncscope's Chrome JSON (lossless: tests/io round-trips every field). Both sides compile
// this file; parsing is strict (a missing or mistyped field is an Error naming it).
#pragma once

#include <string>
#include <string_view>

#include "syncscope/model/calibration.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::pipeline {

inline constexpr int kBackendWireVersion =
    2;  // 2: the fixes' step options by fix id (fix_variants, fix_numbers, fix_words)

// One measured variant: run `warmup_steps` untraced steps, then `repeat_steps` traced steps
// delimited by NVTX ranges "ProfilerStep#<i>" (the names torch.profiler gives steps).
struct MeasureRequest {
  program::StepOptions options;  // device is set to "cuda" by the backend
  int warmup_steps = 0;
  int repeat_steps = 1;
  std::string trace_name;
};

// Provenance of a measured run ("" where unknown).
struct RuntimeVersions {
  std::string driver;        // cudaDriverGetVersion, "13.0"
  std::string cuda_runtime;  // cudaRuntimeGetVersion, "13.0"
  std::string libtorch;      // "2.11.0"
};

std::string to_wire(const program::StepOptions& options);
std::string to_wire(const MeasureRequest& request);
std::string to_wire(const RuntimeVersions& versions);
std::string to_wire(const model::CalibrationOptions& options);
std::string to_wire(const model::CalibrationMeasurements& measurements);
std::string trace_to_wire(const Trace& trace);

program::StepOptions step_options_from_wire(std::string_view bytes);
MeasureRequest measure_request_from_wire(std::string_view bytes);
RuntimeVersions runtime_versions_from_wire(std::string_view bytes);
model::CalibrationOptions calibration_options_from_wire(std::string_view bytes);
model::CalibrationMeasurements calibration_measurements_from_wire(std::string_view bytes);
Trace trace_from_wire(std::string_view bytes);

}  // namespace syncscope::pipeline
