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

namespace syncscope {

// What to record; a bit set. Spellings (parse_activities/activities_to_string):
// kernel, memcpy, memset, sync, event, runtime, driver, nvtx, overhead.
enum TraceActivity : std::uint32_t {
  kActivityKernel = 1u << 0,    // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
  kActivityMemcpy = 1u << 1,    // MEMCPY and MEMCPY2 (peer copies)
  kActivityMemset = 1u << 2,    // MEMSET
  kActivitySync = 1u << 3,      // SYNCHRONIZATION (pending-query records off)
  kActivityEvent = 1u << 4,     // CUDA_EVENT (its own kind since CUDA 12.9)
  kActivityRuntime = 1u << 5,   // RUNTIME (every runtime API call, named)
  kActivityDriver = 1u << 6,    // DRIVER, launch and blocking calls only (see tracer.cpp)
  kActivityNvtx = 1u << 7,      // MARKER: NVTX push/pop and start/end ranges
  kActivityOverhead = 1u << 8,  // OVERHEAD
};
inline constexpr std::uint32_t kAllActivities = (1u << 9) - 1;
inline constexpr std::uint32_t kDefaultActivities = kAllActivities;

// Parses a comma-separated list ("kernel,memcpy,sync", "all", "default"); a leading '-'
// removes an activity from what precedes it ("all,-overhead"). Throws InputError naming the
// unknown word and the accepted ones.
std::uint32_t parse_activities(std::string_view list);
std::string activities_to_string(std::uint32_t activities);

struct TracerOptions {
  std::uint32_t activities = kDefaultActivities;
  // CUPTI activity buffers: each buffer_bytes (4 MiB, as libkineto and CUPTI's guidance of
  // 1-10 MiB), at most buffer_cap_bytes allocated at once; decoded buffers are reused.
  std::size_t buffer_bytes = std::size_t{4} << 20;
  std::size_t buffer_cap_bytes = std::size_t{256} << 20;
  // Stop decoding once this many bytes of records were decoded (0: no limit); later
  // records are counted in Trace::meta.dropped_records. Bounds the trace of a long run.
  std::size_t max_record_bytes = 0;
  std::string trace_name;
  // stop() calls cuptiFinalize so the program runs at full speed after tracing (libkineto
  // saw programs stay 10-20% slower without it).
  bool finalize_on_stop = true;
};

// Numbers about one tracing session, also written into Trace::meta.extra.
struct TracerStats {
  std::uint64_t records = 0;           // decoded into the trace model
  std::uint64_t dropped_by_cupti = 0;  // cuptiActivityGetNumDroppedRecords, summed
  std::uint64_t lost_to_cap = 0;       // records in buffers handed out over the cap
  std::uint64_t buffers_completed = 0;
  std::uint64_t buffers_allocated = 0;
  std::uint64_t peak_buffer_bytes = 0;
  std::uint64_t unknown_records = 0;  // kinds the decoder does not model (kept counted)
};

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
