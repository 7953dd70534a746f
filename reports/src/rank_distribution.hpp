// The table for many ranks (more than kRankTableMaxRows): instead of one row per rank, each
// per-step metric's distribution across ranks and the ranks outside it, named. A 1,000-rank
// analysis stays a page (tests/cluster: under 8 KiB for 1,000 ranks); --format json and csv
// still carry every rank's row for programs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <vector>

#include "syncscope/analysis/ranks.hpp"

namespace syncscope::reports_detail {

// Above this many ranks the table shows distributions, not rows.
inline constexpr std::size_t kRankTableMaxRows = 32;
// Named outliers per metric; the rest are counted.
inline constexpr std::size_t kOutliersNamed = 5;

struct RankOutlier {
  std::int64_t rank = -1;
  double value = 0;
  double deviation = 0;  // (value - median) / median step time (time metrics) or / median (counts), signed
};

struct MetricDistribution {
  RankMetric metric = RankMetric::StepTime;
  // Quantiles by numpy's default (linear) rule, as the medians elsewhere.
  double min = 0, p10 = 0, p25 = 0, median = 0, p75 = 0, p90 = 0, max = 0;
  std::int64_t min_rank = -1, max_rank = -1;
  // Outside Tukey's fences (Q1 - 1.5 IQR, Q3 + 1.5 IQR; Tukey, Exploratory Data Analysis,
  // 1977) and at least kOutlierFloor of a step away from the median (a time metric), or at
  // least 0.5 per step (sync points): with identical ranks the IQR is 0 and rounding would
  // otherwise make outliers. Largest |deviation| first, then the lowest rank.
  std::vector<RankOutlier> outliers;
};
inline constexpr double kOutlierFloor = 0.01;

std::vector<MetricDistribution> rank_distributions(const RankAnalysis& a);

// The per-metric distribution table and the named outliers (everything between the header
// and the "stands out" line of print_rank_table).
void print_rank_distribution(const RankAnalysis& a, std::ostream& out);

}  // namespace syncscope::reports_detail
