// Nsight Systems export import benchmark. In one run, on one file, each measurement in its
// own child process (so peak RSS is that measurement's alone, from wait4's rusage):
//   bare     SQLite itself: every row of every table the reader reads, every column
//            touched (SELECT * through the C API, read-only and immutable as the reader
//            opens it): the speed limit of reading the file with SQLite on this machine
//   import   syncscope::read_trace (table by table into the trace model)
//   analyze  read_trace + syncscope::analyze
// and prints wall and CPU time, MB/s of file, rows or records, peak RSS and the ratios, with
// machine, commit, date and load average. No targets are asserted here: it reports.
//   syncscope_bench_nsys FILE [--repeat N]
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/io/trace_io.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  double seconds = 0;
  std::uint64_t rows = 0;  // bare: rows stepped; ours: records kept
  std::uint64_t checksum = 0;
  long peak_rss_kib = 0;
  double cpu_seconds = 0;  // user + system time of the child: steadier than wall time on a shared machine
  bool ok = false;
};

constexpr const char* kTables[] = {"CUPTI_ACTIVITY_KIND_RUNTIME",
                                   "CUPTI_ACTIVITY_KIND_KERNEL",
                                   "CUPTI_ACTIVITY_KIND_MEMCPY",
                                   "CUPTI_ACTIVITY_KIND_MEMSET",
                                   "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                   "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
                                   "NVTX_EVENTS",
                                   "StringIds"};

Result bare(const std::string& path) {
  Result r;
  const auto t0 = Clock::now();
  sqlite3* db = nullptr;
  const std::string uri = "file://" + std::filesystem::absolute(path).string() + "?mode=ro&immutable=1";
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) return r;
  for (const char* table : kTables) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, ("SELECT * FROM " + std::string(table)).c_str(), -1, &s, nullptr) != SQLITE_OK) {
      sqlite3_finalize(s);
      continue;  // not in this export
    }
    const int cols = sqlite3_column_count(s);
    while (sqlite3_step(s) == SQLITE_ROW) {
      ++r.rows;
      for (int c = 0; c < cols; ++c) {
        if (sqlite3_column_type(s, c) == SQLITE_TEXT)
          r.checksum += static_cast<std::uint64_t>(sqlite3_column_bytes(s, c));
        else r.checksum += static_cast<std::uint64_t>(sqlite3_column_int64(s, c));
      }
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.ok = true;
  return r;
}

Result import(const std::string& path, bool with_analysis) {
  Result r;
  const auto t0 = Clock::now();
  syncscope::Trace t = syncscope::read_trace(path);
  r.rows = t.record_count();
  r.checksum = t.kernels.size();
  if (with_analysis) r.checksum += syncscope::analyze(t).totals.syncs.total;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.ok = true;
  return r;
}

// Runs `fn` in a child; its peak RSS comes from wait4's rusage for that child alone.
template <class F>
Result in_child(F&& fn) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Result r;
    try {
      r = fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  error: %s\n", e.what());
    }
    (void)!write(fds[1], &r, sizeof r);
    _exit(r.ok ? 0 : 1);
  }
  close(fds[1]);
  Result r;
  if (read(fds[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r.ok = false;
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  r.peak_rss_kib = ru.ru_maxrss;
  r.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return r;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: syncscope_bench_nsys FILE [--repeat N (default 1)]\n"
          "Measures a bare SQLite pass, syncscope::read_trace and read_trace+analyze on an nsys\n"
          "SQLite export, each in a child process; reports the best of N runs.\n");
      return 0;
    } else path = std::string(a);
  }
  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(path, ec);
  if (path.empty() || ec) {
    std::fprintf(stderr,
                 "syncscope_bench_nsys: missing or unreadable FILE (see --help); make one with "
                 "syncscope_gen_nsys_export\n");
    return 2;
  }
  std::printf("syncscope nsys export import benchmark\n");
  std::printf("  machine : %s, %u hardware threads\n", cpu_model().c_str(), std::thread::hardware_concurrency());
  std::printf("  commit  : %s (syncscope %s), SQLite %s\n", syncscope::build_commit(), syncscope::version(),
              sqlite3_libversion());
  std::printf("  date    : %s\n", syncscope::utc_now_iso8601().c_str());
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) std::printf("  load    : %.1f (1-minute average at the start)\n", load[0]);
  std::printf("  file    : %s, %.1f MB\n\n", path.c_str(), file_bytes / 1e6);

  auto best = [&](auto fn) {
    Result b;
    for (int i = 0; i < repeat; ++i) {
      Result r = in_child(fn);
      if (r.ok && (!b.ok || r.seconds < b.seconds)) {
        const long rss = std::max(b.peak_rss_kib, r.peak_rss_kib);
        b = r;
        b.peak_rss_kib = rss;
      }
    }
    return b;
  };
  const Result rb = best([&] { return bare(path); });
  const Result ri = best([&] { return import(path, false); });
  const Result ra = best([&] { return import(path, true); });
  if (!rb.ok || !ri.ok) {
    std::fprintf(stderr, "syncscope_bench_nsys: a measurement failed\n");
    return 1;
  }
  const double mb = static_cast<double>(file_bytes) / 1e6;
  std::printf("  %-26s %8s %8s %9s %12s %12s %10s %9s\n", "measurement", "time s", "CPU s", "MB/s", "rows or recs",
              "peak RSS MB", "speed/bare", "RSS/file");
  auto row = [&](const char* name, const Result& r) {
    if (!r.ok) {
      std::printf("  %-26s %8s\n", name, "failed");
      return;
    }
    std::printf("  %-26s %8.2f %8.2f %9.1f %12llu %12.1f %10.2f %9.2f\n", name, r.seconds, r.cpu_seconds,
                mb / r.seconds, static_cast<unsigned long long>(r.rows), r.peak_rss_kib / 1024.0,
                rb.seconds / r.seconds, r.peak_rss_kib * 1024.0 / static_cast<double>(file_bytes));
  };
  row("bare SQLite: every row", rb);
  row("syncscope read_trace", ri);
  row("read_trace + analyze", ra);
  return 0;
}
