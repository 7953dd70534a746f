// The built CLI: many-rank analyze (and its exit 2 cases), analyze --out (the job array
// layout run here) against the local output, sweep's bad input, sweep --status.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

// `env` goes before the command (e.g. "PATH=/nonexistent").
Result cli(const fs::path& cwd, const std::string& args, const std::string& env = "") {
  const fs::path out = cwd / "stdout.txt", err = cwd / "stderr.txt";
  const std::string cmd = "cd '" + cwd.string() + "' && " + env + " '" SYNCSCOPE_CLI "' " + args + " > '" +
                          out.string() + "' 2> '" + err.string() + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::string nccl4() { return test::fixture("ranks/nccl4").string(); }

TEST(ClusterCli, ManyRankTableNamesTheRankThatStandsOut) {
  test::TempDir d;
  const auto r = cli(d.path(), "analyze '" + nccl4() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("syncscope analysis of 4 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stands out: rank 2, compute 800.0 us per step against a median of 500.0 us (+30% of a step)"),
            std::string::npos)
      << r.out;
}

TEST(ClusterCli, JobArrayLayoutRunHereEqualsTheLocalJson) {
  test::TempDir d;
  const auto local = cli(d.path(), "analyze '" + nccl4() + "' --format json --output local.json");
  ASSERT_EQ(local.code, 0) << local.err;
  const auto job = cli(d.path(), "analyze '" + nccl4() + "' --out job --ranks-per-task 3");
  ASSERT_EQ(job.code, 0) << job.err;
  EXPECT_EQ(read_file(d / "job" / "summary.json"), read_file(d / "local.json"));
}

TEST(ClusterCli, BadManyRankInputExitsTwoNamingTheFiles) {
  test::TempDir d;
  fs::create_directories(d / "empty");
  auto r = cli(d.path(), "analyze empty");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("empty: the directory holds no trace"), std::string::npos) << r.err;

  fs::create_directories(d / "dup");
  const auto src = test::fixture("ranks/nccl4/node0_1000.1700000000000000000.pt.trace.json");
  fs::copy_file(src, d / "dup" / "a.json");
  fs::copy_file(src, d / "dup" / "b.json");
  r = cli(d.path(), "analyze dup");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("dup/a.json and dup/b.json both claim rank 0"), std::string::npos) << r.err;

  r = cli(d.path(), "analyze '" + nccl4() + "' --pid 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--pid"), std::string::npos) << r.err;
  r = cli(d.path(), "analyze '" + nccl4() + "' --slurm");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--out DIR is required"), std::string::npos) << r.err;
}

TEST(ClusterCli, OneTraceIsStillTheSingleTraceAnalysis) {
  test::TempDir d;
  const auto r = cli(d.path(), "analyze '" + nccl4() + "/node0_1000.1700000000000000000.pt.trace.json'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("syncscope analysis: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("communication 1.650 ms in 3 NCCL kernels (36.4% of it overlapped with compute)"),
            std::string::npos)
      << r.out;
}

TEST(ClusterCli, SweepWithSlurmButNoSbatchExitsTwo) {
  test::TempDir d;
  fs::copy_file(test::source_dir() / "scenarios" / "qwen3-0.6b.yaml", d / "s.yaml");
  const auto r = cli(d.path(), "sweep s.yaml --slurm --out sw", "PATH=/nonexistent");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("sbatch is not on PATH"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "sw"));
}

TEST(ClusterCli, SweepDryRunThenStatus) {
  test::TempDir d;
  fs::copy_file(test::source_dir() / "scenarios" / "qwen3-0.6b.yaml", d / "s.yaml");
  auto r = cli(d.path(), "sweep s.yaml --gpu-profile H200 B200 --device sim --slurm --gres gpu:1 --dry-run --out sw",
               "PATH=/nonexistent");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("--array=0-1"), std::string::npos) << r.out;
  r = cli(d.path(), "sweep --status sw");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("s--H200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 missing"), std::string::npos) << r.out;
  r = cli(d.path(), "sweep s.yaml --gpu-profile H100 --device sim --out sw");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("holds a different sweep"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace syncscope
