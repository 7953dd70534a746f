// cluster/process: running Slurm's clients and `syncscope run` as child processes.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace syncscope::cluster
