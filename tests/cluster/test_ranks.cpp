// analysis/ranks: a rank from distributedInfo or the file name, per-rank rows, the
// cross-rank summary (spreads, the rank that stands out, duplicate ranks), and the
// compute/communication split of analysis.hpp on hand-built traces.
#include <gtest/gtest.h>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/analysis/ranks.hpp"
#include "syncscope/core/error.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

TEST(RankFromFileName, FindsRankWithSeparatorsAndCase) {
  EXPECT_EQ(rank_from_file_name("rank3.json"), 3);
  EXPECT_EQ(rank_from_file_name("trainer_rank-12.pt.trace.json.gz"), 12);
  EXPECT_EQ(rank_from_file_name("RANK_7.json"), 7);
  EXPECT_EQ(rank_from_file_name("run.rank.0.json"), 0);
  EXPECT_EQ(rank_from_file_name("rank007.json"), 7);
}

TEST(RankFromFileName, IgnoresWordsThatOnlyContainRank) {
  EXPECT_FALSE(rank_from_file_name("frank3.json"));  // a letter before "rank"
  EXPECT_FALSE(rank_from_file_name("node0_1234.1700000000000000000.pt.trace.json"));
  EXPECT_FALSE(rank_from_file_name("rank.json"));
  EXPECT_FALSE(rank_from_file_name("ranking-2.json"));        // "ranki..." is not rank + digits
  EXPECT_FALSE(rank_from_file_name("rank99999999999.json"));  // beyond any job's ranks
  // The first usable "rank<N>" wins.
  EXPECT_EQ(rank_from_file_name("cranky_rank4.json"), 4);
}

TEST(RankFromMetadata, ReadsDistributedInfoGenerously) {
  TraceMetadata m;
  EXPECT_FALSE(rank_from_metadata(m));
  m.extra["distributedInfo"] = R"({"backend": "nccl", "rank": 5, "world_size": 8})";
  EXPECT_EQ(rank_from_metadata(m), 5);
  m.extra["distributedInfo"] = R"({"rank": "6"})";
  EXPECT_EQ(rank_from_metadata(m), 6);
  m.extra["distributedInfo"] = R"({"rank": -1})";
  EXPECT_FALSE(rank_from_metadata(m));
  m.extra["distributedInfo"] = R"({"rank": 1.5})";
  EXPECT_FALSE(rank_from_metadata(m));
  m.extra["distributedInfo"] = R"({"world_size": 8})";
  EXPECT_FALSE(rank_from_metadata(m));
  m.extra["distributedInfo"] = "not json";
  EXPECT_FALSE(rank_from_metadata(m));
}

TEST(CommunicationKernels, NcclAndRcclNamesOnly) {
  EXPECT_TRUE(is_communication_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(is_communication_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"));
  EXPECT_TRUE(is_communication_kernel("rcclGenericKernel<1, false>"));
  EXPECT_FALSE(is_communication_kernel("void at::native::vectorized_elementwise_kernel<4>()"));
  EXPECT_FALSE(is_communication_kernel("my_nccl_wrapper_kernel"));  // HTA's rule: the name starts with it
  EXPECT_FALSE(is_communication_kernel(""));
}

// Device 0: compute on stream 7 [100, 500) and [600, 700); NCCL on stream 20 [300, 650).
// compute union 500; comm 350 of which [300, 500) and [600, 650) overlap compute: 250.
// Busy = union [100, 700) = 600. A step range [0, 1000) and one [400, 1000) to clip.
TEST(CommunicationKernels, ComputeAndCommunicationApartWithOverlap) {
  test::TraceBuilder b;
  b.kernel(0, 7, 100, 500);
  b.kernel(0, 7, 600, 700);
  auto& n = b.kernel(0, 20, 300, 650);
  n.name = b.t.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  b.annotation("ProfilerStep#0", 0, 1000);
  b.annotation("ProfilerStep#1", 400, 1000);
  const auto r = analyze(b.done());
  EXPECT_EQ(r.totals.kernel_ns, 600);
  EXPECT_EQ(r.totals.compute_kernel_ns, 500);
  EXPECT_EQ(r.totals.comm.kernel_ns, 350);
  EXPECT_EQ(r.totals.comm.kernels, 1u);
  EXPECT_EQ(r.totals.comm.overlapped_ns, 250);
  EXPECT_DOUBLE_EQ(r.totals.comm.overlap_fraction, 250.0 / 350.0);
  EXPECT_EQ(r.totals.gpu_busy_ns, 600);
  ASSERT_EQ(r.steps.size(), 2u);
  // [400, 1000): compute [400, 500) + [600, 700) = 200; comm [400, 650) = 250, overlapped
  // [400, 500) + [600, 650) = 150; the NCCL kernel started at 300, outside: counted by start.
  EXPECT_EQ(r.steps[1].compute_kernel_ns, 200);
  EXPECT_EQ(r.steps[1].comm.kernel_ns, 250);
  EXPECT_EQ(r.steps[1].comm.overlapped_ns, 150);
  EXPECT_EQ(r.steps[1].comm.kernels, 0u);
  EXPECT_DOUBLE_EQ(r.step_summary.comm_kernel_ns.median, 300);  // (350 + 250) / 2
  EXPECT_DOUBLE_EQ(r.step_summary.compute_kernel_ns.max, 500);
}

TEST(CommunicationKernels, OtherDevicesComputeDoesNotHideCommunication) {
  test::TraceBuilder b;
  b.kernel(1, 7, 0, 1000);  // compute on another GPU
  auto& n = b.kernel(0, 20, 100, 300);
  n.name = b.t.intern("ncclKernel_Broadcast_RING_LL");
  const auto r = analyze(b.done());
  EXPECT_EQ(r.totals.comm.kernel_ns, 200);
  EXPECT_EQ(r.totals.comm.overlapped_ns, 0);
  EXPECT_EQ(r.totals.compute_kernel_ns, 1000);
}

RankRow row(std::int64_t rank, double step, double syncs, double blocked, double bubble, double busy, double compute,
            double comm) {
  RankRow r;
  r.rank = rank;
  r.rank_from = "distributedInfo";
  r.source = "r" + std::to_string(rank) + ".json";
  r.steps = 3;
  r.step_ns = step;
  r.syncs = syncs;
  r.blocked_ns = blocked;
  r.bubble_ns = bubble;
  r.busy_ns = busy;
  r.compute_ns = compute;
  r.comm_ns = comm;
  return r;
}

TEST(SummarizeRanks, SpreadsWithTheRanksHoldingMinAndMax) {
  // Given out of order: rows come back by rank.
  std::vector<RankRow> rows = {row(2, 1000, 0, 0, 0, 800, 800, 300), row(0, 1000, 1, 26, 128, 852, 500, 550),
                               row(3, 1000, 0, 0, 0, 850, 500, 550), row(1, 1000, 0, 0, 0, 850, 500, 550)};
  const auto a = summarize_ranks(rows, "dir", "ProfilerStep#*", "");
  ASSERT_EQ(a.ranks.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(a.ranks[i].rank, static_cast<std::int64_t>(i));
  ASSERT_EQ(a.spreads.size(), std::size(kRankMetrics));
  const auto& busy = a.spreads[static_cast<std::size_t>(RankMetric::Busy)];
  EXPECT_EQ(busy.metric, RankMetric::Busy);
  EXPECT_DOUBLE_EQ(busy.min, 800);
  EXPECT_EQ(busy.min_rank, 2);
  EXPECT_DOUBLE_EQ(busy.median, 850);  // (850 + 850) / 2
  EXPECT_DOUBLE_EQ(busy.max, 852);
  EXPECT_EQ(busy.max_rank, 0);
  const auto& step = a.spreads[0];
  EXPECT_EQ(step.min_rank, 0);  // all equal: the lowest rank
  EXPECT_EQ(step.max_rank, 0);
  // Rank 2's compute: (800 - 500) / 1000 = 0.30 of a step; rank 0's bubble (128 - 0) / 1000
  // = 0.128, rank 2's communication (300 - 550) / 1000 = -0.25.
  ASSERT_TRUE(a.standout);
  EXPECT_EQ(a.standout->rank, 2);
  EXPECT_EQ(a.standout->metric, RankMetric::Compute);
  EXPECT_DOUBLE_EQ(a.standout->deviation, 0.3);
  EXPECT_TRUE(a.warnings.empty());
}

TEST(SummarizeRanks, NothingStandsOutBelowTenPercentOfAStep) {
  std::vector<RankRow> rows = {row(0, 1000, 0, 0, 0, 800, 800, 0), row(1, 1000, 0, 0, 0, 800, 890, 0),
                               row(2, 1000, 0, 0, 0, 800, 800, 0)};
  EXPECT_FALSE(summarize_ranks(rows, "d", "s", "").standout);  // 90 us of 1 ms: 0.09
  rows[1].compute_ns = 900;
  const auto a = summarize_ranks(rows, "d", "s", "");
  ASSERT_TRUE(a.standout);
  EXPECT_EQ(a.standout->rank, 1);
  EXPECT_DOUBLE_EQ(a.standout->deviation, 0.1);
}

TEST(SummarizeRanks, TwoRanksNameNoStandout) {
  std::vector<RankRow> rows = {row(0, 1000, 0, 0, 0, 800, 100, 0), row(1, 1000, 0, 0, 0, 800, 900, 0)};
  EXPECT_FALSE(summarize_ranks(rows, "d", "s", "").standout);
}

TEST(SummarizeRanks, TwoFilesClaimingOneRankNameBoth) {
  std::vector<RankRow> rows = {row(0, 1, 0, 0, 0, 0, 0, 0), row(1, 1, 0, 0, 0, 0, 0, 0), row(1, 1, 0, 0, 0, 0, 0, 0)};
  rows[1].source = "a/rank1.json";
  rows[2].source = "a/other.json";
  rows[2].rank_from = "file name";
  try {
    summarize_ranks(rows, "a", "s", "");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("a/rank1.json"), std::string::npos) << m;
    EXPECT_NE(m.find("a/other.json"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 1"), std::string::npos) << m;
  }
}

TEST(SummarizeRanks, WarnsAboutMissingRanksAndRanksWithoutSteps) {
  std::vector<RankRow> rows = {row(0, 1, 0, 0, 0, 0, 0, 0), row(3, 1, 0, 0, 0, 0, 0, 0)};
  rows[1].steps = 0;
  const auto a = summarize_ranks(rows, "d", "ProfilerStep#*", "");
  ASSERT_EQ(a.warnings.size(), 2u);
  EXPECT_NE(a.warnings[0].find("rank(s) 1, 2"), std::string::npos) << a.warnings[0];
  EXPECT_NE(a.warnings[1].find("1 of 2 ranks"), std::string::npos) << a.warnings[1];
}

TEST(SummarizeRanks, EmptyIsEmpty) {
  const auto a = summarize_ranks({}, "d", "s", "");
  EXPECT_TRUE(a.ranks.empty());
  EXPECT_TRUE(a.spreads.empty());
  EXPECT_FALSE(a.standout);
}

TEST(RankRowFromAnalysis, MediansOverStepsElseTheWholeTrace) {
  test::TraceBuilder b;
  b.kernel(0, 7, 100, 400);    // step 0: busy 300
  b.kernel(0, 7, 1100, 1200);  // step 1: busy 100
  b.kernel(0, 7, 2100, 2300);  // step 2: busy 200
  for (int k = 0; k < 3; ++k) b.annotation("ProfilerStep#" + std::to_string(k), 1000 * k, 1000 * k + 1000);
  const Trace t = b.done();
  const auto a = analyze(t);
  const auto r = rank_row(a, 4, "file name", "x/rank4.json");
  EXPECT_EQ(r.rank, 4);
  EXPECT_EQ(r.steps, 3u);
  EXPECT_DOUBLE_EQ(r.busy_ns, 200);
  EXPECT_DOUBLE_EQ(r.step_ns, 1000);
  EXPECT_EQ(r.gpu_busy_ns, 600);
  EXPECT_EQ(r.devices, 1u);

  AnalysisOptions none;
  none.step_glob = "";
  const auto whole = rank_row(analyze(t, none), 4, "file name", "x");
  EXPECT_EQ(whole.steps, 0u);
  EXPECT_DOUBLE_EQ(whole.busy_ns, 600);
  EXPECT_NE(whole.warnings.back().find("whole trace"), std::string::npos);
}

}  // namespace
}  // namespace syncscope
