// Many ranks: one trace per rank of a distributed job, analyzed each on its own, then
// compared. Plain structs; printing lives in reports/ (rank_printers.hpp), reading the
// files in parallel in cluster/ (rank_traces.hpp).
//
// Definitions (README "Many ranks" repeats them; tests/ranks pins them):
// - A rank's figures are per step: the median over its steps (host ranges matching the step
//   glob, as in analyze) of step time, sync points, blocked time, bubble, GPU busy, compute
//   and communication kernel time (analysis.hpp). A trace with no step ranges counts as one
//   step (RankRow::steps == 0 says so, with a warning).
// - Across ranks, each metric's min, median (numpy's linear rule: the mean of the two middle
//   values for an even count) and max, with the rank holding the min and the max (the lowest
//   rank on ties).
// - The rank that stands out: over the time metrics (step time, blocked, bubble, GPU busy,
//   compute, communication) and ranks, the largest |value - median| / median step time:
//   what a rank's difference costs, as a fraction of a step (300 us more compute per 1 ms
//   step is 0.30; a sync point's cost shows as blocked time and bubble). Named only with at
//   least 3 ranks and a deviation of at least kStandoutThreshold (10% of a step); ties go to
//   the metric listed first, then the lowest rank.
// - Jobs (the rule `view` uses too, several_jobs): a job's rank traces record one
//   distributedInfo.world_size; traces whose recorded world sizes differ are different jobs.
//   They are named apart and never merged: RankAnalysis::jobs holds one summary per job (by
//   world size; traces recording none form a job of their own), each with its own spreads,
//   standout and stragglers, and the top-level ranks, spreads and standout stay empty.
// - Potential stragglers (ours; HTA's get_potential_stragglers is a different rule, see
//   docs/analysis.md "Stragglers"): a collective ends on every rank at about the same time,
//   so the rank that reaches it last waits least inside it. Per rank, late_ns = the largest
//   communication time per step over the ranks - this rank's: how much later than the rank
//   that waited most it reached its collectives (per step, medians). Clock-free: only each
//   rank's own kernel durations are compared, never timestamps across hosts. The candidates
//   are the kStragglerCandidates ranks with the largest late_ns > 0 (HTA's default
//   num_candidates), latest first (ties: lowest rank); none without communication or with
//   fewer than 2 ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/analysis/analysis.hpp"

namespace syncscope {

inline constexpr int kRankAnalysisSchemaVersion = 1;
inline constexpr double kStandoutThreshold = 0.10;
inline constexpr std::size_t kStragglerCandidates = 2;  // HTA's get_potential_stragglers num_candidates

struct RankRow {
  std::int64_t rank = -1;
  std::string rank_from;    // "distributedInfo" or "file name"
  std::string source;       // the trace file
  std::uint64_t steps = 0;  // step windows; 0: the per-step figures are the whole trace's
  // Per step (medians over the rank's steps).
  double step_ns = 0;
  double syncs = 0;
  double blocked_ns = 0;
  double bubble_ns = 0;
  double busy_ns = 0;
  double compute_ns = 0;
  double comm_ns = 0;
  // Whole trace.
  Ns span_ns = 0;
  std::uint64_t sync_points = 0;
  Ns gpu_busy_ns = 0;
  Ns compute_kernel_ns = 0;
  Ns comm_kernel_ns = 0;
  std::uint64_t comm_kernels = 0;
  Ns comm_overlapped_ns = 0;
  double comm_overlap_fraction = 0;
  std::uint64_t devices = 0;
  std::int64_t world_size = 0;  // distributedInfo.world_size: the job (0: not recorded)
  std::string top_cause;        // the cause costing the most blocked + bubble time ("" without syncs)
  std::vector<std::string> warnings;
};

// The per-step metrics compared across ranks, in this order everywhere (JSON, CSV, table).
enum class RankMetric : std::uint8_t { StepTime, Syncs, Blocked, Bubble, Busy, Compute, Communication };
inline constexpr RankMetric kRankMetrics[] = {RankMetric::StepTime,     RankMetric::Syncs, RankMetric::Blocked,
                                              RankMetric::Bubble,       RankMetric::Busy,  RankMetric::Compute,
                                              RankMetric::Communication};
std::string_view metric_key(RankMetric m);    // "step_ns", "syncs", ... (JSON and CSV)
std::string_view metric_label(RankMetric m);  // "step time", "sync points", ... (people)
bool metric_is_time(RankMetric m);
double metric_value(const RankRow& row, RankMetric m);

struct RankSpread {
  RankMetric metric = RankMetric::StepTime;
  double min = 0, median = 0, max = 0;
  std::int64_t min_rank = -1, max_rank = -1;
};

struct RankStandout {
  std::int64_t rank = -1;
  RankMetric metric = RankMetric::StepTime;
  double value = 0;
  double median = 0;
  double deviation = 0;  // (value - median) / median step time, signed
};

struct RankStraggler {
  std::int64_t rank = -1;
  double comm_ns = 0;        // its communication time per step
  double late_ns = 0;        // the largest communication time per step over ranks - comm_ns
  double late_fraction = 0;  // late_ns / the ranks' median step time
};

struct RankAnalysis {
  int schema_version = kRankAnalysisSchemaVersion;
  std::string source;  // the directory or the files as given
  std::string step_glob;
  std::string layer_glob;
  std::int64_t world_size = 0;      // the job's distributedInfo.world_size (0: not recorded or several jobs)
  std::vector<RankRow> ranks;       // by rank; empty when the set holds several jobs (see jobs)
  std::vector<RankSpread> spreads;  // one per kRankMetrics entry; empty without ranks
  std::optional<RankStandout> standout;
  std::vector<RankStraggler> stragglers;  // at most kStragglerCandidates, latest first
  std::vector<RankAnalysis> jobs;         // several jobs: one summary each, by world size; else empty
  std::vector<std::string> warnings;      // about the set (ranks missing from 0..N-1, ...)
};

// One rank's row from its analysis.
RankRow rank_row(const AnalysisResult& result, std::int64_t rank, std::string rank_from, std::string source);

// The cross-rank summary. Throws InputError naming both files when two rows of one job claim
// the same rank. Rows are sorted by rank; rows of several jobs go to RankAnalysis::jobs.
RankAnalysis summarize_ranks(std::vector<RankRow> rows, std::string source, std::string step_glob,
                             std::string layer_glob);

// The rank a trace says it is: distributedInfo.rank (Kineto writes {"backend": "nccl",
// "rank": 0, "world_size": 8}); an integer or a string holding one. nullopt when absent.
std::optional<std::int64_t> rank_from_metadata(const TraceMetadata& meta);

// The job a trace belongs to: its distributedInfo.world_size (an integer or a string holding
// one); 0 when not recorded.
std::int64_t world_size_from_metadata(const TraceMetadata& meta);

// Whether traces with these world sizes (world_size_from_metadata) are of several jobs: two
// recorded sizes differ (0, not recorded, joins no job). `analyze` and `view` share this rule.
bool several_jobs(const std::vector<std::int64_t>& world_sizes);

// The rank in a file name: "rank" followed by an optional '-', '_' or '.' and digits, not
// preceded by a letter ("rank3.json", "trainer_rank-12.pt.trace.json.gz"); case-insensitive.
std::optional<std::int64_t> rank_from_file_name(std::string_view file_name);

}  // namespace syncscope
