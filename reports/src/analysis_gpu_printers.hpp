// The idle attribution and the whole-trace GPU analyses in each output form, kept apart
// from analysis_printers.cpp (the sync-point printers) so each file stays one job.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/csv.hpp"

namespace syncscope::reports_detail {

// {"window_ns","busy_ns","sync_bubble_ns","host_wait_ns","dependency_wait_ns","other_ns",
//  "span_ns","fractions":{...over window_ns},"sync_bubble_by_cause":{...}}
nlohmann::ordered_json idle_json(const IdleBreakdown& b, Ns span_ns);
nlohmann::ordered_json timeline_idle_json(const TimelineIdle& t);
nlohmann::ordered_json gpu_analyses_json(const GpuAnalyses& g);
// {"count","total_ns","median_ns","p90_ns","max_ns","min_ns","mean_ns","std_ns"}
nlohmann::ordered_json stats_json(const DurationStats& s);

// Rows `metric,value` for one window's idle breakdown and verdict ("idle.window_ns", ...).
void idle_rows(const IdleBreakdown& b, IdleVerdict v,
               const std::function<void(const std::string&, const std::string&)>& row);
// Rows for the per-device and per-stream idle and the GPU analyses (window_kind names the
// entity kind: idle_device, idle_stream, kernel_class, kernel, launch_delay, queue,
// annotation, copy, finding).
void gpu_analyses_rows(const AnalysisResult& r, CsvWriter& csv, const std::string& version);

// The table's GPU-window block and the analyses, a few lines each.
void print_idle_table(const AnalysisResult& r, std::ostream& out);
void print_gpu_analyses_table(const GpuAnalyses& g, std::ostream& out);

}  // namespace syncscope::reports_detail
