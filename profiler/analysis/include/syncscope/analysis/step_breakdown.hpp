// Where one training step's time goes on the GPU: busy computing, busy copying, idle in the
// bubble a host sync left, idle otherwise; and, beside it, the time the host was blocked in
// syncs. The parts (compute + copies + sync bubbles + other idle) add up to the step.
#pragma once

#include <cstdint>
#include <string>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope {

struct StepBreakdown {
  std::string step;          // the step range broken down, e.g. "ProfilerStep#2"
  std::uint64_t steps = 0;   // steps in the trace (0: the whole trace was broken down)
  std::int32_t device = -1;  // the device shown (the busiest in the step)
  Ns duration_ns = 0;        // the step's host range
  Ns compute_ns = 0;         // some kernel or memset runs (union over the device's streams)
  Ns copy_ns = 0;            // some copy runs and no kernel or memset
  Ns sync_bubble_ns = 0;     // GPU idle in a gap a host sync returned into (analysis: bubble)
  Ns other_idle_ns = 0;      // the rest: duration - compute - copy - sync bubble
  Ns host_blocked_ns = 0;    // host blocked in sync points starting in the step
  std::uint64_t syncs = 0;   // sync points starting in the step
  // The step's idle attribution over its GPU window, all devices (analysis: WindowStats::
  // idle; idle.hpp). sync_bubble_by_cause is not kept. Zero in timelines written before it.
  IdleBreakdown idle;
  IdleVerdict verdict = IdleVerdict::NoGpuActivity;
};

// The step broken down is analysis.steps[size/2] (the middle one, as extract_timeline's);
// without steps, the whole trace. GPU time is clipped to the step's host range, as the
// analysis clips it.
StepBreakdown break_down_step(const Trace& trace, const AnalysisResult& analysis);

}  // namespace syncscope
