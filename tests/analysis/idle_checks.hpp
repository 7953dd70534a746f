#pragma once
// Helpers the idle-attribution tests share (test_idle.cpp, test_idle_streams.cpp).
#include <gtest/gtest.h>

#include <cstdint>

#include "syncscope/analysis/analysis.hpp"

namespace syncscope::test {

// busy + every idle class: equals the window the breakdown covers.
inline Ns sum(const IdleBreakdown& b) {
  return b.busy_ns + b.sync_bubble_ns + b.host_wait_ns + b.dependency_wait_ns + b.other_ns;
}

// The breakdown of one stream, or a test failure and an empty breakdown.
inline const TimelineIdle& stream_idle(const AnalysisResult& r, std::int64_t stream) {
  for (const auto& s : r.idle_by_stream)
    if (s.stream == stream) return s;
  static const TimelineIdle none;
  ADD_FAILURE() << "no stream " << stream;
  return none;
}

}  // namespace syncscope::test
