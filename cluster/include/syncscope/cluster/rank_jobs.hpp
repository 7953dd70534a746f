// `syncscope analyze DIR --slurm --out OUT`: the many-rank analysis as a job array. Each
// task analyzes its share of the rank traces and writes their rows; a final job merges the
// rows into the cross-rank summary, the very output the local many-rank `analyze` prints
// (the same rows go through the same summary and printers). Without --slurm the tasks run
// here, one after another, into the same layout:
//
//   OUT/rank_job.json           the job: the files (in name order), ranks per task, options
//   OUT/parts/part-NNNNN.json   a task's rows (atomic); part-NNNNN.error when it failed, and why
//   OUT/slurm/                  the batch scripts, jobs.json, Slurm's logs
//   OUT/summary.json, summary.csv, summary.txt   the merged cross-rank summary
#pragma once

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "syncscope/analysis/ranks.hpp"
#include "syncscope/cluster/slurm.hpp"

namespace syncscope::cluster {

inline constexpr int kRankJobSchemaVersion = 1;

struct RankJobRequest {
  std::vector<std::string> inputs;  // trace files and directories, as for the local analysis
  std::string step_glob = "ProfilerStep#*";
  std::string layer_glob;
  std::size_t ranks_per_task = 4;
  std::filesystem::path out;
  bool slurm = false;
  bool dry_run = false;
  bool force = false;
  SlurmOptions slurm_options;
  std::filesystem::path syncscope;  // the executable the jobs run (absolute)
  SlurmTools tools;
};

// Plans the job in OUT (refusing a directory that holds anything else, or an earlier job
// without `force`), then submits it (--slurm), prints its sbatch lines (--dry-run), or runs
// the parts and the merge here. Returns the exit status.
int start_rank_job(const RankJobRequest& request, std::ostream& out);

// One task: analyzes files [index*N, (index+1)*N) into OUT/parts/part-<index>.json; on
// failure writes part-<index>.error and rethrows.
void run_rank_part(const std::filesystem::path& out, std::size_t index);

// Every part's rows, summarized. InputError naming the parts that are missing or failed (and
// why), or the files when two claim one rank.
RankAnalysis merge_rank_parts(const std::filesystem::path& out);

// merge_rank_parts, written to OUT/summary.{json,csv,txt}.
void write_rank_summary(const std::filesystem::path& out, std::ostream& log);

// `job rank-part` and `job rank-merge`: the two above holding OUT's lock (core/dir_lock.hpp),
// as `analyze` does while it plans. A part holds it shared (the parts of one job run side by
// side) and waits up to `lock_wait_s` seconds for an exclusive holder, then is refused naming
// its pid; the merge holds it exclusively, refused at once. A stale lock (its writer died) is
// taken over, and said on `log`. Not for callers holding the lock already (start_rank_job).
void run_rank_part_locked(const std::filesystem::path& out, std::size_t index, std::ostream& log, int lock_wait_s = 60);
void write_rank_summary_locked(const std::filesystem::path& out, std::ostream& log);

}  // namespace syncscope::cluster
