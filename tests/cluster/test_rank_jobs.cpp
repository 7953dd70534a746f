// analyze as a job array (cluster/rank_jobs): the merged summary equals the local many-rank
// analysis byte for byte, whatever the ranks per task; missing and failed parts are named;
// --slurm submits one array and a dependent merge job (fake sbatch); OUT is never a user's.
#include <gtest/gtest.h>

#include <sstream>

#include "fake_slurm.hpp"
#include "syncscope/cluster/rank_jobs.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/reports/rank_printers.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

std::string nccl4_dir() { return test::fixture("ranks/nccl4").string(); }

cluster::RankJobRequest request(const fs::path& out, std::size_t per_task) {
  cluster::RankJobRequest r;
  r.inputs = {nccl4_dir()};
  r.ranks_per_task = per_task;
  r.out = out;
  r.syncscope = "/usr/bin/syncscope-not-used-here";
  return r;
}

TEST(RankJobs, MergedSummaryEqualsTheLocalAnalysis) {
  const std::string local = rank_analysis_to_json(cluster::analyze_ranks({nccl4_dir()}, {}, 0));
  for (std::size_t per_task : {1u, 3u, 4u, 10u}) {
    test::TempDir d;
    std::ostringstream log;
    EXPECT_EQ(cluster::start_rank_job(request(d / "out", per_task), log), 0);
    EXPECT_EQ(read_file(d / "out" / "summary.json"), local) << "ranks per task " << per_task;
    EXPECT_TRUE(fs::exists(d / "out" / "summary.csv"));
    EXPECT_NE(read_file(d / "out" / "summary.txt").find("stands out: rank 2"), std::string::npos);
    const std::size_t parts = (4 + per_task - 1) / per_task;
    for (std::size_t i = 0; i < parts; ++i)
      EXPECT_TRUE(fs::exists(d / "out" / "parts" / ("part-0000" + std::to_string(i) + ".json"))) << i;
  }
}

TEST(RankJobs, MergeNamesMissingAndFailedParts) {
  test::TempDir d;
  std::ostringstream log;
  auto r = request(d / "out", 2);
  r.dry_run = true;  // lays out OUT, runs nothing
  EXPECT_EQ(cluster::start_rank_job(r, log), 0);
  EXPECT_NE(log.str().find("job rank-part"), std::string::npos) << log.str();
  cluster::run_rank_part(d / "out", 0);
  try {
    cluster::merge_rank_parts(d / "out");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("1 of 2 part(s) have no rows"), std::string::npos) << m;
    EXPECT_NE(m.find("part 1 (" + nccl4_dir() + "/node1_1002"), std::string::npos) << m;
    EXPECT_NE(m.find("wrote nothing"), std::string::npos) << m;
  }
  write_file_atomic(d / "out" / "parts" / "part-00001.error", "rank3.json: broken\n", true);
  try {
    cluster::write_rank_summary(d / "out", log);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("failed: rank3.json: broken"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(d / "out" / "summary.error"));
  EXPECT_FALSE(fs::exists(d / "out" / "summary.json"));
  cluster::run_rank_part(d / "out", 1);  // a rerun of the failed part replaces its error
  EXPECT_FALSE(fs::exists(d / "out" / "parts" / "part-00001.error"));
  cluster::write_rank_summary(d / "out", log);
  EXPECT_FALSE(fs::exists(d / "out" / "summary.error"));
  EXPECT_EQ(read_file(d / "out" / "summary.json"), rank_analysis_to_json(cluster::analyze_ranks({nccl4_dir()}, {}, 0)));
}

TEST(RankJobs, SlurmSubmitsOneArrayAndADependentMerge) {
  test::TempDir d;
  test::FakeSlurm slurm(d / "bin");
  auto r = request(d / "out", 3);
  r.slurm = true;
  r.tools = slurm.tools();
  r.slurm_options.partition = "cpu";
  r.slurm_options.time = "00:10:00";
  std::ostringstream log;
  EXPECT_EQ(cluster::start_rank_job(r, log), 0);
  const auto calls = slurm.calls("sbatch");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_NE(calls[0].find("--parsable --array=0-1 "), std::string::npos) << calls[0];
  EXPECT_NE(calls[0].find("/slurm/part.sh"), std::string::npos) << calls[0];
  EXPECT_NE(calls[1].find("--dependency=afterany:100 "), std::string::npos) << calls[1];
  EXPECT_NE(calls[1].find("/slurm/merge.sh"), std::string::npos) << calls[1];
  const std::string script = read_file(d / "out" / "slurm" / "part.sh");
  EXPECT_NE(script.find("#SBATCH --partition=cpu\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --time=00:10:00\n"), std::string::npos) << script;
  EXPECT_NE(script.find("job rank-part " + fs::absolute(d / "out").lexically_normal().string() +
                        " \"$SLURM_ARRAY_TASK_ID\"\n"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("--gres"), std::string::npos);  // no GPU needed to read traces
}

TEST(RankJobs, SlurmWithoutSbatchIsBadInput) {
  test::TempDir d;
  auto r = request(d / "out", 1);
  r.slurm = true;  // r.tools empty: no sbatch
  std::ostringstream log;
  try {
    cluster::start_rank_job(r, log);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sbatch is not on PATH"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(d / "out"));
}

TEST(RankJobs, OutMustBeNewEmptyOrOursWithForce) {
  test::TempDir d;
  fs::create_directories(d / "user");
  write_file_atomic(d / "user" / "thesis.tex", "precious");
  std::ostringstream log;
  EXPECT_THROW(cluster::start_rank_job(request(d / "user", 2), log), InputError);
  auto r = request(d / "user", 2);
  r.force = true;
  EXPECT_THROW(cluster::start_rank_job(r, log), InputError);  // never a directory we did not write
  EXPECT_EQ(read_file(d / "user" / "thesis.tex"), "precious");

  EXPECT_EQ(cluster::start_rank_job(request(d / "ours", 2), log), 0);
  EXPECT_THROW(cluster::start_rank_job(request(d / "ours", 4), log), InputError);
  auto again = request(d / "ours", 4);
  again.force = true;
  write_file_atomic(d / "ours" / "parts" / "mine.txt", "mine");  // not ours: --force refuses
  EXPECT_THROW(cluster::start_rank_job(again, log), InputError);
  EXPECT_EQ(read_file(d / "ours" / "parts" / "mine.txt"), "mine");
  fs::remove(d / "ours" / "parts" / "mine.txt");
  EXPECT_EQ(cluster::start_rank_job(again, log), 0);
  EXPECT_FALSE(fs::exists(d / "ours" / "parts" / "part-00001.json"));  // the old layout's second part is gone
}

}  // namespace
}  // namespace syncscope
