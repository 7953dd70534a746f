// `syncscope view`: one self-contained HTML page for a user's own trace or rank directory.
// Results apart from rendering: build_view_trace() runs the existing analyses (analyze(),
// the model's critical path and cause replays) and cuts one step into lanes of bars (a
// plain ViewTrace); render_view_html() only draws it (reports/src/view_*.cpp).
//
// What the page shows, per trace (ranks side by side for a directory):
// - the chosen step's timeline: a lane per host thread, per GPU stream and per copy engine
//   (copies apart from the stream's kernels), each sync point marked on its thread with its
//   cause, blocked time and the bubble it left on its device;
// - the critical path of that step (every run of it, placed at its offset from the step's
//   start in the identity replay; analysis/critical_path.hpp gives the definitions);
// - idle per stream as stacked bars in our four classes (analysis/idle.hpp) beside Holistic
//   Trace Analysis's three (HTA's rule, computed here per stream: see HtaIdle);
// - the worst causes with their replayed saving, kernels and launch delays.
//
// Level of detail (bounded page size): a lane with more than ViewOptions::detail_limit bars
// in the step is drawn as at most ViewOptions::buckets per-bucket bars (each the busy union
// of its bucket, the event count in its tooltip); ViewLane::aggregated and
// ViewTrace::sampling_notes say which lanes and how. Lanes beyond max_lanes and sync
// markers beyond max_sync_markers are left out, counted in the notes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/replay/replay.hpp"  // CauseCost, in CauseRemovals
#include "syncscope/reports/analysis_printers.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope {

// 1: first page layout (generator meta tag of the page).
inline constexpr int kViewSchemaVersion = 1;

struct ViewOptions {
  std::string step_glob = "ProfilerStep#*";
  std::optional<std::size_t> step;       // step index (0-based, as analyze numbers them); none: the median step
  std::size_t replay_causes = 6;         // worst causes replayed away (0: none)
  std::size_t detail_limit = 400;        // bars per lane drawn one by one; above: aggregated
  std::size_t buckets = 500;             // bars per aggregated lane
  std::size_t max_lanes = 48;            // lanes drawn per trace
  std::size_t max_sync_markers = 400;    // sync points marked per trace
  std::size_t max_critical_runs = 1000;  // critical path runs drawn (the longest, when more)
  Ns hta_kernel_wait_ns = 30'000;        // HTA's consecutive_kernel_delay=30, in its µs timestamps
};

enum class ViewBarKind : std::uint8_t { Range = 0, Api, Kernel, Comm, H2D, D2H, Copy, Memset };
std::string_view view_bar_kind_name(ViewBarKind k);  // "range", "api", "kernel", "comm", "h2d", ...

struct ViewBar {
  ViewBarKind kind = ViewBarKind::Kernel;
  Ns start = 0;  // trace time, ns
  Ns end = 0;
  std::uint32_t events = 1;  // > 1: an aggregated bucket
  Ns busy_ns = 0;            // aggregated: the union of its events inside the bucket
  std::string label;         // name (one event) or "N kernels: top name" (a bucket)
};

struct ViewLane {
  enum class Kind : std::uint8_t { Host = 0, Stream, CopyEngine };
  Kind kind = Kind::Host;
  std::string name;  // "host pid 1 tid 2", "GPU 0 stream 7", "GPU 0 stream 7 copies"
  std::int64_t pid = -1, tid = -1;
  std::int32_t device = -1;
  std::int64_t stream = -1;
  std::uint64_t events = 0;  // records of this lane in the window
  bool aggregated = false;
  std::vector<ViewBar> bars;
};

// HTA's idle breakdown of one stream (hta/analyzers/breakdown_analysis.py,
// _analyze_idle_time_for_stream): for each activity of the stream after its first, the gap
// since the previous one's end is host wait when its launch call started after that end,
// else kernel wait when the gap is below consecutive_kernel_delay, else other.
struct HtaIdle {
  Ns host_wait_ns = 0;
  Ns kernel_wait_ns = 0;
  Ns other_ns = 0;
};

struct ViewStreamIdle {
  TimelineIdle ours;  // analysis.idle_by_stream
  HtaIdle hta;
};

struct ViewTrace {
  std::string source;  // the file
  std::string label;   // "rank 3 of 8" or the file name
  std::optional<std::int64_t> rank;
  std::optional<std::int64_t> world_size;
  AnalysisResult result;  // analyze()
  CauseRemovals removals;
  bool has_step = false;  // false: the window is the whole trace (no step range matched)
  std::size_t step_index = 0;
  std::string step_why;  // "the median step by duration", "--step 2"
  Ns window_start = 0, window_end = 0;
  std::vector<ViewLane> lanes;
  std::vector<SyncPoint> syncs;            // those starting in the window, at most max_sync_markers
  std::optional<CriticalPath> critical;    // the step's; top: its longest runs
  std::vector<CriticalRun> critical_runs;  // every run in time order (at most max_critical_runs)
  std::vector<ViewStreamIdle> stream_idle;
  std::uint64_t events_in_window = 0;
  std::uint64_t bars_drawn = 0;
  std::vector<std::string> sampling_notes;  // what was aggregated or left out, and how
};

struct ViewPage {
  std::string title = "syncscope view";
  std::string generated_utc;  // "" leaves it out
  std::vector<ViewTrace> traces;
  std::vector<std::string> notes;  // about the set (different jobs, ...)
  // Traces drawn in full (a section each); the ranks table lists every trace. 1,000 ranks'
  // timelines would make a page no browser opens.
  std::size_t max_sections = 32;
};

// Analyzes `trace` (analyze, critical paths, the worst causes replayed) and cuts the chosen
// step into lanes. InputError naming `source` when --step is past the last step. The trace
// is consumed by the replays.
ViewTrace build_view_trace(Trace&& trace, const std::string& source, const ViewOptions& options = {});

// The page's notes for a set of rank traces: different jobs (distributedInfo world sizes
// that differ) are named and kept apart, never merged.
std::vector<std::string> view_set_notes(const std::vector<ViewTrace>& traces);

std::string render_view_html(const ViewPage& page);

}  // namespace syncscope
