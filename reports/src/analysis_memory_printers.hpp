// The memory analysis (syncscope/analysis/memory.hpp) in each output form: the JSON object at
// "gpu.memory", the CSV rows (window_kind memory, memory_owner, memory_series) and the table's
// block. Called from analysis_gpu_printers.cpp.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/memory.hpp"
#include "syncscope/core/csv.hpp"

namespace syncscope::reports_detail {

// {"events", "devices": [{device_type, device, name, events, allocations, frees, allocated_bytes,
//  freed_bytes, totals_from_trace, peak_allocated_bytes, peak_allocated_ns, peak_reserved_bytes,
//  peak_reserved_ns, live_at_peak_bytes, unattributed_bytes, unmatched_frees, owner_ops,
//  owners: [{op, allocations, bytes}], series: {time_ns: [...], allocated_bytes: [...],
//  reserved_bytes: [...]}}]}
nlohmann::ordered_json memory_json(const MemoryAnalysis& m);

// window_kind "memory" (window_name the device, one row per figure), "memory_owner"
// (window_name the device, window_index the owner's rank, metrics op/allocations/bytes) and
// "memory_series" (window_index the point, metrics time_ns/allocated_bytes/reserved_bytes).
void memory_rows(const MemoryAnalysis& m, CsvWriter& csv, const std::string& version);

// A few lines per device; nothing when the trace has no memory events.
void print_memory_table(const MemoryAnalysis& m, std::ostream& out);

}  // namespace syncscope::reports_detail
