// Idle-time attribution over the GPU window: where every idle nanosecond of a device (and
// of each stream) went, and a verdict per window. Plain result structs; the computation
// is in profiler/analysis/src/idle.cpp, the printers in reports/.
//
// Definitions (docs/analysis.md repeats them with a side-by-side table against Holistic
// Trace Analysis; tests/analysis/test_idle.cpp pins each class with a hand-built trace):
// - GPU window of a device: from the start of its first GPU activity (kernel, copy, memset)
//   to the end of its last; of a window (a step, a layer) on that device: the window
//   clipped to it. Summed over devices for a window's totals. Of a stream: the same over
//   that stream's activity.
// - Busy: the union of the activity intervals inside the GPU window. Idle: the rest, as
//   gaps [g0, g1) between busy intervals. Each gap is classified by the activity A that
//   ends it (the first one starting at g1) and L, the start of the host API call that
//   launched A (joined by correlation id), in this order:
//   1. sync bubble: a sync point of this device (or of unknown device) returned at t with
//      g0 <= t <= g1, and A was launched at or after t (or A has no launch call): the host
//      was blocked waiting for the GPU and fed it nothing until it returned. The cause is
//      that sync point's cause (aten::item, ...).
//   2. host wait: L > g0: the GPU ran dry before the host had even issued A (launch-bound
//      or host-bound; Holistic Trace Analysis's "host wait": runtime start after the
//      previous kernel's end, hta/analyzers/breakdown_analysis.py).
//   3. dependency wait: A had been issued (L <= g0) but waited on another stream or an
//      event: a stream-wait-event on A's stream (a StreamWaitEvent sync record of that
//      stream, or a cudaStreamWaitEvent call whose stream the trace does not give) was
//      issued after the launch of the previous activity of A's stream and no later than L;
//      for a stream's own timeline also when another stream of the device ran during the
//      gap (the stream waited while the device worked elsewhere).
//   4. other: everything else: A issued but no dependency seen (launch latency of queued
//      work, HTA's "kernel wait" below its threshold), or no launch call in the trace.
//   On a stream's timeline a gap that rule 1 would make a sync bubble is split by what the
//   device did: sync bubble only where the device's own timeline has one (the whole device
//   was idle behind that sync; the device's cause), dependency wait where another stream of
//   the device ran, the device's class elsewhere. No stream's sync bubble exceeds its device's.
//   busy + the four classes == window, exactly, in integer nanoseconds.
// - SyncStats::bubble_ns (analysis.hpp) is unchanged: the gap around each sync's return,
//   counted per sync. The sync-bubble class counts each gap once, and only when the work
//   ending it was launched after the sync returned, so it is at most the bubble sum.
// - IdleVerdict of a window (thresholds are fractions of its GPU window): gpu-bound when busy
//   >= kGpuBoundBusyFraction; otherwise the largest idle class names it: sync-bound,
//   host-bound, dependency-bound, or other-idle; no-gpu-activity when the GPU window is 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "syncscope/core/units.hpp"

namespace syncscope {

// 90% busy: the GPU is the bottleneck and idle time is second order. A stated choice, not
// a measured constant (HTA gives no verdict threshold).
inline constexpr double kGpuBoundBusyFraction = 0.9;

enum class IdleClass : std::uint8_t { SyncBubble = 0, HostWait = 1, DependencyWait = 2, Other = 3 };
inline constexpr int kIdleClasses = 4;

enum class IdleVerdict : std::uint8_t { NoGpuActivity = 0, GpuBound, HostBound, SyncBound, DependencyBound, OtherIdle };

struct IdleBreakdown {
  Ns window_ns = 0;  // GPU window inside this window, summed over devices (or the stream's)
  Ns busy_ns = 0;
  Ns sync_bubble_ns = 0;
  Ns host_wait_ns = 0;
  Ns dependency_wait_ns = 0;
  Ns other_ns = 0;
  std::map<std::string, Ns> sync_bubble_by_cause;  // cause -> ns of sync_bubble_ns

  Ns idle_ns() const { return sync_bubble_ns + host_wait_ns + dependency_wait_ns + other_ns; }
  Ns& of(IdleClass c) {
    switch (c) {
      case IdleClass::SyncBubble: return sync_bubble_ns;
      case IdleClass::HostWait: return host_wait_ns;
      case IdleClass::DependencyWait: return dependency_wait_ns;
      case IdleClass::Other: break;
    }
    return other_ns;
  }
};

// Idle attribution of one device's or one stream's whole GPU window (stream -1: the device).
struct TimelineIdle {
  std::int32_t device = -1;
  std::int64_t stream = -1;
  Ns first_ns = 0;  // the GPU window [first_ns, last_ns)
  Ns last_ns = 0;
  std::uint64_t gaps = 0;  // idle intervals
  IdleBreakdown idle;
  IdleVerdict verdict = IdleVerdict::NoGpuActivity;
};

IdleVerdict verdict_of(const IdleBreakdown& b);
std::string_view verdict_name(IdleVerdict v);   // "gpu-bound", "host-bound", ...
std::string_view idle_class_name(IdleClass c);  // "sync_bubble", "host_wait", ...

}  // namespace syncscope
