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
#include "syncscope/pipeline/backend_wire.hpp"

namespace syncscope::pipeline {

namespace fs = std::filesystem;

namespace {

// Takes a buffer the backend filled, hands the memory back to it, and returns the bytes.
class Bytes {
 public:
  explicit Bytes(const BackendTable* table) : table_(table) {}
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes() { table_->release(&b_); }
  BackendBytes* out() { return &b_; }
  std::string str() const { return b_.data != nullptr ? std::string(b_.data, b_.size) : std::string(); }

 private:
  const BackendTable* table_;
  BackendBytes b_{nullptr, 0};
};

// Rethrows what a table function reported.
void check(int status, const std::string& error, const fs::path& file) {
  if (status == kBackendOk) return;
  const std::string msg = error.empty() ? "the measured backend " + file.string() + " failed without a message" : error;
  if (status == kBackendInputError) throw InputError(msg);
  throw Error(msg);
}

// Calls a table function that fills one buffer and rethrows what it reported.
template <class F>
std::string call(const BackendTable* table, const fs::path& file, F&& f) {
  Bytes out(table), error(table);
  const int status = f(out.out(), error.out());  // before reading `error`
  check(status, error.str(), file);
  return out.str();
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

}  // namespace

MeasuredBackend::MeasuredBackend(fs::path file, const BackendTable* table) : file_(std::move(file)), table_(table) {}

bool MeasuredBackend::device_available(std::string* why) const {
  Bytes reason(table_);
  const bool ok = table_->device_available(reason.out()) == 1;
  if (!ok && why != nullptr) *why = reason.str().empty() ? "the measured backend found no CUDA device" : reason.str();
  return ok;
}

Trace MeasuredBackend::measure(const MeasureRequest& request) const {
  const std::string wire = to_wire(request);
  return trace_from_wire(call(table_, file_, [&](BackendBytes* out, BackendBytes* error) {
    return table_->measure(wire.data(), wire.size(), out, error);
  }));
}

std::string MeasuredBackend::fix_device_choice(const program::StepOptions& options, fixes::Fix fix,
                                               std::string* why) const {
  const std::string wire = to_wire(options);
  Bytes reason(table_);
  std::string choice = call(table_, file_, [&](BackendBytes* out, BackendBytes* error) {
    return table_->fix_device_choice(wire.data(), wire.size(), static_cast<std::uint32_t>(fix), out, reason.out(),
                                     error);
  });
  if (why != nullptr) *why = reason.str();
  return choice;
}

RuntimeVersions MeasuredBackend::runtime_versions() const {
  return runtime_versions_from_wire(call(table_, file_, [&](BackendBytes* out, BackendBytes* error) {
    return table_->runtime_versions(out, error);
  }));
}

model::CalibrationMeasurements MeasuredBackend::calibrate(const model::CalibrationOptions& options) const {
  const std::string wire = to_wire(options);
  return calibration_measurements_from_wire(call(table_, file_, [&](BackendBytes* out, BackendBytes* error) {
    return table_->calibrate(wire.data(), wire.size(), out, error);
  }));
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
  if (table == nullptr || table->abi_version != kBackendAbiVersion || table->table_size != sizeof(BackendTable) ||
      table->layout_hash != backend_layout_hash()) {
    r.error = file.string() + ": its entry point " + kBackendEntryPoint + " returned " +
              (table == nullptr ? std::string("no interface")
                                : "ABI version " + std::to_string(table->abi_version) + " (table of " +
                                      std::to_string(table->table_size) + " bytes, layout " +
                                      std::to_string(table->layout_hash) + ")") +
              "; this syncscope needs ABI version " + std::to_string(kBackendAbiVersion) + " (layout " +
              std::to_string(backend_layout_hash()) + "): rebuild the backend";
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
