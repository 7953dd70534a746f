// Sorted, disjoint half-open intervals with prefix sums, so the measure of the set inside
// any window is two binary searches: per-step and per-layer statistics cost O(log n) each
// instead of a scan over every GPU record.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "syncscope/core/units.hpp"

namespace syncscope::analysis_detail {

class IntervalSet {
 public:
  IntervalSet() = default;
  // Takes any intervals (unsorted, overlapping, empty ones ignored) and merges them.
  explicit IntervalSet(std::vector<std::pair<Ns, Ns>> intervals) {
    // Callers often pass intervals already in order (records sorted by start): skip the sort.
    if (!std::is_sorted(intervals.begin(), intervals.end())) std::sort(intervals.begin(), intervals.end());
    for (const auto& [s, e] : intervals) {
      if (e <= s) continue;
      if (!ends_.empty() && s <= ends_.back()) {
        ends_.back() = std::max(ends_.back(), e);
      } else {
        starts_.push_back(s);
        ends_.push_back(e);
      }
    }
    prefix_.resize(starts_.size() + 1, 0);
    for (std::size_t i = 0; i < starts_.size(); ++i) prefix_[i + 1] = prefix_[i] + (ends_[i] - starts_[i]);
  }

  Ns total() const { return prefix_.empty() ? 0 : prefix_.back(); }
  std::size_t size() const { return starts_.size(); }
  bool empty() const { return starts_.empty(); }
  Ns start(std::size_t i) const { return starts_[i]; }
  Ns end(std::size_t i) const { return ends_[i]; }

  // Length of the set inside [a, b).
  Ns measure(Ns a, Ns b) const {
    if (b <= a || starts_.empty()) return 0;
    // first interval ending after a; first interval starting at or after b
    auto i = static_cast<std::size_t>(std::upper_bound(ends_.begin(), ends_.end(), a) - ends_.begin());
    auto j = static_cast<std::size_t>(std::lower_bound(starts_.begin(), starts_.end(), b) - starts_.begin());
    if (i >= j) return 0;
    Ns m = prefix_[j] - prefix_[i];
    if (a > starts_[i]) m -= a - starts_[i];
    if (ends_[j - 1] > b) m -= ends_[j - 1] - b;
    return m;
  }

  // Index of the first interval that ends after t (size() when none).
  std::size_t first_ending_after(Ns t) const {
    return static_cast<std::size_t>(std::upper_bound(ends_.begin(), ends_.end(), t) - ends_.begin());
  }

 private:
  std::vector<Ns> starts_, ends_, prefix_;
};

}  // namespace syncscope::analysis_detail
