#include "syncscope/cluster/rank_traces.hpp"

#include <sched.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SYNCSCOPE_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SYNCSCOPE_SANITIZED_ALLOCATOR 1
#endif
#endif

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <new>
#include <thread>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope::cluster {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// torch.profiler's tensorboard_trace_handler writes NAME.pt.trace.json(.gz); anything else
// Kineto or we write ends in .json or .json.gz too.
bool looks_like_trace(const std::string& name) {
  return !name.empty() && name[0] != '.' && (ends_with(name, ".json") || ends_with(name, ".json.gz"));
}

// Hand a freed trace's memory back to the system. glibc keeps what a thread frees in that
// thread's arena, and after a large block is freed it raises its mmap threshold, so the next
// trace's blocks come from the arenas too: without this, peak RSS over 8 ranks of 150 MB with
// 2 workers grew to 2.5x that of 2 ranks (measured).
//
// Not under a sanitizer: its allocator replaces glibc's, so glibc's malloc is never
// initialized and malloc_trim initializes it from whichever worker calls first. glibc 2.36's
// ptmalloc_init then binds the calling thread to main_arena without counting it, and two
// workers doing so at once each drop the count at exit: the second aborts with "malloc
// assertion failure in __malloc_arena_thread_freeres: a->attached_threads > 0" (seen once in
// CI's ASan stage, a Slurm rank task). There is nothing of glibc's to trim there anyway.
void release_freed_memory() {
#if defined(__GLIBC__) && !defined(SYNCSCOPE_SANITIZED_ALLOCATOR)
  ::malloc_trim(0);
#endif
}

}  // namespace

std::vector<RankTraceFile> find_rank_traces(const std::vector<std::string>& inputs, std::vector<std::string>* skipped) {
  std::vector<RankTraceFile> out;
  std::vector<std::string> skip;
  for (const auto& in : inputs) {
    std::error_code ec;
    const auto st = fs::status(in, ec);
    SYNCSCOPE_INPUT_ERROR_IF(ec || !fs::exists(st), in + ": no such file or directory");
    if (!fs::is_directory(st)) {
      out.push_back({in, fs::absolute(in)});
      continue;
    }
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(in, ec)) {
      const std::string name = e.path().filename().string();
      std::error_code fec;
      if (!looks_like_trace(name)) continue;
      if (e.is_regular_file(fec)) {
        names.push_back(name);
        continue;
      }
      const PathKind k = path_kind(e.path());
      skip.push_back((fs::path(in) / name).string() + " (" +
                     (k == PathKind::Missing ? std::string("a dangling link") : std::string(describe(k))) + ")");
    }
    SYNCSCOPE_INPUT_ERROR_IF(ec, in + ": cannot list the directory: " + ec.message());
    SYNCSCOPE_INPUT_ERROR_IF(names.empty(), in + ": the directory holds no trace (*.json or *.json.gz files, one per "
                                                 "rank, as torch.profiler writes them)");
    std::sort(names.begin(), names.end());
    for (const auto& n : names) out.push_back({(fs::path(in) / n).string(), fs::absolute(fs::path(in) / n)});
  }
  std::sort(skip.begin(), skip.end());
  if (skipped) {
    *skipped = skip;
  } else if (!skip.empty()) {
    std::string list;
    for (std::size_t i = 0; i < skip.size() && i < 10; ++i) list += (i ? ", " : "") + printable(skip[i]);
    if (skip.size() > 10) list += ", and " + std::to_string(skip.size() - 10) + " more";
    std::fprintf(stderr, "syncscope: warning: skipped %zu entr%s named like a trace that %s not a regular file: %s\n",
                 skip.size(), skip.size() == 1 ? "y" : "ies", skip.size() == 1 ? "is" : "are", list.c_str());
  }
  return out;
}

std::size_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<std::size_t>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {
std::atomic<void (*)(std::size_t)> g_start_hook{nullptr};
}  // namespace

std::size_t max_rank_workers() { return 4 * usable_cores(); }

void set_rank_worker_start_hook(void (*hook)(std::size_t)) { g_start_hook = hook; }

std::vector<RankRow> analyze_rank_files(const std::vector<RankTraceFile>& files, const AnalysisOptions& options,
                                        std::size_t workers, const RankRowSink& on_row) {
  std::vector<RankRow> rows(files.size());
  std::mutex sink_mutex;  // one on_row call at a time; never held while reading or analyzing
  std::size_t done = 0;
  std::vector<std::exception_ptr> errors(files.size());
  std::vector<ReadingNow> reading(files.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (std::size_t i = next++; i < files.size() && !stop.load(); i = next++) {
      try {
        {
          // The trace and its analysis are freed at the end of this scope, before the next
          // file is opened: a worker holds one trace at a time.
          const Trace trace = read_trace(files[i].absolute);
          std::int64_t rank = -1;
          std::string from;
          if (auto r = rank_from_metadata(trace.meta)) {
            rank = *r;
            from = "distributedInfo";
          } else if (auto f = rank_from_file_name(fs::path(files[i].path).filename().string())) {
            rank = *f;
            from = "file name";
          } else {
            throw InputError(files[i].path +
                             ": cannot tell its rank: the trace has no distributedInfo.rank and the file name no "
                             "'rank<N>'; rename it (e.g. rank3.json) or record it with torch.distributed initialized");
          }
          const AnalysisResult a = analyze(trace, options);
          rows[i] = rank_row(a, rank, from, files[i].path);
          rows[i].world_size = world_size_from_metadata(trace.meta);  // the job (ranks.hpp)
        }
        release_freed_memory();
        if (on_row) {
          std::lock_guard lock(sink_mutex);
          on_row(rows[i], ++done, files.size());
        }
      } catch (...) {
        errors[i] = std::current_exception();
        try {
          reading[i] = reading_now();  // this thread's file: what an out-of-memory message names
        } catch (const std::bad_alloc&) {
        }
      }
    }
  };
  if (workers == 0) workers = usable_cores();
  workers = std::min({workers, files.size(), max_rank_workers()});
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    std::string failure;
    try {
      pool.reserve(workers);
      for (std::size_t w = 0; w < workers; ++w) {
        if (auto hook = g_start_hook.load()) hook(w);
        pool.emplace_back(work);
      }
    } catch (const std::exception& e) {
      // Out of memory or threads (RLIMIT_NPROC, an address-space limit): the threads that
      // did start stop after their current file and are joined; a joinable std::thread
      // destroyed would abort the process.
      failure = "cannot start reader thread " + std::to_string(pool.size() + 1) + " of " + std::to_string(workers) +
                " (" + e.what() + "); try a smaller --jobs";
      stop = true;
    }
    for (auto& t : pool) t.join();
    if (!failure.empty()) throw Error(failure);
  }
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    // The reader thread's file passed to this one: main()'s "out of memory while reading FILE".
    if (!reading[i].file.empty()) note_reading(reading[i].file, reading[i].bytes);
    std::rethrow_exception(errors[i]);
  }
  return rows;
}

std::string rank_source_label(const std::vector<std::string>& inputs) {
  std::string s;
  for (const auto& i : inputs) s += (s.empty() ? "" : " ") + i;
  return s;
}

RankAnalysis analyze_ranks(const std::vector<std::string>& inputs, const AnalysisOptions& options, std::size_t workers,
                           const RankRowSink& on_row) {
  const auto files = find_rank_traces(inputs);
  auto rows = analyze_rank_files(files, options, workers, on_row);
  return summarize_ranks(std::move(rows), rank_source_label(inputs), options.step_glob, options.layer_glob);
}

}  // namespace syncscope::cluster
