// libsyncscope_backend.so's entry point: the C table of backend_abi.hpp, each function a
// wrapper that reads its request from bytes, turns exceptions into a status and a message
// (nothing is thrown across the library boundary) and writes its result as bytes
// (backend_wire.hpp). What each function does is in backend_measure.cpp and
// backend_calibrate.cpp; a build without a part reports it as unavailable.
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "backend_parts.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::pipeline {
namespace {

// A filled buffer of the backend's (freed by release below).
void put(BackendBytes* out, const std::string& s) {
  if (out == nullptr) return;
  out->data = nullptr;
  out->size = 0;
  if (s.empty()) return;
  out->data = new char[s.size()];
  std::memcpy(out->data, s.data(), s.size());
  out->size = s.size();
}

void release(BackendBytes* bytes) noexcept {
  if (bytes == nullptr) return;
  delete[] bytes->data;
  bytes->data = nullptr;
  bytes->size = 0;
}

template <class F>
std::int32_t guarded(BackendBytes* error, F&& f) noexcept {
  try {
    f();
    return kBackendOk;
  } catch (const InputError& e) {
    put(error, e.what());
    return kBackendInputError;
  } catch (const std::exception& e) {
    put(error, e.what());
    return kBackendError;
  } catch (...) {
    put(error, "the measured backend failed with an unknown exception");
    return kBackendError;
  }
}

std::int32_t device_available(BackendBytes* why) noexcept {
  BackendBytes error{nullptr, 0};
  bool ok = false;
  std::string reason;
  if (guarded(&error, [&] { ok = backend::device_available(&reason); }) != kBackendOk) {
    if (why != nullptr) *why = error;
    else release(&error);
    return 0;
  }
  if (!ok) {
    try {
      put(why, reason);
    } catch (...) {
    }
  }
  return ok ? 1 : 0;
}

std::int32_t measure(const char* request, std::uint64_t size, BackendBytes* trace, BackendBytes* error) noexcept {
  return guarded(error, [&] {
    const Trace t = backend::measure(measure_request_from_wire(std::string_view(request, size)));
    put(trace, trace_to_wire(t));
  });
}

std::int32_t fix_device_choice(const char* options, std::uint64_t size, std::uint32_t fix, BackendBytes* choice,
                               BackendBytes* why, BackendBytes* error) noexcept {
  return guarded(error, [&] {
    std::string reason;
    put(choice, backend::fix_device_choice(step_options_from_wire(std::string_view(options, size)), fix, &reason));
    put(why, reason);
  });
}

std::int32_t runtime_versions(BackendBytes* versions, BackendBytes* error) noexcept {
  return guarded(error, [&] { put(versions, to_wire(backend::runtime_versions())); });
}

std::int32_t calibrate(const char* options, std::uint64_t size, BackendBytes* measurements,
                       BackendBytes* error) noexcept {
  return guarded(error, [&] {
    put(measurements, to_wire(backend::calibrate(calibration_options_from_wire(std::string_view(options, size)))));
  });
}

const BackendTable& table() {
  static const bool fixes_registered = (backend::register_fixes(), true);  // at load: the loader asks first
  (void)fixes_registered;
  static const std::string key = backend_build_key();
  static const std::string description = backend::description();
  static const BackendTable t{kBackendAbiVersion,
                              sizeof(BackendTable),
                              backend_layout_hash(),
                              key.c_str(),
                              description.c_str(),
                              backend::capabilities(),
                              &device_available,
                              &measure,
                              &fix_device_choice,
                              &runtime_versions,
                              &calibrate,
                              &release};
  return t;
}

}  // namespace
}  // namespace syncscope::pipeline

extern "C" const syncscope::pipeline::BackendTable* syncscope_backend_v3(void) { return &syncscope::pipeline::table(); }
