// The host API call that launched each GPU activity, joined by correlation id: the idle
// attribution (was the work issued before the GPU ran dry?), launch delay and queue length
// read it. One sorted vector, O(log n) per lookup.
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
  explicit LaunchIndex(const Trace& trace) {
    by_corr_.reserve(trace.api_calls.size());
    for (std::size_t i = 0; i < trace.api_calls.size(); ++i)
      if (trace.api_calls[i].correlation != 0)
        by_corr_.emplace_back(trace.api_calls[i].correlation, static_cast<std::uint32_t>(i));
    std::sort(by_corr_.begin(), by_corr_.end());
    calls_ = &trace.api_calls;
  }

  // The earliest API call with this correlation id (a runtime call before the driver call it
  // made when both share one); nullptr when none.
  const ApiCall* call(std::uint64_t corr) const {
    if (corr == 0) return nullptr;
    auto it = std::lower_bound(by_corr_.begin(), by_corr_.end(), std::make_pair(corr, std::uint32_t{0}));
    const ApiCall* best = nullptr;
    for (; it != by_corr_.end() && it->first == corr; ++it) {
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
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_corr_;
  const std::vector<ApiCall>* calls_ = nullptr;
};

}  // namespace syncscope::analysis_detail
