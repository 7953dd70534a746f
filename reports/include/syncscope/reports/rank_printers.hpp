// Printers over RankAnalysis (the many-rank `analyze`): a table for people, JSON and CSV
// for programs. The analysis computes; these only render.
//
// JSON (schema_version = kRankAnalysisSchemaVersion, kind "syncscope.rank_analysis"):
// `source`, `options` {step_range, layer_range}, `ranks[]` (one object per rank, by rank:
// rank, rank_from, source, steps, per_step {step_ns, syncs, blocked_ns, bubble_ns, busy_ns,
// compute_ns, communication_ns}, trace {span_ns, sync_points, gpu_busy_ns,
// compute_kernel_ns, communication {kernel_ns, kernels, overlapped_ns, overlap_fraction},
// devices}, world_size, top_cause, warnings[]), `world_size` (the job's; 0 not recorded),
// `across_ranks` {metric: {min, median, max, min_rank, max_rank}} in kRankMetrics order,
// `standout` ({rank, metric, value, median, deviation} or null), `stragglers[]` ({rank,
// communication_ns, late_ns, late_fraction}, latest first), `jobs[]` (several jobs: one object
// each with world_size, ranks, across_ranks, standout, stragglers, warnings; the top-level ones
// then empty), `warnings[]`. Times are nanoseconds (per-step medians may be fractional).
//
// CSV (RFC 4180, tidy): header `kind,rank,metric,value,schema_version,world_size`; `kind` is
// `rank` (one row per rank x metric: the per-step metrics, then steps and the trace figures),
// `min`, `median`, `max`, `min_rank`, `max_rank` (rank empty), `standout` (the rank; metric
// `<metric>.deviation`) or `straggler` (metrics communication_ns, late_ns, late_fraction);
// `world_size` is the row's job (empty when not recorded).
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/ranks.hpp"

namespace syncscope {

void print_rank_table(const RankAnalysis& analysis, std::ostream& out);
std::string rank_analysis_to_json(const RankAnalysis& analysis, int indent = 2);
std::string rank_analysis_to_csv(const RankAnalysis& analysis);

// One rank's row as in `ranks[]`, and back: what the cluster jobs write per task and the
// merge reads, so the merged summary is computed from the very rows the local one is.
// rank_row_from_json throws InputError naming `where` and the field when one is missing or
// has the wrong type.
nlohmann::ordered_json rank_row_json(const RankRow& row);
RankRow rank_row_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace syncscope
