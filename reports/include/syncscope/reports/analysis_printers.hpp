// Printers over AnalysisResult (nvbench printer_base style): the analysis computes, these
// only render. Every machine-readable form carries schema_version.
#pragma once

#include <ostream>
#include <string>

#include "syncscope/analysis/analysis.hpp"

namespace syncscope {

enum class OutputFormat { Table, Json, Csv };

// The one-screen summary a person reads first: totals, per-step distribution, the worst
// offenders named, warnings.
void print_analysis_table(const AnalysisResult& result, std::ostream& out);
std::string analysis_to_json(const AnalysisResult& result, int indent = 2);
// Tidy CSV: one row per window (totals, step N, layer N) x metric.
std::string analysis_to_csv(const AnalysisResult& result);

}  // namespace syncscope
