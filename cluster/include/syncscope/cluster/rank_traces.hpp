// The many-rank `analyze` on one machine: find the rank traces, read and analyze them in
// parallel (one worker per core), and summarize across ranks (analysis/ranks.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/analysis/ranks.hpp"

namespace syncscope::cluster {

struct RankTraceFile {
  std::string path;  // as the user gave it (a file, or the directory joined with the name)
  std::filesystem::path absolute;
};

// The traces named by `inputs`: files as given, directories expanded to their *.json and
// *.json.gz files (not recursively; hidden files skipped), in name order. Throws InputError
// naming the directory when one holds no trace, and naming the path when it does not exist.
// Entries named like traces that are not regular files (FIFOs, devices, dangling links,
// directories) are skipped, counted and named in `skipped` ("DIR/x.json (a FIFO)"); when
// `skipped` is null they are named on stderr as a warning.
std::vector<RankTraceFile> find_rank_traces(const std::vector<std::string>& inputs,
                                            std::vector<std::string>* skipped = nullptr);

// Cores this process may run on (sched_getaffinity), at least 1.
std::size_t usable_cores();

// At most this many reader threads (4 per usable core): each holds a whole trace, so more
// would only multiply memory (--jobs 1000 under a memory limit).
std::size_t max_rank_workers();

// For tests: called before each worker thread starts with its number; a throw there is
// taken as that thread failing to start.
void set_rank_worker_start_hook(void (*hook)(std::size_t worker));

// Reads and analyzes each file with `workers` threads (0: usable_cores(); never more than
// the files or max_rank_workers()), and gives each its rank: distributedInfo.rank, else the file name ("rank3"),
// else InputError naming the file. A failure in any file is rethrown after every worker has
// stopped (the first failing file in `files` order). A thread that cannot start is Error
// (exit 1) saying so, after the threads already started have been stopped and joined.
//
// Memory and open files are bounded by the workers, not the ranks: each worker reads one file
// at a time (streamed: its trace model and a few MiB of read-ahead) and keeps only the rank's
// row (a few hundred bytes) once it is analyzed, so 1,000 ranks with 2 workers hold at most 2
// traces and 2 open files at any time. `on_row`, when given, is called with each row as soon
// as its file is done (in completion order, one call at a time, from the worker's thread;
// `done` counts the rows so far): progress for people, or rows written as they finish.
using RankRowSink = std::function<void(const RankRow& row, std::size_t done, std::size_t total)>;
std::vector<RankRow> analyze_rank_files(const std::vector<RankTraceFile>& files, const AnalysisOptions& options,
                                        std::size_t workers = 0, const RankRowSink& on_row = {});

// All of it: find, analyze, summarize (InputError when two files claim one rank).
RankAnalysis analyze_ranks(const std::vector<std::string>& inputs, const AnalysisOptions& options,
                           std::size_t workers = 0, const RankRowSink& on_row = {});

// What `source` says in the summary for these inputs ("DIR" or "a.json b.json").
std::string rank_source_label(const std::vector<std::string>& inputs);

}  // namespace syncscope::cluster
