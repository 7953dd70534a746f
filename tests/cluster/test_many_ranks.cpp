// A 1,000-rank analysis: 1,000 small synthetic rank files read by 2 workers, each
// row handed over as its file finishes, and a table that stays a page: the distribution of
// each metric across ranks with the outliers named, not 1,000 rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "rank_distribution.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/reports/rank_printers.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

constexpr int kRanks = 1000;
constexpr int kSlowRank = 777;     // steps of 1300 us instead of 1000 us
constexpr int kComputeRank = 123;  // its kernel runs 800 us instead of about 400 us

// Two steps of `step` us on one host thread, one kernel launched in each.
std::string rank_trace(int rank) {
  const int step = rank == kSlowRank ? 1300 : 1000;
  const int kernel = rank == kComputeRank ? 800 : 400 + rank % 7;  // some spread: the IQR is not 0
  std::string ev;
  for (int s = 0; s < 2; ++s) {
    const int t0 = 1000 + s * step;
    ev += fmt::format(
        R"({}{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{},"dur":{}}},)"
        R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{}}}}},)"
        R"({{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":{},"dur":{},"args":{{"device":0,"stream":7,"correlation":{}}}}})",
        s ? "," : "", s, t0, step, t0 + 10, s + 1, t0 + 100, kernel, s + 1);
  }
  return fmt::format(R"({{"distributedInfo":{{"backend":"nccl","rank":{},"world_size":{}}},"traceEvents":[{}]}})", rank,
                     kRanks, ev);
}

TEST(ManyRanks, AThousandRanksStreamAndTheTableStaysSmall) {
  test::TempDir dir;
  for (int r = 0; r < kRanks; ++r) std::ofstream(dir / fmt::format("rank{}.json", r)) << rank_trace(r);

  std::size_t calls = 0, last_done = 0, total = 0;
  std::set<std::int64_t> seen;
  const RankAnalysis a =
      cluster::analyze_ranks({dir.path().string()}, {}, 2, [&](const RankRow& row, std::size_t done, std::size_t n) {
        ++calls;
        EXPECT_EQ(done, last_done + 1);  // one at a time, counted
        last_done = done;
        total = n;
        seen.insert(row.rank);
      });
  EXPECT_EQ(calls, static_cast<std::size_t>(kRanks));
  EXPECT_EQ(total, static_cast<std::size_t>(kRanks));
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kRanks));
  ASSERT_EQ(a.ranks.size(), static_cast<std::size_t>(kRanks));
  EXPECT_DOUBLE_EQ(a.ranks[kSlowRank].step_ns, 1300e3);
  EXPECT_DOUBLE_EQ(a.ranks[kComputeRank].compute_ns, 800e3);

  std::ostringstream out;
  print_rank_table(a, out);
  const std::string table = out.str();
  const auto lines = std::count(table.begin(), table.end(), '\n');
  EXPECT_LT(table.size(), 8192u) << table;
  EXPECT_LE(lines, 40) << table;
  EXPECT_EQ(table.find("rank500.json"), std::string::npos) << "one row per rank:\n" << table;
  EXPECT_NE(table.find("syncscope analysis of 1000 ranks"), std::string::npos) << table;
  // The outliers, named under their metric.
  const auto step_line = table.find("  step time: rank 777 1.300 ms");
  EXPECT_NE(step_line, std::string::npos) << table;
  EXPECT_NE(table.find("  compute: rank 123 800.0 us"), std::string::npos) << table;
  EXPECT_NE(table.find("stands out: rank 123, "), std::string::npos) << table;
}

// Quantiles by numpy's linear rule and Tukey's fences on hand-made rows.
TEST(ManyRanks, DistributionFiguresByHand) {
  std::vector<RankRow> rows(40);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].rank = static_cast<std::int64_t>(i);
    rows[i].source = fmt::format("r{}.json", i);
    rows[i].step_ns = 1e6 + 1000.0 * static_cast<double>(i % 10);  // 1.000 .. 1.009 ms
    rows[i].syncs = 2;
  }
  rows[5].step_ns = 2e6;    // far above Q3 + 1.5 IQR
  rows[6].step_ns = 0.5e6;  // far below Q1 - 1.5 IQR
  rows[7].syncs = 2.4;      // outside the fences (IQR 0) but under 0.5 per step from the median: not named
  rows[8].syncs = 4;        // named
  const RankAnalysis a = summarize_ranks(rows, "x", "ProfilerStep#*", "");
  const auto d = reports_detail::rank_distributions(a);
  ASSERT_EQ(d.size(), std::size(kRankMetrics));
  const auto& step = d[0];
  EXPECT_EQ(step.min_rank, 6);
  EXPECT_EQ(step.max_rank, 5);
  // Sorted: 0.5e6, then 1.000..1.009 ms (38 values: four each of 1.000..1.009 except the two
  // replaced, 5 and 6 of the first ten), then 2e6. Median of 40: mean of the 20th and 21st.
  std::vector<double> v;
  for (const auto& r : rows) v.push_back(r.step_ns);
  std::sort(v.begin(), v.end());
  EXPECT_DOUBLE_EQ(step.median, (v[19] + v[20]) / 2);
  EXPECT_DOUBLE_EQ(step.p25, v[9] + 0.75 * (v[10] - v[9]));  // position 0.25 * 39 = 9.75
  ASSERT_EQ(step.outliers.size(), 2u);
  EXPECT_EQ(step.outliers[0].rank, 5);  // +100% of a step before -50%
  EXPECT_EQ(step.outliers[1].rank, 6);
  const auto& syncs = d[1];
  ASSERT_EQ(syncs.outliers.size(), 1u);
  EXPECT_EQ(syncs.outliers[0].rank, 8);
  EXPECT_DOUBLE_EQ(syncs.outliers[0].deviation, 1.0);  // (4 - 2) / 2
}

// At most kRankTableMaxRows ranks keep the one-row-per-rank table (and its goldens).
TEST(ManyRanks, FewRanksKeepTheirRows) {
  std::vector<RankRow> rows(reports_detail::kRankTableMaxRows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].rank = static_cast<std::int64_t>(i);
    rows[i].source = fmt::format("r{}.json", i);
    rows[i].step_ns = 1e6;
  }
  std::ostringstream out;
  print_rank_table(summarize_ranks(rows, "x", "ProfilerStep#*", ""), out);
  EXPECT_NE(out.str().find("r31.json"), std::string::npos);
  EXPECT_EQ(out.str().find("p90"), std::string::npos);
}

}  // namespace
}  // namespace syncscope
