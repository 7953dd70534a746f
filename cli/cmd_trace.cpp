// syncscope trace: runs a program under the CUPTI tracer (like `nsys profile`) by loading
// libsyncscope_inject.so into it through CUDA_INJECTION64_PATH, and prints where the trace
// is. The program's exit status is ours, unchanged, with one exception: a program that
// exits 0 while no trace could be written makes it 1. A program killed by a signal makes
// syncscope die of the same signal; one that cannot be started gets no trace (127 or 126).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/cluster/process.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/io/trace_io.hpp"
#if defined(SYNCSCOPE_TRACER_AVAILABLE) && SYNCSCOPE_TRACER_AVAILABLE
#include "syncscope/tracer/activities.hpp"
#include "syncscope/tracer/trace_env.hpp"
#endif

namespace syncscope::cli {
namespace {

// CUPTI buffer memory is host memory held while the program runs: 64 GiB is more than the
// program itself can spare on most machines.
constexpr bounds::Range kBufferCapMb{1, 65536,
                                     "64 GiB of activity buffers is more host memory than a traced program "
                                     "can spare"};

struct TraceArgs {
  std::string output = "syncscope-trace.json.gz";
  std::string activities = "all";
  std::string start_on_range;
  long steps = 0;
  std::string step_range = "*step*";
  long buffer_cap_mb = 256;
  bool force = false;
  std::vector<std::string> command;
};

#if defined(SYNCSCOPE_TRACER_AVAILABLE) && SYNCSCOPE_TRACER_AVAILABLE

namespace fs = std::filesystem;

// The injection library: $SYNCSCOPE_INJECT_LIBRARY, then next to the syncscope binary
// (build tree: cli/../profiler/tracer; install tree: bin/../lib), then the paths
// compiled in.
fs::path find_inject_library() {
  std::vector<fs::path> candidates;
  if (const char* e = std::getenv("SYNCSCOPE_INJECT_LIBRARY"); e != nullptr && *e) candidates.emplace_back(e);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(self.parent_path() / "libsyncscope_inject.so");
    candidates.push_back(self.parent_path().parent_path() / "lib" / "libsyncscope_inject.so");
    candidates.push_back(self.parent_path().parent_path() / "profiler" / "tracer" / "libsyncscope_inject.so");
  }
#ifdef SYNCSCOPE_INJECT_BUILD_PATH
  candidates.emplace_back(SYNCSCOPE_INJECT_BUILD_PATH);
#endif
#ifdef SYNCSCOPE_INJECT_INSTALL_PATH
  candidates.emplace_back(SYNCSCOPE_INJECT_INSTALL_PATH);
#endif
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return fs::absolute(c, ec);
  std::string tried;
  for (const auto& c : candidates) tried += "\n  " + c.string();
  throw Error("syncscope trace: libsyncscope_inject.so not found; looked in:" + tried +
              "\nset SYNCSCOPE_INJECT_LIBRARY to its path");
}

// What the traced program's environment gets: where the injection library is and its
// configuration (trace_env.hpp names them; inject.cpp reads them).
cluster::EnvChanges trace_environment(const TraceArgs& a, const fs::path& inject, const fs::path& output) {
  cluster::EnvChanges env;
  env.emplace_back("CUDA_INJECTION64_PATH", inject.string());
  // NVTX reports to the injection library, which hands NVTX to the CUPTI instance it uses:
  // for NVTX ranges in the trace, and for --start-on-range/--steps (NVTX callbacks).
  if ((parse_activities(a.activities) & kActivityNvtx) || !a.start_on_range.empty() || a.steps > 0)
    env.emplace_back("NVTX_INJECTION64_PATH", inject.string());
  env.emplace_back(trace_env::kOutput, output.string());
  env.emplace_back(trace_env::kActivities, a.activities);
  env.emplace_back(trace_env::kBufferCapMb, std::to_string(a.buffer_cap_mb));
  env.emplace_back(trace_env::kQuiet, "1");
  env.emplace_back(trace_env::kOverwrite, a.force ? "1" : "0");
  env.emplace_back(trace_env::kStartRange,
                   a.start_on_range.empty() ? std::nullopt : std::optional<std::string>(a.start_on_range));
  env.emplace_back(trace_env::kStopAfterSteps,
                   a.steps > 0 ? std::optional<std::string>(std::to_string(a.steps)) : std::nullopt);
  env.emplace_back(trace_env::kStepRange, a.step_range);
  return env;
}

void print_summary(const fs::path& output, bool wrote_empty) {
  try {
    const Trace t = read_trace(output);
    std::fprintf(
        stderr,
        "syncscope trace: %zu records (%zu kernels, %zu copies, %zu API calls, %zu NVTX ranges), %llu dropped; "
        "trace: %s\n",
        t.record_count(), t.kernels.size(), t.memcpys.size(), t.api_calls.size(), t.ranges.size(),
        static_cast<unsigned long long>(t.meta.dropped_records), output.c_str());
    if (!wrote_empty) {
      for (const auto& [k, v] : t.meta.extra)
        if (k.rfind("syncscope_inject_message_", 0) == 0 || k == "note")
          std::fprintf(stderr, "syncscope trace: note: %s\n", v.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "syncscope trace: trace at %s (could not read it back: %s)\n", output.c_str(), e.what());
  }
}

void run_trace(const TraceArgs& a, Context& ctx) {
  SYNCSCOPE_INPUT_ERROR_IF(a.command.empty(),
                           "syncscope trace: no command given; usage: syncscope trace [options] -- COMMAND ARGS...");
  (void)parse_activities(a.activities);  // InputError before anything runs
  SYNCSCOPE_INPUT_ERROR_IF(a.buffer_cap_mb <= 0,
                           "--buffer-cap-mb must be positive (got " + std::to_string(a.buffer_cap_mb) + ")");
  SYNCSCOPE_INPUT_ERROR_IF(a.steps < 0, "--steps must be positive (got " + std::to_string(a.steps) + ")");
  std::error_code ec;
  const fs::path output = a.output == "-" ? fs::path("-") : fs::absolute(a.output, ec);
  SYNCSCOPE_INPUT_ERROR_IF(ec, "--output: cannot resolve '" + a.output + "': " + ec.message());
  // What may be written there (core/output_policy.hpp): nothing is removed beforehand; the
  // tracer replaces a regular file only with --force, never a directory.
  OutputFile plan;
  try {
    plan = plan_output_file(output, a.force);
  } catch (const InputError& e) {
    throw InputError(std::string("--output: ") + e.what());
  }
  // Which file is there now: a trace is written when a new one replaces it (a rename).
  struct stat before {};
  const bool existed = !plan.stream && ::stat(plan.target.c_str(), &before) == 0;
  const fs::path inject = find_inject_library();

  // The program runs in a process group of its own; SIGTERM, SIGINT and the like sent to us
  // reach the whole group (its workers too), and it gets the terminal when we have it
  // (cluster/process.hpp: the same fork, exec and signal code as every child we run).
  const cluster::GroupRun run =
      cluster::run_in_process_group(a.command, trace_environment(a, inject, output), trace_env::kRootPid);
  if (!run.result.started && run.exec_errno == 0) throw Error("syncscope trace: " + run.result.error);
  const bool started = run.result.started;
  const int exec_errno = run.exec_errno;
  const bool exited = run.result.signal == 0;

  // Was a trace written? A stream (stdout, a FIFO, a device) cannot say; a file was when
  // one is there now that was not before (the tracer renames a new file into place).
  auto trace_written = [&] {
    if (plan.stream) return true;
    struct stat now {};
    if (::stat(plan.target.c_str(), &now) != 0 || !S_ISREG(now.st_mode)) return false;
    return !existed || now.st_ino != before.st_ino || now.st_dev != before.st_dev;
  };
  bool wrote_empty = false;
  bool written = trace_written();
  if (!started) {
    // The program never ran: there is nothing to trace, and no trace says otherwise.
    std::fprintf(stderr, "syncscope trace: the program could not be started (%s: %s); no trace written\n",
                 a.command.front().c_str(), std::strerror(exec_errno));
  } else if (!written) {
    // The program never initialized CUDA (or died before exit handlers ran): say so in an
    // empty, valid trace rather than leaving nothing behind.
    Trace t;
    t.meta.source_tool = "syncscope-tracer";
    t.meta.clock = ClockBase::UnixEpoch;
    t.meta.extra["note"] = exited ? "the program never initialized CUDA, so there was nothing to trace"
                                  : "the program was killed before it could write its trace";
    std::string cmdline;
    for (const auto& c : a.command) cmdline += (cmdline.empty() ? "" : " ") + c;
    t.meta.extra["command"] = cmdline;
    try {
      WriteOptions o;
      o.format = TraceFormat::Auto;
      o.overwrite = a.force;
      write_trace(t, output, o);
      wrote_empty = true;
      written = true;
      std::fprintf(stderr, "syncscope trace: %s; wrote an empty trace\n", t.meta.extra["note"].c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "syncscope trace: no trace written: %s\n", e.what());
    }
  }
  if (written && !plan.stream) print_summary(output, wrote_empty);

  if (exited) {
    ctx.exit_code = run.result.exit_code;
    // The program's own non-zero status wins; a clean exit without a trace is a failure.
    if (ctx.exit_code == 0 && !written) {
      std::fprintf(stderr, "syncscope trace: the program exited 0 but no trace was written to %s\n", output.c_str());
      ctx.exit_code = 1;
    }
  } else {
    const int sig = run.result.signal;
    std::fflush(nullptr);
    signal(sig, SIG_DFL);
    raise(sig);
    ctx.exit_code = 128 + sig;  // the signal did not end us (e.g. it is ignored here)
  }
}

#endif  // SYNCSCOPE_TRACER_AVAILABLE

}  // namespace

void add_trace_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<TraceArgs>();
  auto* cmd =
      app.add_subcommand("trace",
                         "Run a program under the CUPTI tracer (like `nsys profile`) and write its trace.\n"
                         "The CUDA driver loads libsyncscope_inject.so into the program (CUDA_INJECTION64_PATH);\n"
                         "the trace is written when the program exits, and its exit status is returned unchanged.\n"
                         "Works on `python3 train.py` with PyTorch. Example:\n"
                         "  syncscope trace --output run.json.gz -- python3 train.py --steps 10\n"
                         "The library reads SYNCSCOPE_TRACE_* variables (set from these options); a program that\n"
                         "never initializes CUDA gets an empty trace saying so.");
  cmd->add_option("-o,--output", args->output, "Trace file (.json or .json.gz: Chrome trace JSON)")
      ->capture_default_str();
  cmd->add_option("--activities", args->activities,
                  "What to record: comma list of kernel, memcpy, memset, sync, event, runtime, driver, nvtx, "
                  "overhead; 'all'; a leading '-' removes one ('all,-overhead')")
      ->capture_default_str();
  cmd->add_option("--start-on-range", args->start_on_range,
                  "Start recording when an NVTX range whose name matches this glob opens (e.g. 'step_2')");
  cmd->add_option("--steps", args->steps,
                  "Stop recording after this many step ranges (NVTX ranges matching --step-range) have closed; "
                  "0: record until exit")
      ->capture_default_str();
  cmd->add_option("--step-range", args->step_range, "Glob naming step ranges (case-insensitive)")
      ->capture_default_str();
  cmd->add_option("--buffer-cap-mb", args->buffer_cap_mb,
                  "Most CUPTI activity buffer memory at once, MiB (4 MiB buffers; past it records are counted as "
                  "dropped)")
      ->check(int_in(kBufferCapMb))
      ->capture_default_str();
  cmd->add_flag("-f,--force", args->force, "Replace the output file if it exists");
  cmd->add_option("command", args->command, "The program and its arguments, after --")->expected(-1);
  cmd->positionals_at_end();
#if defined(SYNCSCOPE_TRACER_AVAILABLE) && SYNCSCOPE_TRACER_AVAILABLE
  cmd->callback([args, &ctx] { run_trace(*args, ctx); });
#else
  cmd->callback([] {
    throw Error(
        "syncscope trace: this build has no CUPTI tracer; configure with -DSYNCSCOPE_ENABLE_CUDA=ON "
        "(needs the CUDA toolkit, not a GPU)");
  });
  (void)ctx;
#endif
}

}  // namespace syncscope::cli
