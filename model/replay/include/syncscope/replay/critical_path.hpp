// The critical path of each step through host and GPU, over the replay graph (replay.hpp),
// as analyze reports it (profiler/analysis/include/syncscope/analysis/critical_path.hpp gives the
// result struct and the definitions; docs/analysis.md, "Critical path").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/analysis/critical_path.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::replay {

// One step of an identity-replayed graph: host + gpu + launch + sync_wait + other == length.
CriticalPath step_critical_path(const Trace& trace, const ReplayGraph& graph, const ReplayTimes& times,
                                std::size_t step);
// The same path with every run in CriticalPath::top, in time order (not only the longest
// kCriticalTopRuns): what `syncscope view` draws on its timeline.
CriticalPath step_critical_path_all_runs(const Trace& trace, const ReplayGraph& graph, const ReplayTimes& times,
                                         std::size_t step);

// The same walk's whole path, in time order: every run (consecutive pieces of one kind on one
// place; one sync point a run), named; their durations sum to the step's length. predict's
// replay.critical_path is this list (one walk for analyze and predict, issue 36).
std::vector<CriticalRun> step_critical_runs(const Trace& trace, const ReplayGraph& graph, const ReplayTimes& times,
                                            std::size_t step);
// The sync calls whose wait is on that path (graph nodes), in time order.
std::vector<std::uint32_t> step_critical_sync_calls(const ReplayGraph& graph, const ReplayTimes& times,
                                                    std::size_t step);

// Builds and replays the graph with the analysis's step glob and pid, sets each analysis
// step's critical_path (matched by name and host range) and the totals' (summed over the
// steps; with no step ranges, the replay's one window over the busiest thread).
void add_critical_paths(const Trace& trace, AnalysisResult& result);

}  // namespace syncscope::replay
