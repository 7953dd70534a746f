// The whole-trace GPU analyses (gpu_analyses.hpp), one file each.
#pragma once

#include <vector>

#include "launch_index.hpp"
#include "syncscope/analysis/analysis.hpp"

namespace syncscope::analysis_detail {

GpuAnalyses gpu_analyses(const Trace& trace, const std::vector<SyncPoint>& points, const LaunchIndex& launches);

void kernel_breakdown(const Trace& trace, GpuAnalyses& out);  // kernel_breakdown.cpp
void launch_delay_and_queues(const Trace& trace, const LaunchIndex& launches, GpuAnalyses& out);  // launch_queue.cpp
void annotations_and_copies(const Trace& trace, const LaunchIndex& launches,
                            GpuAnalyses& out);                        // annotations_copies.cpp
void gpu_annotation_breakdown(const Trace& trace, GpuAnalyses& out);  // gpu_annotations.cpp
KernelSequences kernel_sequences(const Trace& trace, const LaunchIndex& launches,
                                 const KernelSequenceOptions& options);                          // kernel_sequences.cpp
void rule_findings(const Trace& trace, const std::vector<SyncPoint>& points, GpuAnalyses& out);  // rules.cpp

// count, total, median and p90 (linear interpolation, as distribution()), min, max, mean and
// sample std (ddof = 1; 0 for one value); reorders `v`.
DurationStats duration_stats(std::vector<Ns>& v);

}  // namespace syncscope::analysis_detail
