// cluster/process: running Slurm's clients and `syncscope run` as child processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "syncscope/cluster/process.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope::cluster {
namespace {

TEST(Process, CapturesStdoutStderrAndTheExitStatus) {
  const auto r = run_capture({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exit status 3");
}

TEST(Process, KeepsAtMostMaxBytesWithoutBlockingTheChild) {
  const auto r = run_capture({"sh", "-c", "head -c 200000 /dev/zero; echo done >&2"}, 1000);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_EQ(r.err, "done\n");
}

TEST(Process, SaysWhenAProgramIsMissingOrKilled) {
  const auto missing = run_capture({"syncscope-no-such-program"});
  EXPECT_FALSE(missing.started);
  EXPECT_NE(missing.describe().find("not found on PATH"), std::string::npos) << missing.describe();
  const auto killed = run_capture({"sh", "-c", "kill -9 $$"});
  EXPECT_EQ(killed.signal, 9);
  EXPECT_EQ(killed.describe(), "killed by signal 9 (SIGKILL)");
}

TEST(Process, FindsProgramsOnAGivenPath) {
  test::TempDir d;
  EXPECT_FALSE(find_program("sh", d.path().c_str()));
  EXPECT_TRUE(find_program("sh", "/nonexistent:/bin:/usr/bin"));
  EXPECT_TRUE(find_program("/bin/sh"));
  EXPECT_FALSE(find_program("/bin"));  // a directory is no program
}

TEST(Process, LoggedRunAppendsBothStreamsToTheLog) {
  test::TempDir d;
  write_file_atomic(d / "log", "$ header\n");
  const auto lr = run_logged({"sh", "-c", "echo one; echo two >&2; exit 1"}, d / "log");
  EXPECT_EQ(lr.result.exit_code, 1);
  EXPECT_EQ(lr.interrupted_by, 0);
  EXPECT_EQ(read_file(d / "log"), "$ header\none\ntwo\n");
}

TEST(Process, ShellQuoteKeepsPlainWordsAndQuotesTheRest) {
  EXPECT_EQ(shell_quote("/opt/syncscope/bin/syncscope"), "/opt/syncscope/bin/syncscope");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
}

// `trace` signalled only its direct child. A SIGTERM sent to us reaches the whole
// process group of the program: here a shell's background `sleep` (a launcher's worker).
TEST(Process, ASignalToUsReachesTheProgramsWholeGroup) {
  test::TempDir d;
  const std::string pidfile = (d / "worker.pid").string();
  std::thread killer([&] {
    for (int i = 0; i < 200 && !std::filesystem::exists(pidfile); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::kill(::getpid(), SIGTERM);
  });
  const GroupRun g = run_in_process_group({"sh", "-c", "sleep 60 & echo $! > " + pidfile + "; wait"}, {});
  killer.join();
  EXPECT_EQ(g.forwarded, SIGTERM);
  EXPECT_TRUE(g.result.started);
  EXPECT_EQ(g.result.signal, SIGTERM) << g.result.describe();
  const pid_t worker = static_cast<pid_t>(std::stol(read_file(pidfile)));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {  // the orphaned worker is reaped by init
    gone = ::kill(worker, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "the program's worker " << worker << " survived";
}

TEST(Process, GroupRunSetsTheEnvironmentAndSaysWhenExecFails) {
  test::TempDir d;
  const GroupRun g = run_in_process_group({"sh", "-c", "echo \"$A|${B-unset}|$MYPID\" > " + (d / "env").string()},
                                          {{"A", "1"}, {"B", std::nullopt}}, "MYPID");
  EXPECT_TRUE(g.result.ok()) << g.result.describe();
  const std::string env = read_file(d / "env");
  EXPECT_EQ(env.substr(0, 8), "1|unset|");
  EXPECT_GT(std::stol(env.substr(8)), 0);
  const GroupRun missing = run_in_process_group({"syncscope-no-such-program"}, {});
  EXPECT_FALSE(missing.result.started);
  EXPECT_EQ(missing.result.exit_code, 127);
  EXPECT_NE(missing.exec_errno, 0);
}

}  // namespace
}  // namespace syncscope::cluster
