// The CUPTI tracer, in process: records what a CUDA program does (kernels, copies, memsets,
// synchronizations, CUDA events, runtime/driver API calls, NVTX ranges, CUPTI overhead)
// into the trace model. For tracing another program, see `syncscope trace` and the
// injection library (libsyncscope_inject.so); both use the same decoder.
//
// Exists only in CUDA builds (target syncscope_tracer); this header includes no CUDA or
// CUPTI header.
//
//   syncscope::Tracer tracer;          // default activities, 256 MiB buffer cap
//   tracer.start();
//   ... CUDA work ...
//   tracer.stop();                     // synchronizes the device, flushes, detaches CUPTI
//   syncscope::Trace t = tracer.take();
//
// One tracing session per process at a time (CUPTI's activity callbacks are global):
// start() throws syncscope::Error while another Tracer (or the injection library) traces.
// Timestamps are UNIX-epoch nanoseconds (ClockBase::UnixEpoch) for GPU and host records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "syncscope/trace/trace.hpp"
#include "syncscope/tracer/activities.hpp"

namespace syncscope {

// What to record; a bit set. Spellings (parse_activities/activities_to_string):
// kernel, memcpy, memset, sync, event, runtime, driver, nvtx, overhead.
class Tracer {
 public:
  explicit Tracer(TracerOptions options = {});
  ~Tracer();  // stops a running session; never throws
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Registers the CUPTI callbacks and enables the activities. Throws CudaError when CUPTI
  // refuses (e.g. no driver/GPU), Error when another session is active.
  void start();
  // Disables the activities, synchronizes the device (untraced), forces a flush, waits for
  // the decoder and (finalize_on_stop) detaches CUPTI. No-op when not running.
  void stop();
  bool running() const;

  // The recorded trace (finalized: sorted, range depths). Leaves the tracer empty.
  Trace take();
  // take() and write it with syncscope::write_trace (format from the extension).
  void write(const std::filesystem::path& path, bool overwrite = false);
  TracerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the CUDA runtime reports at least one device; otherwise `why` (when given)
// receives the runtime's message ("CUDA driver version is insufficient ...").
bool cuda_device_available(std::string* why = nullptr);

// The CUPTI library version (cuptiGetVersion), 0 when unavailable.
std::uint32_t cupti_version();

}  // namespace syncscope
