// `analyze` as one call for the CLI (cli/cmd_analyze.cpp) and Python (syncscope.analyze):
// the analysis of a trace, the critical paths when asked, and the replayed saving of removing
// each worst cause (replay/replay.hpp), then rendered as table, JSON or CSV. Neither front
// end repeats this sequence; they parse arguments and print.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/analysis/ranks.hpp"
#include "syncscope/api/defaults.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/replay/replay.hpp"  // CauseCost, complete: AnalyzeOutcome holds them
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope::api {

struct AnalyzeRequest {
  std::string step_range = kDefaultStepRange;
  std::string layer_range;
  std::optional<std::int64_t> pid;  // only this process's host threads
  std::size_t replay_causes = kDefaultReplayCauses;
  bool critical_path = false;                    // per step, over the replay graph (about a fifth more time)
  std::uint64_t queue_full = kDefaultQueueFull;  // time blocked on a full launch queue
  KernelSequenceOptions sequences;               // frequent kernel sequences (kernel_sequences.hpp)
};

// What the trace held, by record kind (lets Python's torch handler say "no GPU in this
// trace" without reading the file again). Counts, not analysis.
struct RecordCounts {
  std::size_t api_calls = 0, kernels = 0, memcpys = 0, memsets = 0, sync_records = 0, ranges = 0;
  std::optional<std::int64_t> rank;
  std::string source_tool, source_version;
  std::uint64_t dropped_records = 0;
};

struct AnalyzeOutcome {
  AnalysisResult result;
  CauseRemovals removals;  // matched to result.worst by cause
  RecordCounts counts;
};

// InputError naming the option as `spelling` writes it, for a value outside its bound (the
// CLI's validators check the same bounds before this).
void check(const AnalyzeRequest& request, Spelling spelling);

// The trace is consumed: released before the replays, which need only their graph.
AnalyzeOutcome analyze_trace(Trace trace, const std::string& source, const AnalyzeRequest& request);

// format: "table", "json" or "csv" (anything else: InputError naming it).
std::string render_analysis(const AnalyzeOutcome& outcome, std::string_view format,
                            std::size_t max_sync_points = kDefaultMaxSyncPoints);

// Many ranks: one trace per rank, read `jobs` at once (0: one per core; bounded by kJobs).
RankAnalysis analyze_rank_traces(const std::vector<std::string>& inputs, const AnalyzeRequest& request,
                                 std::size_t jobs, Spelling spelling, const cluster::RankRowSink& progress = {});
// One file holding several ranks' processes (an Nsight Systems report of a torchrun job;
// trace/split_processes.hpp): each process analyzed as a rank, the same table as a directory
// of rank traces gives; the warnings say the ranks came from one file and how they were
// numbered. InputError when the file holds fewer than two processes with GPU work.
RankAnalysis analyze_processes(const Trace& trace, const std::string& source, const AnalyzeRequest& request);
std::string render_rank_analysis(const RankAnalysis& analysis, std::string_view format);

}  // namespace syncscope::api
