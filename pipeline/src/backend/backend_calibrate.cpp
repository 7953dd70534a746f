// `syncscope calibrate` through the backend: the CUDA microbenchmarks of syncscope_calibrate
// (model/calibrate/src), present when the build has CUDA (SYNCSCOPE_BACKEND_CALIBRATE).
#include "backend_parts.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::pipeline::backend {

model::CalibrationMeasurements calibrate(const model::CalibrationOptions& options) {
#if SYNCSCOPE_BACKEND_CALIBRATE
  return model::run_calibration(options);
#else
  (void)options;
  throw Error(
      "this measured backend was built without CUDA: calibrate needs a build with -DSYNCSCOPE_ENABLE_CUDA=ON "
      "(nvcc and the CUDA toolkit with cuBLAS)");
#endif
}

}  // namespace syncscope::pipeline::backend
