// The HTML report of one or more `syncscope run` results directories: one self-contained
// file (inline SVG and CSS, no scripts, no network) that prints well. Per GPU and
// scenario: predicted vs measured speedup with interval whiskers, sync points per step per
// variant, a timeline strip of one layer for the baseline and each fix, fitted parameters,
// validation verdicts, and the provenance of every number (measured or simulated, GPU,
// date, commit). Rendering only: the numbers come from RunResults and TimelineStrip.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/model/results.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope {

inline constexpr int kTimelineSchemaVersion = 1;
inline constexpr int kHtmlReportSchemaVersion = 1;

// One bar of a timeline strip. Times are ns from the strip's start.
struct TimelineSegment {
  std::string lane;   // "host", "stream 7", "stream 14 (copy)", ...
  std::string kind;   // "api", "sync", "kernel", "h2d", "d2h", "copy", "bubble"
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
  std::uint64_t syncs = 0;  // sync points in the window
  Ns bubble_ns = 0;         // GPU idle time in the window (all streams idle)
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
// calls launched. No steps: the whole trace's middle layer; no layers: the step.
TimelineStrip extract_timeline(const Trace& trace, const AnalysisResult& analysis, const TimelineOptions& options = {});

std::string timelines_to_json(const std::vector<TimelineStrip>& strips);
// Strict: InputError naming the source and the JSON path of a bad field.
std::vector<TimelineStrip> timelines_from_json(std::string_view json, std::string_view source_name);

// One results directory's content.
struct ReportRun {
  RunResults results;
  std::string source;  // directory or file it came from
  std::vector<TimelineStrip> timelines;
  // Simulator-vs-measurement checks kept with the run (sim_check.json), as plain rows.
  struct SimCheckRow {
    std::string scenario, fix, variant, metric;
    double simulated = 0, measured = 0, relative = 0;
  };
  std::vector<SimCheckRow> sim_checks;
};

struct HtmlReportOptions {
  std::string title = "syncscope report";
  std::string generated_utc;  // shown in the header; "" leaves it out (tests)
};

std::string html_escape(std::string_view text);
std::string render_html_report(const std::vector<ReportRun>& runs, const HtmlReportOptions& options = {});

// Reads DIR/results.json (read_results), DIR/timelines.json when present (else strips
// extracted from DIR/traces/* named by the results), and DIR/sim_check.json when present.
ReportRun load_report_run(const std::filesystem::path& dir);

}  // namespace syncscope
