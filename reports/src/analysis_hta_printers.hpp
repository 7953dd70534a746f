// The GPU user-annotation breakdown and the frequent kernel sequences (the analyses HTA has
// beside its kernel breakdown: gpu_analyses.hpp GpuAnnotationTime, kernel_sequences.hpp) in
// each output form; analysis_gpu_printers.cpp calls these from its JSON, CSV and table.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/gpu_analyses.hpp"
#include "syncscope/core/csv.hpp"

namespace syncscope::reports_detail {

// Adds "gpu_annotations" (per name: name, streams and the duration stats), "gpu_annotation_names"
// and "kernel_sequences" ({op, roots_rule, min_pattern_len, top_k, roots, patterns, top: [{op,
// kernels, length, count, gpu_ns, host_ns}]}) to the "gpu" object `j`.
void hta_breakdowns_json(const GpuAnalyses& g, nlohmann::ordered_json& j);
// CSV rows: window_kind gpu_annotation (name; count, total_ns, ...), kernel_sequences (the
// rule; roots, patterns, min_pattern_len, top_k) and kernel_sequence (the root op, index =
// rank in the list; kernels '|'-joined, length, count, gpu_ns, host_ns).
void hta_breakdowns_rows(const GpuAnalyses& g, CsvWriter& csv, const std::string& version);
// A few lines each: the largest annotations, the most frequent sequences, with counts of
// what was left out.
void print_hta_breakdowns_table(const GpuAnalyses& g, std::ostream& out);

}  // namespace syncscope::reports_detail
