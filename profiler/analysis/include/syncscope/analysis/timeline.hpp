// One window of a trace (a layer, or a step when the trace has no layer ranges) cut out as
// a strip of bars per lane: what the report draws as "one layer, baseline and fix". Plain
// structs; rendering lives in reports/, the timelines.json form in model/ (run_directory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/analysis/critical_path.hpp"
#include "syncscope/analysis/step_breakdown.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope {

// One bar of a timeline strip. Times are ns from the strip's start.
struct TimelineSegment {
  std::string lane;  // "host", "stream 7", "stream 14 (copy)", ...
  // "range" (the window's host range), "api", "sync" (a host wait that starts in the range),
  // "sync-elsewhere" (one that starts outside it: the label names the range it is in),
  // "kernel", "h2d", "d2h", "copy" (GPU work launched from the range), "other" (GPU work
  // launched elsewhere), "bubble" (all streams idle)
  std::string kind;
  Ns start = 0;
  Ns end = 0;
  std::string label;  // kernel name, API name, cause (tooltips and legends)
};

// One window (a layer, or a step when the trace has no layer ranges) of one variant's
// trace: enough to draw the strip without the trace.
struct TimelineStrip {
  std::string scenario, fix, variant;
  std::string window;  // e.g. "layer_05 in ProfilerStep#3"
  std::string range;   // the host range chosen ("layer_05"), "" for a step or the whole trace
  Ns duration_ns = 0;
  std::vector<std::string> lanes;  // drawing order
  std::vector<TimelineSegment> segments;
  std::uint64_t syncs = 0;  // sync points starting in the window's host range
  Ns bubble_ns = 0;         // GPU idle time in the window (all streams idle)
  // Where the time of the step the window lies in goes (break_down_step); absent in
  // timelines.json from before it was recorded.
  std::optional<StepBreakdown> step;
  // That step's critical path through host and GPU (critical_path.hpp: the identity replay's
  // times, host + gpu + launch + sync_wait + other == length_ns), as `analyze
  // --critical-path` gives it; absent in timelines.json from before it was recorded, and when
  // the replay found no path for the step.
  std::optional<CriticalPath> critical_path;
};

struct TimelineOptions {
  std::string layer_glob = "layer_*";  // host ranges that delimit layers
  // Prefer a layer window with H2D copies (offload) rather than one with syncs.
  bool prefer_copies = false;
  std::size_t max_segments = 1500;  // kernels closer than window/2000 merge beyond this
  // Take the layer range of this name when the step has one (so a fix's strip shows the
  // same layer as its baseline's); among several, the one that shows what the fix is about.
  std::string layer_name;
};

// Picks the window: the middle step (by analysis.steps), in it the layer ranges matching
// layer_glob that show what the fix is about (H2D copies when prefer_copies, else sync
// points; else any), the middle one of those. The window extends to the GPU work its host
// calls launched. No steps: the whole trace's middle layer; no layers: the step. Host waits
// drawn in the window that start outside its range ("sync-elsewhere") are labelled with
// the innermost host range they start in. `step` is break_down_step of the same step.
TimelineStrip extract_timeline(const Trace& trace, const AnalysisResult& analysis, const TimelineOptions& options = {});

}  // namespace syncscope
