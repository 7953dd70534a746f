#include "rank_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "syncscope/core/units.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope::reports_detail {

namespace {

// numpy.quantile's default ("linear"): position q (n - 1) between the sorted values.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::string show(RankMetric m, double v) {
  if (metric_is_time(m)) return format_duration(static_cast<Ns>(std::llround(v)));
  return fmt::format("{:g}", std::round(v * 100) / 100);
}

}  // namespace

std::vector<MetricDistribution> rank_distributions(const RankAnalysis& a) {
  std::vector<MetricDistribution> out;
  if (a.ranks.empty()) return out;
  std::vector<double> steps;
  for (const auto& r : a.ranks) steps.push_back(r.step_ns);
  std::sort(steps.begin(), steps.end());
  const double step_median = quantile(steps, 0.5);
  for (RankMetric m : kRankMetrics) {
    MetricDistribution d;
    d.metric = m;
    std::vector<std::pair<double, std::int64_t>> v;  // (value, rank)
    v.reserve(a.ranks.size());
    for (const auto& r : a.ranks) v.emplace_back(metric_value(r, m), r.rank);
    std::sort(v.begin(), v.end());  // ties: the lowest rank first
    std::vector<double> s;
    s.reserve(v.size());
    for (const auto& [x, rank] : v) s.push_back(x);
    d.min = s.front();
    d.min_rank = v.front().second;
    d.max = s.back();
    // The lowest rank among those holding the maximum.
    d.max_rank =
        std::lower_bound(v.begin(), v.end(), std::make_pair(d.max, std::numeric_limits<std::int64_t>::min()))->second;
    d.p10 = quantile(s, 0.10);
    d.p25 = quantile(s, 0.25);
    d.median = quantile(s, 0.50);
    d.p75 = quantile(s, 0.75);
    d.p90 = quantile(s, 0.90);
    const double iqr = d.p75 - d.p25;
    const double lo = d.p25 - 1.5 * iqr, hi = d.p75 + 1.5 * iqr;
    const bool time = metric_is_time(m);
    // What a deviation is measured against: a step (time metrics, as the standout rank) or
    // the metric's own median (sync points; 1 when the median is 0).
    const double scale = time ? step_median : (d.median != 0 ? std::abs(d.median) : 1.0);
    const double floor = time ? kOutlierFloor * step_median : 0.5;
    for (const auto& [x, rank] : v) {
      if ((x < lo || x > hi) && std::abs(x - d.median) >= floor && scale > 0)
        d.outliers.push_back({rank, x, (x - d.median) / scale});
    }
    std::stable_sort(d.outliers.begin(), d.outliers.end(), [](const RankOutlier& x, const RankOutlier& y) {
      if (std::abs(x.deviation) != std::abs(y.deviation)) return std::abs(x.deviation) > std::abs(y.deviation);
      return x.rank < y.rank;
    });
    out.push_back(std::move(d));
  }
  return out;
}

void print_rank_distribution(const RankAnalysis& a, std::ostream& out) {
  const auto dists = rank_distributions(a);
  out << fmt::format(
      "  {} ranks: the distribution of each metric across ranks and the ranks outside it\n"
      "  (one row per rank: --format json or csv)\n\n",
      a.ranks.size());
  out << fmt::format("{:<24}{:>20}{:>11}{:>11}{:>11}{:>11}{:>11}{:>20}{:>10}\n", "per step, across ranks", "min (rank)",
                     "p10", "p25", "median", "p75", "p90", "max (rank)", "outliers");
  for (const auto& d : dists) {
    out << fmt::format("  {:<22}{:>20}{:>11}{:>11}{:>11}{:>11}{:>11}{:>20}{:>10}\n", metric_label(d.metric),
                       fmt::format("{} ({})", show(d.metric, d.min), d.min_rank), show(d.metric, d.p10),
                       show(d.metric, d.p25), show(d.metric, d.median), show(d.metric, d.p75), show(d.metric, d.p90),
                       fmt::format("{} ({})", show(d.metric, d.max), d.max_rank), d.outliers.size());
  }
  bool any = false;
  for (const auto& d : dists) any = any || !d.outliers.empty();
  if (!any) {
    out << "\nno outliers (every rank within the quartiles +/- 1.5 IQR, or within 1% of a step of the median)\n";
    return;
  }
  out << fmt::format(
      "\noutliers (outside the quartiles +/- 1.5 IQR; the farthest {} per metric; in brackets the difference\n"
      "from the median: times in % of the median step, sync points per step)\n",
      kOutliersNamed);
  for (const auto& d : dists) {
    if (d.outliers.empty()) continue;
    std::string line;
    for (std::size_t i = 0; i < d.outliers.size() && i < kOutliersNamed; ++i) {
      const auto& o = d.outliers[i];
      const std::string off = metric_is_time(d.metric)
                                  ? fmt::format("{:+.0f}%", 100.0 * o.deviation)
                                  : fmt::format("{:+g}", std::round((o.value - d.median) * 100) / 100);
      line += fmt::format("{}rank {} {} ({})", i ? ", " : "", o.rank, show(d.metric, o.value), off);
    }
    if (d.outliers.size() > kOutliersNamed) line += fmt::format(", and {} more", d.outliers.size() - kOutliersNamed);
    out << fmt::format("  {}: {}\n", metric_label(d.metric), line);
  }
}

}  // namespace syncscope::reports_detail
