// C++20 side of `syncscope calibrate`: runs the CUDA microbenchmarks and turns their
// failures into syncscope errors (CudaError for a failed call, Error when no GPU is there).
#include <filesystem>

#include "calibrate_impl.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/model/calibration.hpp"
#include "syncscope/model/calibration_profile.hpp"

namespace syncscope::model {

CalibrationMeasurements run_calibration(const CalibrationOptions& options) {
  CalibrationMeasurements m;
  try {
    m = calibrate_detail::run(options);
  } catch (const calibrate_detail::NoDevice& e) {
    throw Error(std::string("calibrate: ") + e.what() +
                ": calibrate measures a real GPU; the shipped profiles "
                "(model/profiles) hold datasheet values");
  } catch (const calibrate_detail::Failure& e) {
    throw CudaError(std::string("calibrate: ") + e.what(), e.code);
  }
  // The kernel driver's version is not in the CUDA runtime API; Linux exposes it here.
  std::error_code ec;
  if (std::filesystem::exists("/proc/driver/nvidia/version", ec)) {
    try {
      m.driver_version = parse_nvidia_driver_version(read_file("/proc/driver/nvidia/version"));
    } catch (const Error&) {
      m.driver_version.clear();  // unreadable: measured_on says "unknown"
    }
  }
  return m;
}

}  // namespace syncscope::model
