// What a CUPTI tracing session records and how it is sized: the activity bits (as
// `--activities` and SYNCSCOPE_TRACE_ACTIVITIES spell them), the tracer's options and its
// statistics. Apart from syncscope/tracer/tracer.hpp (the Tracer class) so that what parses
// and prints these (the light `syncscope trace`, the injection library, the CUPTI session)
// needs only syncscope_tracer_activities, not the tracer (scripts/check-layers: each include
// of this header matches a link of that library). Plain C++: no CUDA or CUPTI header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace syncscope {

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

}  // namespace syncscope
