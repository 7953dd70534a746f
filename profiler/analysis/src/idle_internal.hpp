// Idle attribution built once per trace (definitions in syncscope/analysis/idle.hpp); a
// window's breakdown is then a few binary searches per device.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "interval_set.hpp"
#include "launch_index.hpp"
#include "syncscope/analysis/analysis.hpp"

namespace syncscope::analysis_detail {

// One device's or stream's classified GPU window.
struct IdleTimeline {
  std::int32_t device = -1;
  std::int64_t stream = -1;  // -1: the whole device
  Ns first = 0, last = 0;    // GPU window; first == last: no activity
  IntervalSet busy;
  bool has_sets = false;               // by_class filled (device timelines)
  IntervalSet by_class[kIdleClasses];  // the gaps of each class (IdleClass order)
  Ns class_total[kIdleClasses] = {0, 0, 0, 0};
  struct SyncGap {
    Ns start, end;
    std::uint32_t point;  // index into the sync points (its cause)
  };
  std::vector<SyncGap> sync_gaps;  // sorted by start
  std::uint64_t gaps = 0;
};

class IdleAttribution {
 public:
  // `wait_call_starts`: the cudaStreamWaitEvent call starts (SyncScan), sorted.
  IdleAttribution(const Trace& trace, const std::vector<SyncPoint>& points, const std::vector<Ns>& wait_call_starts,
                  const LaunchIndex& launches);

  // The breakdown of [a, b) summed over devices; `all`: each device's whole GPU window.
  IdleBreakdown measure(Ns a, Ns b, bool all) const;

  std::vector<TimelineIdle> devices() const;
  const std::vector<TimelineIdle>& streams() const { return streams_; }

 private:
  TimelineIdle whole(const IdleTimeline& tl) const;
  // Adds tl's breakdown inside [a, b); a timeline without sets only whole ([first, last)).
  void add(const IdleTimeline& tl, Ns a, Ns b, IdleBreakdown& out) const;

  const std::vector<SyncPoint>* points_;
  std::vector<IdleTimeline> devices_;
  std::vector<TimelineIdle> streams_;  // classified and summed as they were built
};

}  // namespace syncscope::analysis_detail
