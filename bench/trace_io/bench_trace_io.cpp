// Trace import benchmark. In one run, on one file, each measurement in its own child
// process (so peak RSS is that measurement's alone, from wait4's rusage):
//   bare     simdjson On-Demand over the whole file in memory, every field of every event
//            touched: the speed limit of a JSON parser on this machine
//   import   syncscope::read_trace (streaming scan + simdjson per event + trace model)
//   analyze  read_trace + syncscope::analyze
// and prints throughput (MB/s of JSON text), peak RSS and the ratios ours/bare side by side,
// with machine, commit and date. No targets are asserted here: it reports.
//   syncscope_bench_trace_io FILE [--repeat N]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bare_simdjson.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/io/trace_io.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  double seconds = 0;
  double warm_parse_seconds = 0;  // bare only: a second pass with the file and parser already in memory
  double cpu_seconds = 0;         // CPU time (user + system, all threads) of the measurement
  double warm_cpu_seconds = 0;    // bare only: CPU time of the warm pass
  std::uint64_t json_bytes = 0;   // bytes of JSON text processed (decompressed)
  std::uint64_t items = 0;        // events (bare) or records (ours)
  std::uint64_t checksum = 0;
  long peak_rss_kib = 0;
  bool ok = false;
};

Result bare(const std::string& path) {
  const syncscope::bench::BarePass p = syncscope::bench::bare_simdjson_pass(path);
  Result r;
  r.seconds = p.seconds;
  r.warm_parse_seconds = p.warm_seconds;
  r.cpu_seconds = p.cpu_seconds;
  r.warm_cpu_seconds = p.warm_cpu_seconds;
  r.json_bytes = p.json_bytes;
  r.items = p.events;
  r.checksum = p.checksum;
  r.ok = true;
  return r;
}

Result import(const std::string& path, bool with_analysis) {
  Result r;
  const auto t0 = Clock::now();
  const double c0 = syncscope::bench::process_cpu_seconds();
  syncscope::Trace t = syncscope::read_trace(path);
  r.items = t.record_count();
  r.checksum = t.kernels.size();
  if (with_analysis) {
    const syncscope::AnalysisResult a = syncscope::analyze(t);
    r.checksum += a.totals.syncs.total;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.cpu_seconds = syncscope::bench::process_cpu_seconds() - c0;
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
          "usage: syncscope_bench_trace_io FILE [--repeat N (default 1)]\n"
          "Measures a bare simdjson pass, syncscope::read_trace and read_trace+analyze on FILE\n"
          "(.json or .json.gz), each in a child process; reports the best of N runs.\n");
      return 0;
    } else path = std::string(a);
  }
  if (path.empty()) {
    std::fprintf(stderr, "syncscope_bench_trace_io: missing FILE (see --help); make one with syncscope_gen_trace\n");
    return 2;
  }
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) {
    std::fprintf(stderr, "syncscope_bench_trace_io: cannot open %s\n", path.c_str());
    return 2;
  }
  const auto file_bytes = static_cast<std::uint64_t>(f.tellg());
  std::printf("syncscope trace import benchmark\n");
  std::printf("  machine : %s, %u hardware threads\n", cpu_model().c_str(), std::thread::hardware_concurrency());
  std::printf("  commit  : %s (syncscope %s)\n", syncscope::build_commit(), syncscope::version());
  std::printf("  date    : %s\n", syncscope::utc_now_iso8601().c_str());
  // Which simdjson kernels the bare pass runs: a fair comparison uses the best for this CPU.
  std::printf("  simdjson: %s, bare pass On-Demand kernel %s, stage 1 kernel %s\n",
              syncscope::bench::bare_simdjson_version(), syncscope::bench::bare_ondemand_kernel(),
              syncscope::bench::bare_stage1_kernel().c_str());
  std::printf("  file    : %s, %.1f MB on disk%s\n", path.c_str(), file_bytes / 1e6,
              syncscope::is_gzip_file(path) ? " (gzip)" : "");

  auto best = [&](auto fn) {
    Result b;
    for (int i = 0; i < repeat; ++i) {
      Result r = in_child(fn);
      if (r.ok && (!b.ok || r.seconds < b.seconds)) {
        const long rss = std::max(b.peak_rss_kib, r.peak_rss_kib);
        const double cpu = b.ok ? std::min(b.cpu_seconds, r.cpu_seconds) : r.cpu_seconds;
        const double warm_cpu = b.ok ? std::min(b.warm_cpu_seconds, r.warm_cpu_seconds) : r.warm_cpu_seconds;
        b = r;
        b.peak_rss_kib = rss;
        b.cpu_seconds = cpu;
        b.warm_cpu_seconds = warm_cpu;
      } else if (r.ok) {  // the least CPU time of the runs, whichever had the best wall time
        b.cpu_seconds = std::min(b.cpu_seconds, r.cpu_seconds);
        b.warm_cpu_seconds = std::min(b.warm_cpu_seconds, r.warm_cpu_seconds);
      }
    }
    return b;
  };
  const Result rb = best([&] { return bare(path); });
  const Result ri = best([&] { return import(path, false); });
  const Result ra = best([&] { return import(path, true); });
  if (!rb.ok || !ri.ok) {
    std::fprintf(stderr, "syncscope_bench_trace_io: a measurement failed\n");
    return 1;
  }
  const double mb = rb.json_bytes / 1e6;
  std::printf("  JSON    : %.1f MB of text, %llu events\n\n", mb, static_cast<unsigned long long>(rb.items));
  // Two references: the bare pass end to end (read the file, parse; same work as an import
  // minus building the model) and its warm second pass (parse only, memory already faulted in).
  std::printf("  %-34s %8s %9s %12s %11s %11s %9s\n", "measurement", "time s", "MB/s", "peak RSS MB", "speed/bare",
              "speed/warm", "RSS/JSON");
  auto row = [&](const char* name, const Result& r, double seconds, bool rss) {
    if (!r.ok) {
      std::printf("  %-34s %8s\n", name, "failed");
      return;
    }
    if (rss)
      std::printf("  %-34s %8.2f %9.1f %12.1f %11.2f %11.2f %9.2f\n", name, seconds, mb / seconds,
                  r.peak_rss_kib / 1024.0, rb.seconds / seconds, rb.warm_parse_seconds / seconds,
                  r.peak_rss_kib * 1024.0 / static_cast<double>(rb.json_bytes));
    else
      std::printf("  %-34s %8.2f %9.1f %12s %11.2f %11.2f %9s\n", name, seconds, mb / seconds, "-",
                  rb.seconds / seconds, rb.warm_parse_seconds / seconds, "-");
  };
  row("bare simdjson: read + parse", rb, rb.seconds, true);
  row("bare simdjson: parse only (warm)", rb, rb.warm_parse_seconds, false);
  row("syncscope read_trace", ri, ri.seconds, true);
  row("read_trace + analyze", ra, ra.seconds, true);
  // CPU time is what the code costs; on a shared machine wall time also holds the waiting.
  std::printf(
      "\n  CPU time (least of %d): warm simdjson parse %.2f s, read_trace %.2f s, read_trace + analyze %.2f s\n",
      repeat, rb.warm_cpu_seconds, ri.cpu_seconds, ra.cpu_seconds);
  if (ri.cpu_seconds > 0)
    std::printf("  read_trace speed / warm simdjson parse, by CPU time: %.2f   [goal >= 0.5]\n",
                rb.warm_cpu_seconds / ri.cpu_seconds);
  std::printf("\n  records kept by read_trace: %llu\n", static_cast<unsigned long long>(ri.items));
  return 0;
}
