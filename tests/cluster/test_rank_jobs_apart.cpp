// Two jobs' rank traces in one directory are named apart, never merged (analysis/ranks.hpp,
// "Jobs": distributedInfo.world_size, the rule `view` uses too). The directory is built in a
// temporary directory from two fixtures: tests/fixtures/ranks/nccl4 (world size 4: ranks 0-2
// record it, rank3.pt.trace.json.gz records none) and tests/fixtures/ranks/hta_job (world size
// 128: ranks 0 and 1). Before the rule the two rank 0s were one error ("both claim rank 0").
// Also the potential stragglers (ours) on nccl4, worked out by hand from make_nccl4.py.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/reports/rank_printers.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

fs::path two_jobs(const test::TempDir& d) {
  const fs::path dir = d / "two_jobs";
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(test::fixture("ranks/nccl4")))
    fs::copy_file(e.path(), dir / e.path().filename());
  for (const char* f : {"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"})
    fs::copy_file(test::fixture("ranks/hta_job") / f, dir / f);
  return dir;
}

TEST(RankJobsApart, TwoJobsInOneDirectoryAreSummarizedApart) {
  test::TempDir d;
  const RankAnalysis a = cluster::analyze_ranks({two_jobs(d).string()}, {}, 2);
  EXPECT_TRUE(a.ranks.empty());  // nothing merged at the top
  EXPECT_TRUE(a.spreads.empty());
  EXPECT_FALSE(a.standout);
  ASSERT_EQ(a.jobs.size(), 3u);  // no world size (rank3 file), 4, 128
  EXPECT_EQ(a.jobs[0].world_size, 0);
  ASSERT_EQ(a.jobs[0].ranks.size(), 1u);
  EXPECT_EQ(a.jobs[0].ranks[0].rank, 3);
  EXPECT_EQ(a.jobs[1].world_size, 4);
  ASSERT_EQ(a.jobs[1].ranks.size(), 3u);
  EXPECT_EQ(a.jobs[1].ranks[2].rank, 2);
  EXPECT_EQ(a.jobs[2].world_size, 128);
  ASSERT_EQ(a.jobs[2].ranks.size(), 2u);
  EXPECT_NE(a.jobs[2].ranks[0].source.find("sampled_rank-0"), std::string::npos);
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_NE(a.warnings[0].find("3 different jobs"), std::string::npos) << a.warnings[0];
  EXPECT_NE(a.warnings[0].find("world size 128: 2 trace(s)"), std::string::npos) << a.warnings[0];

  std::ostringstream table;
  print_rank_table(a, table);
  EXPECT_NE(table.str().find("syncscope analysis of 3 jobs"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("== job: world size 128"), std::string::npos) << table.str();
  const auto j = nlohmann::json::parse(rank_analysis_to_json(a));
  ASSERT_EQ(j["jobs"].size(), 3u);
  EXPECT_EQ(j["jobs"][2]["world_size"], 128);
  EXPECT_EQ(j["jobs"][2]["ranks"][1]["rank"], 1);
  EXPECT_TRUE(j["ranks"].empty());
  const std::string csv = rank_analysis_to_csv(a);
  EXPECT_NE(csv.find("rank,1,steps,2,1,128\r\n"), std::string::npos) << csv.substr(0, 400);
}

TEST(RankJobsApart, OneJobStaysOneTableWithItsWorldSize) {
  const RankAnalysis a = cluster::analyze_ranks({test::fixture("ranks/nccl4").string()}, {}, 2);
  EXPECT_TRUE(a.jobs.empty());
  EXPECT_EQ(a.ranks.size(), 4u);  // rank3's file records no world size and joins the one job
  EXPECT_EQ(a.world_size, 0);     // ... so the set's world size is not known
  EXPECT_EQ(a.ranks[0].world_size, 4);
  EXPECT_EQ(a.ranks[3].world_size, 0);
}

// make_nccl4.py: communication per step 550 us on ranks 0, 1, 3 and 300 us on rank 2 (the
// straggler: the others wait for it inside the all-reduce). Rank 2 is late by 550 - 300 =
// 250 us, 25% of the 1 ms step; no other rank is late (all at the maximum).
TEST(RankJobsApart, TheStragglerOfTheNccl4Fixture) {
  const RankAnalysis a = cluster::analyze_ranks({test::fixture("ranks/nccl4").string()}, {}, 2);
  ASSERT_EQ(a.stragglers.size(), 1u);
  EXPECT_EQ(a.stragglers[0].rank, 2);
  EXPECT_DOUBLE_EQ(a.stragglers[0].comm_ns, 300e3);
  EXPECT_DOUBLE_EQ(a.stragglers[0].late_ns, 250e3);
  EXPECT_DOUBLE_EQ(a.stragglers[0].late_fraction, 0.25);
}

}  // namespace
}  // namespace syncscope
