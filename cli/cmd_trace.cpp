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
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/io/trace_io.hpp"
#if defined(SYNCSCOPE_TRACER_AVAILABLE) && SYNCSCOPE_TRACER_AVAILABLE
#include "syncscope/tracer/tracer.hpp"
#endif

namespace syncscope::cli {
namespace {

// CUPTI buffer memory is host memory held while the program runs: 64 GiB is more than the
// program itself can spare on most machines.
constexpr bounds::Range kBufferCapMb{1, 65536, "64 GiB of activity buffers is more host memory than a traced program "
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

volatile sig_atomic_t g_child = 0;

// Forwards signals sent to syncscope by another process (kill, a job scheduler) to the
// program. Terminal-generated ones (Ctrl-C) already reach the whole foreground process
// group, the program included, so forwarding them would deliver them twice.
void forward_signal(int sig, siginfo_t* info, void*) {
  if (g_child > 0 && info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) kill(g_child, sig);
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// The injection library: $SYNCSCOPE_INJECT_LIBRARY, then next to the syncscope binary
// (build tree: cli/../profiler/src/cupti; install tree: bin/../lib), then the paths
// compiled in.
fs::path find_inject_library() {
  std::vector<fs::path> candidates;
  if (const char* e = std::getenv("SYNCSCOPE_INJECT_LIBRARY"); e != nullptr && *e) candidates.emplace_back(e);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(self.parent_path() / "libsyncscope_inject.so");
    candidates.push_back(self.parent_path().parent_path() / "lib" / "libsyncscope_inject.so");
    candidates.push_back(self.parent_path().parent_path() / "profiler" / "src" / "cupti" / "libsyncscope_inject.so");
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

// `status_fd` is the write end of a close-on-exec pipe: a successful exec closes it, a
// failed one writes errno there first, so the parent knows the program never started.
[[noreturn]] void exec_child(const TraceArgs& a, const fs::path& inject, const fs::path& output, int status_fd) {
  setenv("CUDA_INJECTION64_PATH", inject.c_str(), 1);
  // NVTX reports to the injection library, which hands NVTX to the CUPTI instance it uses:
  // for NVTX ranges in the trace, and for --start-on-range/--steps (NVTX callbacks).
  if ((parse_activities(a.activities) & kActivityNvtx) || !a.start_on_range.empty() || a.steps > 0)
    setenv("NVTX_INJECTION64_PATH", inject.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_OUTPUT", output.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_ACTIVITIES", a.activities.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_BUFFER_CAP_MB", std::to_string(a.buffer_cap_mb).c_str(), 1);
  setenv("SYNCSCOPE_TRACE_ROOT_PID", std::to_string(static_cast<long>(getpid())).c_str(), 1);
  setenv("SYNCSCOPE_TRACE_QUIET", "1", 1);
  setenv("SYNCSCOPE_TRACE_OVERWRITE", a.force ? "1" : "0", 1);
  if (!a.start_on_range.empty()) setenv("SYNCSCOPE_TRACE_START_RANGE", a.start_on_range.c_str(), 1);
  else unsetenv("SYNCSCOPE_TRACE_START_RANGE");
  if (a.steps > 0) setenv("SYNCSCOPE_TRACE_STOP_AFTER_STEPS", std::to_string(a.steps).c_str(), 1);
  else unsetenv("SYNCSCOPE_TRACE_STOP_AFTER_STEPS");
  setenv("SYNCSCOPE_TRACE_STEP_RANGE", a.step_range.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& s : a.command) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  const int err = errno;
  std::fprintf(stderr, "syncscope trace: cannot run '%s': %s\n", argv[0], std::strerror(err));
  (void)!write(status_fd, &err, sizeof err);
  _exit(err == ENOENT ? 127 : 126);
}

void print_summary(const fs::path& output, bool wrote_empty) {
  try {
    const Trace t = read_trace(output);
    std::fprintf(stderr,
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
  SYNCSCOPE_INPUT_ERROR_IF(a.command.empty(), "syncscope trace: no command given; usage: syncscope trace [options] -- COMMAND ARGS...");
  (void)parse_activities(a.activities);  // InputError before anything runs
  SYNCSCOPE_INPUT_ERROR_IF(a.buffer_cap_mb <= 0, "--buffer-cap-mb must be positive (got " + std::to_string(a.buffer_cap_mb) + ")");
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

  struct sigaction sa {};
  sa.sa_sigaction = &forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  struct sigaction old[std::size(kForwarded)];
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &sa, &old[i]);

  int exec_status[2] = {-1, -1};
  if (pipe2(exec_status, O_CLOEXEC) != 0)
    throw Error(std::string("syncscope trace: pipe failed: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error(std::string("syncscope trace: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &old[i], nullptr);
    close(exec_status[0]);
    exec_child(a, inject, output, exec_status[1]);
  }
  close(exec_status[1]);
  g_child = pid;
  int exec_errno = 0;
  ssize_t got = 0;
  while ((got = read(exec_status[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  close(exec_status[0]);
  const bool started = got != static_cast<ssize_t>(sizeof exec_errno);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(std::string("syncscope trace: waitpid failed: ") + std::strerror(errno));
  }
  g_child = 0;
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &old[i], nullptr);

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
    std::fprintf(stderr, "syncscope trace: the program could not be started (%s); no trace written\n",
                 std::strerror(exec_errno));
  } else if (!written) {
    // The program never initialized CUDA (or died before exit handlers ran): say so in an
    // empty, valid trace rather than leaving nothing behind.
    Trace t;
    t.meta.source_tool = "syncscope-tracer";
    t.meta.clock = ClockBase::UnixEpoch;
    const bool exited = WIFEXITED(status);
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

  if (WIFEXITED(status)) {
    ctx.exit_code = WEXITSTATUS(status);
    // The program's own non-zero status wins; a clean exit without a trace is a failure.
    if (ctx.exit_code == 0 && !written) {
      std::fprintf(stderr, "syncscope trace: the program exited 0 but no trace was written to %s\n",
                   output.c_str());
      ctx.exit_code = 1;
    }
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
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
  auto* cmd = app.add_subcommand(
      "trace",
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
  cmd->add_option("--step-range", args->step_range, "Glob naming step ranges (case-insensitive)")->capture_default_str();
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
    throw Error("syncscope trace: this build has no CUPTI tracer; configure with -DSYNCSCOPE_ENABLE_CUDA=ON "
                "(needs the CUDA toolkit, not a GPU)");
  });
  (void)ctx;
#endif
}

}  // namespace syncscope::cli
