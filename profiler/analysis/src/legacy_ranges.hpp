// Step and layer markers in traces of torch.profiler without Kineto (the legacy profiler:
// Debian 12's python3-torch 1.13 is built without Kineto; torch.autograd.kineto_available()
// is False). Its export_chrome_trace writes every event, ProfilerStep#N included, as an "X"
// event without "cat" (pid "CPU functions"), which the reader keeps as an OtherEvent, not a
// Range: without this a CPU-only trace with ProfilerStep#1..3 had "no steps".
#pragma once

#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"

namespace syncscope::analysis_detail {

// Uncategorized complete ("X") events whose name matches `glob`, as host ranges (kind
// UserAnnotation, pid/tid from their text when it is an integer, else -1), by start, the
// same marker twice kept once. With options.pid set, only events of that (integer) pid.
std::vector<Range> legacy_ranges(const Trace& trace, const std::string& glob, const AnalysisOptions& options);

}  // namespace syncscope::analysis_detail
