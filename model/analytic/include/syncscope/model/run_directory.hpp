// What a `syncscope run` results directory holds besides results.json, and how `report`
// loads one: timelines.json (the strips the report draws, so it needs no trace) and
// sim_check.json (the simulator checked against a measurement).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/analysis/timeline.hpp"
#include "syncscope/model/results.hpp"

namespace syncscope::model {

// 2: each strip may carry "step", the breakdown of its step (schema 1 files still read),
// and "critical_path", that step's critical path (optional, added without a new version:
// readers that predate it ignore it, and files without it still read).
inline constexpr int kTimelineSchemaVersion = 2;

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

// Sets each analysis step's critical path: syncscope_replay's add_critical_paths
// (syncscope/replay/critical_path.hpp). The replay library sits above this one (it reads
// predict --trace's facts), so this library cannot call it: the caller hands it in.
using AddCriticalPaths = void (*)(const Trace& trace, AnalysisResult& result);

// Reads DIR/results.json (read_results), DIR/timelines.json when present (else strips
// extracted from DIR/traces/* named by the results, each with its step's critical path when
// `add_critical_paths` is given; nullptr: without), and DIR/sim_check.json when present.
ReportRun load_report_run(const std::filesystem::path& dir, AddCriticalPaths add_critical_paths);

}  // namespace syncscope::model
