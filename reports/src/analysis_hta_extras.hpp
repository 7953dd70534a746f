// Kernels per ATen op and queue length over time (syncscope/analysis/hta_extras.hpp) in each
// output form; analysis_gpu_printers.cpp calls these beside its own analyses.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/gpu_analyses.hpp"
#include "syncscope/core/csv.hpp"

namespace syncscope::reports_detail {

// {"ops","launches","launches_outside_ops","groups_total","groups_truncated","groups":[...]}
nlohmann::ordered_json aten_op_kernels_json(const AtenOpKernels& a);
// {"threshold","trace_ns","max_points_per_stream","point_fields":["t_ns","depth","pending"],
//  "streams":[{"device","stream","change_points","bucket_ns","max_pending","blocked_ns",
//  "blocked_fraction","points":[[t_ns,depth,pending],...]}]}
nlohmann::ordered_json queue_series_json(const QueueSeries& q);

// CSV rows: aten_ops (totals), aten_op (one per group, window_index its rank), queue_blocked
// (per stream), queue_point (per point, window_index its position).
void hta_extras_rows(const GpuAnalyses& g, CsvWriter& csv, const std::string& version);

// A few lines each; long lists capped with a count of what was left out.
void print_hta_extras_table(const GpuAnalyses& g, std::ostream& out);

}  // namespace syncscope::reports_detail
