// Memory over time from torch.profiler's profile_memory events (Trace::memory, "[memory]"
// instants): per device, allocated and reserved bytes over time, their peaks and when, and
// who allocated what was live at the allocated peak. Computed in profiler/analysis/src/memory.cpp.
//
// Definitions (docs/analysis.md, "Memory", repeats them):
// - Device: (c10 device type, device index) as the events give them ("cpu" is type 0, index -1).
// - Allocated at an event: its "Total Allocated" (the caching allocator's bytes in use after
//   it, allocations made before the trace included); where an event lacks it, the previous
//   value plus its signed "Bytes" (from 0 at the first event). Reserved: its "Total Reserved",
//   else the previous value (unknown, -1, until one is given).
// - Peak allocated/reserved: the largest value and the first time it was reached.
// - Live at the peak: allocations made in the trace at or before the peak event and not freed
//   by then; a free is joined to its allocation by (device, "Addr"). Each is owned by the
//   CPU op (RangeKind::CpuOp) enclosing its time on the same thread (start <= t <= end): the
//   outermost aten:: op, else the innermost op, as the sync-point cause rule
//   (sync_points.cpp, attribute_causes); "(no op)" when none encloses it. Grouped by op.
//   What the peak holds beyond them (allocated before the trace, or without an address) is
//   unattributed_bytes.
// - Series: at most kMemorySeriesPoints points; with more events, the first event and then
//   the span after it cut into kMemorySeriesPoints - 1 equal time buckets, each bucket with
//   events giving one point: the largest allocated in it (at its time) and the largest
//   reserved in it, so peaks survive the thinning.
// Holistic Trace Analysis has no analysis of these events (its MemoryAnalysis reads another
// file: docs/analysis.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/trace/trace.hpp"

namespace syncscope {

inline constexpr std::size_t kMemorySeriesPoints = 512;
inline constexpr std::size_t kTopMemoryOwners = 20;

struct MemoryPoint {
  Ns time_ns = 0;
  std::int64_t allocated_bytes = 0;
  std::int64_t reserved_bytes = -1;  // -1: not known yet
};

struct MemoryOwner {
  std::string op;  // CPU op name, or "(no op)"
  std::uint64_t allocations = 0;
  std::int64_t bytes = 0;
};

struct DeviceMemory {
  std::int32_t device_type = -1;  // c10::DeviceType (0 CPU, 1 CUDA, ...); -1 not known
  std::int32_t device = -1;       // index; -1 for host memory or not known
  std::string name;               // "cuda:0", "cpu", "type 7:1", "unknown"
  std::uint64_t events = 0;
  std::uint64_t allocations = 0;     // events with Bytes > 0
  std::uint64_t frees = 0;           // events with Bytes < 0
  std::int64_t allocated_bytes = 0;  // summed allocation sizes
  std::int64_t freed_bytes = 0;      // summed free sizes (positive)
  bool totals_from_trace = true;     // every event gave "Total Allocated" (else running sums)
  std::int64_t peak_allocated_bytes = 0;
  Ns peak_allocated_ns = 0;
  std::int64_t peak_reserved_bytes = -1;  // -1: no event gave "Total Reserved"
  Ns peak_reserved_ns = 0;
  std::int64_t live_at_peak_bytes = 0;  // allocations made in the trace, live at the peak
  std::int64_t unattributed_bytes = 0;  // peak_allocated_bytes - live_at_peak_bytes, at least 0
  std::uint64_t unmatched_frees = 0;    // frees of addresses not allocated in the trace
  std::vector<MemoryOwner> owners;      // of live_at_peak_bytes, by bytes, largest first; at most kTopMemoryOwners
  std::uint64_t owner_ops = 0;          // distinct owners (owners may hold fewer)
  std::vector<MemoryPoint> series;      // in time order; at most kMemorySeriesPoints
};

struct MemoryAnalysis {
  std::uint64_t events = 0;
  std::vector<DeviceMemory> devices;  // by (device_type, device)
};

// `pid`: only this process's events and ops (AnalysisOptions::pid).
MemoryAnalysis analyze_memory(const Trace& trace, std::optional<std::int64_t> pid = std::nullopt);

// "cpu", "cuda", "hip", ...: c10::DeviceType's lower-case names (c10/core/DeviceType.h).
std::string memory_device_name(std::int32_t device_type, std::int32_t device);

}  // namespace syncscope
