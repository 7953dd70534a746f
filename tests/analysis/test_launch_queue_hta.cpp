// Queue length as we count it against Holistic Trace Analysis's rule (docs/analysis.md, "Side
// by side with HTA"): ours is launched and not yet finished (the running activity counts),
// HTA's is launched and not yet started (hta/analyzers/trace_counters.py,
// _get_queue_length_time_series_for_rank: +1 at the runtime call's ts, -1 at the GPU row's
// ts, a cumulative sum in ts order). The two agree when nothing runs at the maximum and
// differ by one when one activity does: the off-by-one HTA shows on most streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

using test::TraceBuilder;

// HTA's rule on (launch start, kernel start) pairs of one stream: the maximum of the running sum.
std::int64_t hta_max_queue(const std::vector<std::pair<Ns, Ns>>& launch_and_start) {
  std::vector<std::pair<Ns, int>> steps;
  for (const auto& [l, s] : launch_and_start) {
    steps.emplace_back(l, +1);
    steps.emplace_back(s, -1);
  }
  std::sort(steps.begin(), steps.end());  // no ties in these traces
  std::int64_t depth = 0, best = 0;
  for (const auto& st : steps) best = std::max(best, depth += st.second);
  return best;
}

TEST(LaunchQueue, OursCountsTheRunningActivityHtasDoesNot) {
  // Kernel 1 launched at 0 runs [2,20); kernels 2 and 3 launched at 3 and 4 run [20,30) and
  // [30,40). At 4: kernel 1 running, 2 and 3 waiting: ours 3; HTA's 2 (1 left at its start, 2).
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 2, 20, 1);
  b.api("cudaLaunchKernel", 3, 4, 2);
  b.kernel(0, 7, 20, 30, 2);
  b.api("cudaLaunchKernel", 4, 5, 3);
  b.kernel(0, 7, 30, 40, 3);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.queues.size(), 1u);
  EXPECT_EQ(r.gpu.queues[0].max_depth, 3u);
  EXPECT_EQ(r.gpu.queues[0].max_at_ns, 4);
  const std::int64_t hta = hta_max_queue({{0, 2}, {3, 20}, {4, 30}});
  EXPECT_EQ(hta, 2);
  EXPECT_EQ(static_cast<std::int64_t>(r.gpu.queues[0].max_depth), hta + 1);
}

TEST(LaunchQueue, OursEqualsHtasWhenNothingRunsAtTheMaximum) {
  // Three launches at 0, 1, 2 before any kernel starts ([10,20), [20,30), [30,40)): both 3.
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    const auto c = static_cast<std::uint64_t>(i + 1);
    b.api("cudaLaunchKernel", i, i + 1, c);
    b.kernel(0, 7, 10 * (i + 1), 10 * (i + 2), c);
  }
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.queues.size(), 1u);
  EXPECT_EQ(r.gpu.queues[0].max_depth, 3u);
  EXPECT_EQ(hta_max_queue({{0, 10}, {1, 20}, {2, 30}}), 3);
}

}  // namespace
}  // namespace syncscope
