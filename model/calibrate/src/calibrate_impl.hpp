// Private interface between the CUDA microbenchmarks (calibrate_impl.cu, compiled as C++17
// by nvcc) and the C++20 wrapper (calibrate.cpp) that turns failures into syncscope errors.
#pragma once

#include <stdexcept>
#include <string>

#include "syncscope/model/calibration.hpp"

namespace syncscope::calibrate_detail {

// A failed CUDA runtime or cuBLAS call: the call text, the error name and the code.
struct Failure : std::runtime_error {
  Failure(const std::string& what, int code) : std::runtime_error(what), code(code) {}
  int code;
};

// No GPU usable (cudaGetDeviceCount failed or reported none).
struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

model::CalibrationMeasurements run(const model::CalibrationOptions& options);

}  // namespace syncscope::calibrate_detail
