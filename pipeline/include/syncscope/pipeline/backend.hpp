// Loading the measured backend (libsyncscope_backend.so, backend_abi.hpp) on demand, so the
// `syncscope` executable itself links no LibTorch, c10, cudart, cuBLAS or CUPTI and starts
// in milliseconds; only `run` (when measuring) and `calibrate` pay for loading them.
//
// Where it is looked for, first found wins:
//   1. $SYNCSCOPE_BACKEND_LIBRARY (a file; when set, nothing else is tried);
//   2. next to the running executable (the build tree puts it beside cli/syncscope);
//   3. the executable's install prefix: <bin>/../lib/syncscope/, <bin>/../lib/;
//   4. the install prefix configured at build time (<libdir>/syncscope/).
// A failure says which file and why (dlerror, a missing entry point, a build-key mismatch).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/pipeline/backend_abi.hpp"
#include "syncscope/pipeline/backend_wire.hpp"

namespace syncscope::pipeline {

inline constexpr const char* kBackendFileName = "libsyncscope_backend.so";

// A loaded backend. Its library stays loaded for the life of the process (LibTorch and the
// CUDA runtime do not support being unloaded). Calls rethrow the backend's failures as
// syncscope::Error / InputError.
class MeasuredBackend {
 public:
  MeasuredBackend(std::filesystem::path file, const BackendTable* table);

  const std::filesystem::path& file() const { return file_; }
  std::string description() const { return table_->description; }
  bool can_measure() const { return (table_->capabilities & kBackendMeasure) != 0; }
  bool can_calibrate() const { return (table_->capabilities & kBackendCalibrate) != 0; }

  // True when a CUDA device can be measured on; otherwise `why` says why.
  bool device_available(std::string* why) const;
  Trace measure(const MeasureRequest& request) const;
  // What registered fix `fix` resolves on the device for `options` (BackendTable::fix_device_choice).
  std::string fix_device_choice(const program::StepOptions& options, fixes::Fix fix, std::string* why) const;
  RuntimeVersions runtime_versions() const;
  model::CalibrationMeasurements calibrate(const model::CalibrationOptions& options) const;

 private:
  std::filesystem::path file_;
  const BackendTable* table_;
};

// The result of looking for the backend: `backend` when loaded, else `error` naming the
// file(s) and why.
struct BackendLoad {
  std::shared_ptr<const MeasuredBackend> backend;
  std::string error;
};

// The candidate files, in the order above (step 1 alone when the variable is set).
std::vector<std::filesystem::path> backend_candidates();

// Loads `file` (RTLD_NOW | RTLD_LOCAL) and checks its entry point and build key.
BackendLoad load_backend_file(const std::filesystem::path& file);

// Loads the first candidate that exists; `explicit_file` (non-empty) replaces the search.
// Loaded once per process and file: later calls return the same backend (or error).
BackendLoad load_measured_backend(const std::filesystem::path& explicit_file = {});

}  // namespace syncscope::pipeline
