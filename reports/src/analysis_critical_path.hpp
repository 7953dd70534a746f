// The critical path (analysis/critical_path.hpp) in each output form of `analyze`, apart
// from the sync-point and idle printers so each file stays one job.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/analysis.hpp"

namespace syncscope::reports_detail {

// {"length_ns","host_ns","gpu_ns","launch_ns","sync_wait_ns","other_ns","fractions":{...of
//  length_ns},"sync_edges","steps","top":[{"kind","where","what","start_ns","duration_ns","count"}]}
nlohmann::ordered_json critical_path_json(const CriticalPath& c);
// Rows `metric,value`: "critical_path.length_ns", ..., "critical_path.top.1.where", ...
void critical_path_rows(const CriticalPath& c, const std::function<void(const std::string&, const std::string&)>& row);
// The totals' path and its longest runs, a few lines; nothing when there is none.
void print_critical_path_table(const AnalysisResult& r, std::ostream& out);

}  // namespace syncscope::reports_detail
