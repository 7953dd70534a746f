// Finds and loads libsyncscope_backend.so with dlopen (see backend.hpp for the search
// order), checks its entry point and build key, and turns its status codes back into
// syncscope errors.
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <system_error>

#include "syncscope/core/error.hpp"
#include "syncscope/pipeline/backend.hpp"

namespace syncscope::pipeline {

namespace fs = std::filesystem;

namespace {

// Rethrows what a table function reported.
void check(int status, const std::string& error, const fs::path& file) {
  if (status == kBackendOk) return;
  const std::string msg = error.empty() ? "the measured backend " + file.string() + " failed without a message" : error;
  if (status == kBackendInputError) throw InputError(msg);
  throw Error(msg);
}

// Calls a table function that fills an Out and rethrows what it reported.
template <class Out, class F>
Out call(const fs::path& file, F&& f) {
  Out out{};
  std::string error;
  check(f(&out, &error), error, file);
  return out;
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

}  // namespace

MeasuredBackend::MeasuredBackend(fs::path file, const BackendTable* table) : file_(std::move(file)), table_(table) {}

bool MeasuredBackend::device_available(std::string* why) const {
  std::string reason;
  const bool ok = table_->device_available(&reason) == 1;
  if (!ok && why != nullptr) *why = reason.empty() ? "the measured backend found no CUDA device" : reason;
  return ok;
}

Trace MeasuredBackend::measure(const MeasureRequest& request) const {
  return call<Trace>(file_, [&](Trace* out, std::string* error) { return table_->measure(&request, out, error); });
}

std::string MeasuredBackend::moe_expert_gemm(const kernels::StepOptions& options, std::string* why) const {
  std::string reason;
  std::string gemm = call<std::string>(file_, [&](std::string* out, std::string* error) {
    return table_->moe_expert_gemm(&options, out, &reason, error);
  });
  if (why != nullptr) *why = reason;
  return gemm;
}

RuntimeVersions MeasuredBackend::runtime_versions() const {
  return call<RuntimeVersions>(file_, [&](RuntimeVersions* out, std::string* error) {
    return table_->runtime_versions(out, error);
  });
}

CalibrationMeasurements MeasuredBackend::calibrate(const CalibrationOptions& options) const {
  return call<CalibrationMeasurements>(file_, [&](CalibrationMeasurements* out, std::string* error) {
    return table_->calibrate(&options, out, error);
  });
}

std::vector<fs::path> backend_candidates() {
  std::vector<fs::path> c;
  if (const char* e = std::getenv("SYNCSCOPE_BACKEND_LIBRARY"); e != nullptr && *e) {
    c.emplace_back(e);
    return c;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path bin = self.parent_path();
    c.push_back(bin / kBackendFileName);
    c.push_back(bin.parent_path() / "lib" / "syncscope" / kBackendFileName);
    c.push_back(bin.parent_path() / "lib" / kBackendFileName);
  }
#ifdef SYNCSCOPE_BACKEND_INSTALL_PATH
  c.emplace_back(SYNCSCOPE_BACKEND_INSTALL_PATH);
#endif
  return c;
}

BackendLoad load_backend_file(const fs::path& file) {
  BackendLoad r;
  // RTLD_LOCAL: the backend's LibTorch, CUDA and (hidden) syncscope symbols stay its own.
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    r.error = "cannot load the measured backend " + file.string() + ": " + dl_error();
    return r;
  }
  ::dlerror();
  void* sym = ::dlsym(handle, kBackendEntryPoint);
  if (sym == nullptr) {
    r.error = file.string() + " is not a syncscope measured backend of ABI version " +
              std::to_string(kBackendAbiVersion) + " (no entry point " + kBackendEntryPoint + ": " + dl_error() + ")";
    return r;  // the handle stays open: unloading what it loaded is not safe either
  }
  using Entry = const BackendTable* (*)();
  const BackendTable* table = reinterpret_cast<Entry>(sym)();
  if (table == nullptr || table->abi_version != kBackendAbiVersion || table->table_size != sizeof(BackendTable)) {
    r.error = file.string() + ": its entry point " + kBackendEntryPoint + " returned " +
              (table == nullptr ? std::string("no interface")
                                : "ABI version " + std::to_string(table->abi_version) + " (table of " +
                                      std::to_string(table->table_size) + " bytes)") +
              "; this syncscope needs ABI version " + std::to_string(kBackendAbiVersion) + ": rebuild the backend";
    return r;
  }
  const std::string key = backend_build_key();
  if (table->build_key == nullptr || key != table->build_key) {
    r.error = file.string() + " was built differently from this syncscope (backend: " +
              (table->build_key != nullptr ? table->build_key : "no build key") + "; syncscope: " + key +
              "): rebuild both from the same tree";
    return r;
  }
  r.backend = std::make_shared<const MeasuredBackend>(file, table);
  return r;
}

BackendLoad load_measured_backend(const fs::path& explicit_file) {
  static std::mutex mu;
  static std::map<fs::path, BackendLoad> loaded;  // by the file asked for ("" : the search)
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(explicit_file); it != loaded.end()) return it->second;
  BackendLoad r;
  const std::vector<fs::path> candidates = explicit_file.empty() ? backend_candidates() : std::vector{explicit_file};
  std::error_code ec;
  for (const auto& c : candidates) {
    if (!fs::exists(c, ec)) continue;
    r = load_backend_file(c);
    break;
  }
  if (!r.backend && r.error.empty()) {
    std::string tried;
    for (const auto& c : candidates) tried += (tried.empty() ? "" : ", ") + c.string();
    r.error = std::string("the measured backend ") + kBackendFileName + " was not found (looked for " + tried +
              "; it is built with CUDA or LibTorch; SYNCSCOPE_BACKEND_LIBRARY names another file)";
  }
  loaded.emplace(explicit_file, r);
  return r;
}

}  // namespace syncscope::pipeline
