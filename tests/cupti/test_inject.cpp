// libsyncscope_inject.so on a machine without a GPU, loaded the way the CUDA driver loads
// it (dlopen + InitializeInjection), in child processes: it must return, leave the exit
// status alone, log CUPTI's refusal once, and write an empty, valid trace at exit. And
// `syncscope trace` around programs that never touch CUDA.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "syncscope/io/trace_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

struct ChildResult {
  int exit_code = -1;
  std::string err;
};

// Runs `body` in a forked child with stderr sent to a file; the child ends with
// exit(body()) so atexit handlers run as in a real program.
template <class F>
ChildResult in_child(const test::TempDir& dir, F body) {
  const auto err_path = dir / "stderr.txt";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(err_path.c_str(), "w", stderr)) _exit(99);
    std::exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ChildResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = slurp(err_path);
  return r;
}

int load_and_initialize(int calls) {
  void* h = dlopen(SYNCSCOPE_TEST_INJECT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 90;
  }
  auto* init = reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection"));
  if (init == nullptr) return 91;
  for (int i = 0; i < calls; ++i) (void)init();
  return 0;
}

TEST(InjectLibrary, ExportsOnlyItsEntryPoints) {
  void* h = dlopen(SYNCSCOPE_TEST_INJECT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_NE(dlsym(h, "InitializeInjection"), nullptr);
  EXPECT_NE(dlsym(h, "InitializeInjectionNvtx2"), nullptr);
  // Our static libraries stay inside: nothing to clash with a traced program's copies.
  EXPECT_EQ(dlsym(h, "_ZN9syncscope11write_traceERKNS_5TraceERKNSt10filesystem7__cxx114pathERKNS_12WriteOptionsE"),
            nullptr);
  dlclose(h);
}

TEST(InjectLibrary, WithoutAGpuInitializesCleanlyAndWritesAnEmptyValidTrace) {
  test::TempDir dir;
  const auto out = dir / "trace.json";
  setenv("SYNCSCOPE_TRACE_OUTPUT", out.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_QUIET", "0", 1);
  unsetenv("SYNCSCOPE_TRACE_ROOT_PID");
  const ChildResult r = in_child(dir, [] { return load_and_initialize(2); });
  unsetenv("SYNCSCOPE_TRACE_OUTPUT");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // CUPTI refuses without a driver: said once, on stderr, with the library's prefix.
  EXPECT_EQ(occurrences(r.err, "syncscope-inject: CUPTI could not start tracing"), 1u) << r.err;
  EXPECT_NE(r.err.find("wrote 0 records"), std::string::npos) << r.err;
  ASSERT_TRUE(std::filesystem::exists(out)) << r.err;
  const Trace t = read_trace(out);
  EXPECT_EQ(t.record_count(), 0u);
  EXPECT_EQ(t.meta.source_tool, "syncscope-tracer");
  ASSERT_TRUE(t.meta.extra.count("note"));
  EXPECT_NE(t.meta.extra.at("note").find("failed to start"), std::string::npos);
}

TEST(InjectLibrary, ExitStatusIsUnchanged) {
  test::TempDir dir;
  const auto out = dir / "trace.json.gz";
  setenv("SYNCSCOPE_TRACE_OUTPUT", out.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_QUIET", "1", 1);
  const ChildResult r = in_child(dir, [] { return load_and_initialize(1) == 0 ? 7 : 1; });
  unsetenv("SYNCSCOPE_TRACE_OUTPUT");
  unsetenv("SYNCSCOPE_TRACE_QUIET");
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_EQ(r.err.find("wrote"), std::string::npos) << "quiet: no summary line";
}

TEST(InjectLibrary, ExistingOutputIsNotReplacedAndTheProgramStillSucceeds) {
  test::TempDir dir;
  const auto out = dir / "trace.json";
  { std::ofstream(out) << "precious"; }
  setenv("SYNCSCOPE_TRACE_OUTPUT", out.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_OVERWRITE", "0", 1);
  const ChildResult r = in_child(dir, [] { return load_and_initialize(1); });
  unsetenv("SYNCSCOPE_TRACE_OUTPUT");
  unsetenv("SYNCSCOPE_TRACE_OVERWRITE");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(slurp(out), "precious");
  EXPECT_NE(r.err.find("syncscope-inject: could not write the trace"), std::string::npos) << r.err;
}

TEST(InjectLibrary, BadSettingsAreReportedNotFatal) {
  test::TempDir dir;
  const auto out = dir / "t.json";
  setenv("SYNCSCOPE_TRACE_OUTPUT", out.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_ACTIVITIES", "kernel,bogus", 1);
  setenv("SYNCSCOPE_TRACE_STOP_AFTER_STEPS", "many", 1);
  const ChildResult r = in_child(dir, [] { return load_and_initialize(1); });
  unsetenv("SYNCSCOPE_TRACE_OUTPUT");
  unsetenv("SYNCSCOPE_TRACE_ACTIVITIES");
  unsetenv("SYNCSCOPE_TRACE_STOP_AFTER_STEPS");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("SYNCSCOPE_TRACE_ACTIVITIES"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SYNCSCOPE_TRACE_STOP_AFTER_STEPS"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST(InjectLibrary, OtherProcessesOfTheRunWriteBesideTheRootTrace) {
  test::TempDir dir;
  const auto out = dir / "run.json.gz";
  setenv("SYNCSCOPE_TRACE_OUTPUT", out.c_str(), 1);
  setenv("SYNCSCOPE_TRACE_ROOT_PID", "1", 1);  // not the child: it is "another process"
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    (void)std::freopen("/dev/null", "w", stderr);
    std::exit(load_and_initialize(1));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  unsetenv("SYNCSCOPE_TRACE_OUTPUT");
  unsetenv("SYNCSCOPE_TRACE_ROOT_PID");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(std::filesystem::exists(dir / ("run-pid" + std::to_string(pid) + ".json.gz")));
}

#ifdef SYNCSCOPE_TEST_CLI
int run_cli(const std::string& args, const std::filesystem::path& err) {
  const std::string cmd = std::string(SYNCSCOPE_TEST_CLI) + " " + args + " 2>" + err.string() + " >/dev/null";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(TraceCommand, ReturnsTheProgramsExitCodeAndWritesAnEmptyTrace) {
  test::TempDir dir;
  const auto out = dir / "t.json";
  const auto err = dir / "err.txt";
  EXPECT_EQ(run_cli("trace --output " + out.string() + " -- /bin/sh -c 'exit 3'", err), 3) << slurp(err);
  ASSERT_TRUE(std::filesystem::exists(out)) << slurp(err);
  const Trace t = read_trace(out);
  EXPECT_EQ(t.record_count(), 0u);
  EXPECT_NE(t.meta.extra.at("note").find("never initialized CUDA"), std::string::npos);
  const std::string e = slurp(err);
  EXPECT_NE(e.find("never initialized CUDA"), std::string::npos) << e;
  EXPECT_NE(e.find(out.string()), std::string::npos) << "says where the trace is: " << e;
  EXPECT_EQ(run_cli("trace --output " + out.string() + " -- /bin/true", err), 2) << "refuses to overwrite";
  EXPECT_NE(slurp(err).find("--force"), std::string::npos);
  EXPECT_EQ(run_cli("trace --force --output " + out.string() + " -- /bin/sh -c 'exit 0'", err), 0) << slurp(err);
}

TEST(TraceCommand, BadInputIsExitTwoAndMissingProgramIs127) {
  test::TempDir dir;
  const auto err = dir / "err.txt";
  EXPECT_EQ(run_cli("trace --activities kernels --output " + (dir / "a.json").string() + " -- /bin/true", err), 2);
  EXPECT_NE(slurp(err).find("kernels"), std::string::npos);
  EXPECT_EQ(run_cli("trace --output " + (dir / "no/such/dir.json").string() + " -- /bin/true", err), 2);
  EXPECT_EQ(run_cli("trace --output " + (dir / "b.json").string(), err), 2) << "no command";
  EXPECT_EQ(run_cli("trace --output " + (dir / "c.json").string() + " -- /no/such/program", err), 127);
}

TEST(TraceCommand, ADeadlySignalIsPassedOn) {
  test::TempDir dir;
  const auto err = dir / "err.txt";
  const std::string cmd = std::string(SYNCSCOPE_TEST_CLI) + " trace --output " + (dir / "k.json").string() +
                          " -- /bin/sh -c 'kill -TERM $$' 2>" + err.string();
  const int status = std::system(cmd.c_str());
  // system() runs sh -c, which reports a child killed by a signal as 128+signal.
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 128 + SIGTERM) << slurp(err);
  EXPECT_TRUE(std::filesystem::exists(dir / "k.json"));
}
#endif

}  // namespace
}  // namespace syncscope
