#include "syncscope/tracer/tracer.hpp"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "cupti_session.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"

// NVTX static injection (nvtx3/nvtxDetail/nvtxInit.h, loader version 2): a program linked
// with this library sends its NVTX calls to CUPTI without NVTX_INJECTION64_PATH, so the
// in-process Tracer sees the ranges of syncscope::nvtx. The NVTX headers declare this
// pointer weak; this strong definition wins at link time. An NVTX_INJECTION64_PATH set in
// the environment still takes precedence (the loader checks it first).
extern "C" {
typedef const void* (*SyncscopeNvtxGetExportTable)(std::uint32_t);
typedef int (*SyncscopeNvtxInitializeInjection)(SyncscopeNvtxGetExportTable);
// Exported by libcupti (nm -D libcupti.so: InitializeInjectionNvtx2), not declared by a header.
int InitializeInjectionNvtx2(SyncscopeNvtxGetExportTable get_export_table);
__attribute__((visibility("default"))) SyncscopeNvtxInitializeInjection InitializeInjectionNvtx2_fnptr =
    &InitializeInjectionNvtx2;
}

namespace syncscope {
namespace {

using cupti_detail::Session;

}  // namespace

bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why != nullptr) {
      *why = e != cudaSuccess
                 ? std::string(cudaGetErrorString(e)) + " (cudaGetDeviceCount error " + std::to_string(e) + ")"
                 : std::string("cudaGetDeviceCount reports no device");
    }
    // Reset the runtime's last-error state so the caller's next check does not see it.
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

std::uint32_t cupti_version() {
  std::uint32_t v = 0;
  return cuptiGetVersion(&v) == CUPTI_SUCCESS ? v : 0;
}

struct Tracer::Impl {
  TracerOptions options;
  bool running = false;
  bool have_trace = false;
  Trace trace;
  TracerStats stats;
};

Tracer::Tracer(TracerOptions options) : impl_(std::make_unique<Impl>()) { impl_->options = std::move(options); }

Tracer::~Tracer() {
  try {
    stop();
  } catch (...) {
    // A destructor never throws; stop() failures were already reflected in the trace.
  }
}

void Tracer::start() {
  if (impl_->running) return;
  cupti_detail::SessionConfig config;
  config.activities = impl_->options.activities;
  config.pipeline.buffer_bytes = impl_->options.buffer_bytes;
  config.pipeline.cap_bytes = impl_->options.buffer_cap_bytes;
  config.pipeline.max_record_bytes = impl_->options.max_record_bytes;
  config.trace_name = impl_->options.trace_name;
  Session& session = Session::instance();
  cupti_detail::Status s = session.open(config);
  if (!s.ok()) {
    if (s.code == CUPTI_ERROR_INVALID_OPERATION) throw Error("syncscope::Tracer::start: " + s.what);
    // CUPTI's own code for a machine without a usable GPU is often just UNKNOWN; ask the
    // runtime (only now, so a working start never initializes CUDA before CUPTI attaches).
    int devices = 0;
    const cudaError_t dc = cudaGetDeviceCount(&devices);
    if (dc != cudaSuccess || devices == 0)
      throw CudaError(std::string("syncscope::Tracer::start: no CUDA device (cudaGetDeviceCount: ") +
                          (dc != cudaSuccess ? cudaGetErrorString(dc) : "0 devices") +
                          "), nothing to trace; CUPTI said: " + s.what,
                      static_cast<int>(s.code));
    throw CudaError("syncscope::Tracer::start: " + s.what, static_cast<int>(s.code));
  }
  s = session.enable();
  if (!s.ok()) {
    (void)session.close(nullptr);
    throw CudaError("syncscope::Tracer::start: " + s.what, static_cast<int>(s.code));
  }
  impl_->running = true;
  impl_->have_trace = false;
}

void Tracer::stop() {
  if (!impl_->running) return;
  impl_->running = false;
  Session& session = Session::instance();
  // Recording stops first, so the synchronization below is not part of the trace. Records
  // are complete only once the work they describe is (cuptiActivityFlushAll does not
  // synchronize); the sync also makes cuptiFinalize below safe (cupti_activity.h).
  const cupti_detail::Status off = session.disable();
  const cudaError_t sync = cudaDeviceSynchronize();
  impl_->trace = session.close(&impl_->stats);
  if (!off.ok()) impl_->trace.meta.extra["warning_disable"] = off.what;
  impl_->have_trace = true;
  if (sync != cudaSuccess)
    impl_->trace.meta.extra["warning_stop"] = std::string("cudaDeviceSynchronize at stop: ") + cudaGetErrorString(sync);
  if (impl_->options.finalize_on_stop) {
    cupti_detail::Status f = session.finalize();
    if (!f.ok()) impl_->trace.meta.extra["warning_finalize"] = f.what;
  }
}

bool Tracer::running() const { return impl_->running; }

Trace Tracer::take() {
  if (impl_->running) stop();
  Trace t = std::move(impl_->trace);
  impl_->trace = Trace{};
  impl_->have_trace = false;
  return t;
}

void Tracer::write(const std::filesystem::path& path, bool overwrite) {
  Trace t = take();
  WriteOptions o;
  o.format = TraceFormat::Auto;
  o.overwrite = overwrite;
  write_trace(t, path, o);
}

TracerStats Tracer::stats() const { return impl_->stats; }

}  // namespace syncscope
