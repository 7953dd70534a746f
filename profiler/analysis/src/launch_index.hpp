// The host API call that launched each GPU activity, joined by correlation id: the idle
// attribution (was the work issued before the GPU ran dry?), launch delay, queue length and
// GPU time per annotation read it, once per activity each. CUPTI and Kineto number
// correlations densely from 1, so the index is a direct table (O(1) per lookup) when the
// ids span at most a few times the calls; a sorted vector (O(log n)) otherwise.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "syncscope/trace/trace.hpp"

namespace syncscope::analysis_detail {

inline constexpr Ns kNoLaunch = std::numeric_limits<Ns>::min();

class LaunchIndex {
 public:
  explicit LaunchIndex(const Trace& trace) : calls_(&trace.api_calls) {
    const auto& calls = trace.api_calls;
    std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
    std::size_t n = 0;
    for (const auto& c : calls)
      if (c.correlation != 0) {
        lo = std::min(lo, c.correlation);
        hi = std::max(hi, c.correlation);
        ++n;
      }
    if (n == 0) return;
    // Dense when the table is at most 4 entries per call (plus slack for tiny traces).
    if (hi - lo < 4 * static_cast<std::uint64_t>(n) + 1024) {
      lo_ = lo;
      dense_.assign(static_cast<std::size_t>(hi - lo + 1), kNone);
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (calls[i].correlation == 0) continue;
        auto& slot = dense_[static_cast<std::size_t>(calls[i].correlation - lo)];
        if (slot == kNone || calls[i].start < calls[slot].start) slot = static_cast<std::uint32_t>(i);
      }
      return;
    }
    sparse_.reserve(n);
    for (std::size_t i = 0; i < calls.size(); ++i)
      if (calls[i].correlation != 0) sparse_.emplace_back(calls[i].correlation, static_cast<std::uint32_t>(i));
    std::sort(sparse_.begin(), sparse_.end());
  }

  // The earliest API call with this correlation id (a runtime call before the driver call it
  // made when both share one); nullptr when none.
  const ApiCall* call(std::uint64_t corr) const {
    if (corr == 0) return nullptr;
    if (!dense_.empty()) {
      if (corr < lo_ || corr - lo_ >= dense_.size()) return nullptr;
      const std::uint32_t i = dense_[static_cast<std::size_t>(corr - lo_)];
      return i == kNone ? nullptr : &(*calls_)[i];
    }
    auto it = std::lower_bound(sparse_.begin(), sparse_.end(), std::make_pair(corr, std::uint32_t{0}));
    const ApiCall* best = nullptr;
    for (; it != sparse_.end() && it->first == corr; ++it) {
      const ApiCall& c = (*calls_)[it->second];
      if (!best || c.start < best->start) best = &c;
    }
    return best;
  }
  Ns start(std::uint64_t corr) const {
    const ApiCall* c = call(corr);
    return c ? c->start : kNoLaunch;
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  const std::vector<ApiCall>* calls_;
  std::uint64_t lo_ = 0;
  std::vector<std::uint32_t> dense_;                             // corr - lo_ -> call index
  std::vector<std::pair<std::uint64_t, std::uint32_t>> sparse_;  // (corr, call index), sorted
};

}  // namespace syncscope::analysis_detail
