// Pieces shared by the sync-point scan and the window statistics.
#pragma once

#include <cstdint>
#include <vector>

#include "syncscope/analysis/analysis.hpp"

namespace syncscope::analysis_detail {

// All GPU activity (kernels, copies, memsets) of one device, sorted by start, with the
// running maximum of end times: "is anything running at t" and "when did the last
// activity before t end" are then one binary search.
struct DeviceTimeline {
  std::int32_t device = -1;
  std::vector<Ns> starts;   // sorted
  std::vector<Ns> ends;     // ends[i] belongs to starts[i]
  std::vector<Ns> max_end;  // max(ends[0..i])
};

std::vector<DeviceTimeline> build_timelines(const Trace& trace);

// The bubble around a sync that returned at t on this device (see analysis.hpp).
Ns bubble_at(const DeviceTimeline& timeline, Ns t);

struct SyncScan {
  std::vector<SyncPoint> points;       // sorted by start
  std::vector<Ns> stream_wait_starts;  // cudaStreamWaitEvent call starts, sorted
  // Copy calls not counted because the trace does not say whether they block the host:
  // synchronous ones without a direction, async device-to-host ones into host memory of
  // unknown kind not followed by a sync of their stream.
  std::uint64_t unresolved_sync_copies = 0;
  std::uint64_t unresolved_async_copies = 0;
  std::uint64_t unknown_device_points = 0;  // sync points with no device in a multi-device trace
  // Polled cudaEventQuery calls on threads that neither queue GPU work nor block on it (a
  // watchdog), and those threads: not sync points (sync_points.cpp, queues_or_waits).
  std::uint64_t monitor_poll_queries = 0;
  std::uint64_t monitor_poll_threads = 0;
  std::uint64_t api_calls_considered = 0;  // after the pid filter
};

SyncScan scan_sync_points(const Trace& trace, const AnalysisOptions& options,
                          const std::vector<DeviceTimeline>& timelines);

}  // namespace syncscope::analysis_detail
