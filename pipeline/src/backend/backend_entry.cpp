// libsyncscope_backend.so's entry point: the table of backend_abi.hpp, each function a
// wrapper that turns exceptions into a status and a message (nothing is thrown across the
// library boundary). What each function does is in backend_measure.cpp and
// backend_calibrate.cpp; a build without a part reports it as unavailable.
#include <exception>
#include <string>

#include "backend_parts.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::pipeline {
namespace {

template <class F>
int guarded(std::string* error, F&& f) noexcept {
  try {
    f();
    return kBackendOk;
  } catch (const InputError& e) {
    if (error != nullptr) *error = e.what();
    return kBackendInputError;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = e.what();
    return kBackendError;
  } catch (...) {
    if (error != nullptr) *error = "the measured backend failed with an unknown exception";
    return kBackendError;
  }
}

int device_available(std::string* why) noexcept {
  std::string error;
  bool ok = false;
  if (guarded(&error, [&] { ok = backend::device_available(why); }) != kBackendOk) {
    if (why != nullptr) *why = error;
    return 0;
  }
  return ok ? 1 : 0;
}

int measure(const MeasureRequest* request, Trace* out, std::string* error) noexcept {
  return guarded(error, [&] { *out = backend::measure(*request); });
}

int moe_expert_gemm(const kernels::StepOptions* options, std::string* out, std::string* why, std::string* error) noexcept {
  return guarded(error, [&] { *out = backend::moe_expert_gemm(*options, why); });
}

int runtime_versions(RuntimeVersions* out, std::string* error) noexcept {
  return guarded(error, [&] { *out = backend::runtime_versions(); });
}

int calibrate(const CalibrationOptions* options, CalibrationMeasurements* out, std::string* error) noexcept {
  return guarded(error, [&] { *out = backend::calibrate(*options); });
}

const BackendTable& table() {
  static const std::string key = backend_build_key();
  static const std::string description = backend::description();
  static const BackendTable t{kBackendAbiVersion, sizeof(BackendTable), key.c_str(), description.c_str(),
                              backend::capabilities(), &device_available, &measure, &moe_expert_gemm,
                              &runtime_versions, &calibrate};
  return t;
}

}  // namespace
}  // namespace syncscope::pipeline

extern "C" const syncscope::pipeline::BackendTable* syncscope_backend_v1(void) {
  return &syncscope::pipeline::table();
}
