// Measured sync counts against the step program: for every variant of a measured
// `syncscope run` (CUPTI trace, analyzed), its sync points per step beside those of its step
// program (the same scenario run by the simulator, which executes the step program; both
// counted by the same analysis), and whether they agree. scripts/gpu-check runs it as the
// `sync-counts` stage; the dry run feeds it a simulated stand-in for the measured run.
// Results are plain structs; the printers are separate.
#pragma once

#include <string>
#include <vector>

#include "syncscope/model/results.hpp"

namespace syncscope::gpucheck {

inline constexpr int kSyncCountsSchemaVersion = 1;

struct SyncCountRow {
  std::string scenario, fix, variant;
  int layers = 0;
  double measured = 0;  // syncs per step, median over steps, from the measured run
  double program = 0;   // the same from the step program's simulated run
  bool match = false;   // |measured - program| < 0.5 (counts are whole per step)
};

struct SyncCountComparison {
  int schema_version = kSyncCountsSchemaVersion;
  std::string measured_source, measured_mode;
  std::string program_source, program_mode;
  std::vector<SyncCountRow> rows;            // in the measured run's order
  std::vector<std::string> without_program;  // measured variants the program run lacks
  int matched = 0, mismatched = 0;
  bool all_match() const { return mismatched == 0 && without_program.empty() && !rows.empty(); }
};

// Joins on (scenario, fix, variant, layers).
SyncCountComparison compare_sync_counts(const model::RunResults& measured, const std::string& measured_source,
                                        const model::RunResults& program, const std::string& program_source);

std::string sync_counts_to_json(const SyncCountComparison& c);
std::string sync_counts_to_text(const SyncCountComparison& c);

}  // namespace syncscope::gpucheck
