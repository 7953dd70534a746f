// Whole-job replay on real rank traces of one job (tests/fixtures/ranks/hta_job: ranks 0 and 1
// of a 128-rank NCCL job, from HTA's test data): identity within the goal, every collective
// matched or named, the absent peers anchored; and the two single-rank development traces as
// jobs of one rank. No constant of the replay was chosen from these traces.
#include <gtest/gtest.h>

#include "syncscope/io/trace_io.hpp"
#include "syncscope/replay/replay_job.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

replay::JobRankInput fixture_rank(const std::string& rel) {
  replay::JobRankInput in;
  in.source = rel;
  in.load = [rel] { return read_trace(test::fixture(rel)); };
  return in;
}

TEST(ReplayJobFixture, RealRankPairOfOneJobWithinTheGoal) {
  const replay::JobReplayReport rep = replay::replay_job({fixture_rank("ranks/hta_job/sampled_rank-0.json.gz"),
                                                          fixture_rank("ranks/hta_job/sampled_rank-1.json.gz")},
                                                         {}, "hta_job");
  ASSERT_EQ(rep.ranks.size(), 2u);
  EXPECT_EQ(rep.ranks[0].rank, 0);
  EXPECT_EQ(rep.ranks[1].rank, 1);
  EXPECT_GT(rep.collectives, 0u);
  EXPECT_TRUE(rep.peers_anchored);  // 2 of 128 ranks
  EXPECT_EQ(rep.out_of_order, 0u);
  // Every communication kernel is matched, or anchored and its mismatch named.
  for (const auto& r : rep.ranks) EXPECT_EQ(r.collectives + r.unmatched, 10u) << "rank " << r.rank;
  const std::uint64_t unmatched = rep.ranks[0].unmatched + rep.ranks[1].unmatched;
  EXPECT_LE(rep.mismatches_total, unmatched);
  EXPECT_EQ(unmatched > 0, rep.mismatches_total > 0);
  EXPECT_EQ(rep.error_steps, 4u);
  EXPECT_TRUE(rep.within_goal()) << "median " << rep.median_abs_error << " max " << rep.max_abs_error;
  // Both ranks' clocks agree to within a millisecond (one job, one cluster's clock).
  EXPECT_LT(std::abs(rep.ranks[1].clock_offset_ns), 1'000'000);
}

TEST(ReplayJobFixture, OneRankOfAJobReplaysAsOnItsOwn) {
  for (const char* rel :
       {"ranks/hta/hta_trace_diff_control_rank3of8.json.gz", "ranks/hta/hta_negative_queue_length_rank0of16.json.gz"}) {
    const replay::JobReplayReport rep = replay::replay_job({fixture_rank(rel)}, {}, rel);
    ASSERT_EQ(rep.ranks.size(), 1u);
    const auto& r = rep.ranks[0];
    ASSERT_EQ(r.steps.size(), r.single_steps.size());
    for (std::size_t s = 0; s < r.steps.size(); ++s) EXPECT_EQ(r.steps[s].replayed_ns, r.single_steps[s].replayed_ns);
    EXPECT_TRUE(rep.within_goal()) << rel << ": median " << rep.median_abs_error << " max " << rep.max_abs_error;
  }
}

}  // namespace
}  // namespace syncscope
