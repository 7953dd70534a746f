// The analysis on a real torch.profiler trace (tests/fixtures/torch/README.md): an H200
// run of tests/device/item_loop.py --layers 8 --steps 3. Each step (train_step#0..2) does
// 8 .item() calls, each a cudaMemcpyAsync D2H into PINNED memory + cudaStreamSynchronize
// (so one sync point each: the sync), and two cudaDeviceSynchronize follow the steps.
//
// Expected values were derived from the file with python3's json module
// (tests/analysis/fixture_expectations.py prints them): 26 sync calls in total, 8 per
// step, 1 per layer_NN range; every stream sync lies inside aten::item (outermost aten op;
// aten::_local_scalar_dense is inside it), the device syncs inside no CPU op.
#include <gtest/gtest.h>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

const Trace& fixture_trace() {
  static const Trace t = read_trace(test::fixture("torch/item_loop_l8_h200.json.gz"));
  return t;
}

TEST(AnalysisFixture, ItemLoopHasEightSyncPointsPerStep) {
  AnalysisOptions o;
  o.step_glob = "train_step#*";
  o.layer_glob = "layer_*";
  const auto r = analyze(fixture_trace(), o);
  ASSERT_EQ(r.steps.size(), 3u);
  for (const auto& s : r.steps) {
    EXPECT_EQ(s.syncs.total, 8u) << s.name;
    ASSERT_EQ(s.syncs.by_cause.size(), 1u) << s.name;
    EXPECT_EQ(s.syncs.by_cause.at("aten::item"), 8u) << s.name;
    EXPECT_EQ(s.syncs.by_api.at("cudaStreamSynchronize"), 8u) << s.name;
  }
  EXPECT_EQ(r.steps[0].name, "train_step#0");
  EXPECT_EQ(r.totals.syncs.total, 26u);
  EXPECT_EQ(r.totals.syncs.by_cause.at("aten::item"), 24u);
  EXPECT_EQ(r.totals.syncs.by_cause.at("cudaDeviceSynchronize"), 2u);
  EXPECT_EQ(r.totals.syncs.stream_wait_events, 0u);
  for (const auto& p : r.sync_points) EXPECT_FALSE(p.merged_copy);  // pinned copies
  ASSERT_EQ(r.layers.size(), 24u);
  for (const auto& l : r.layers) EXPECT_EQ(l.syncs.total, 1u) << l.name;
  EXPECT_DOUBLE_EQ(r.step_summary.syncs.median, 8);
  EXPECT_DOUBLE_EQ(r.step_summary.syncs.p10, 8);
  EXPECT_DOUBLE_EQ(r.step_summary.syncs.p90, 8);

  // Times from fixture_expectations.py (ts/dur in microseconds with 3 decimals, rounded to
  // ns); a few ns of slack per sync for the reader's rounding of ts+dur.
  EXPECT_EQ(r.totals.kernels, 120u);
  EXPECT_EQ(r.totals.memcpys, 24u);
  EXPECT_NEAR(static_cast<double>(r.totals.syncs.blocked_ns), 193920, 26 * 2);
  EXPECT_NEAR(static_cast<double>(r.totals.syncs.bubble_ns), 2302630, 26 * 4);
  EXPECT_NEAR(static_cast<double>(r.totals.gpu_busy_ns), 500861, 144 * 2);
  EXPECT_NEAR(static_cast<double>(r.steps[1].syncs.blocked_ns), 50321, 16);
  EXPECT_NEAR(static_cast<double>(r.steps[1].syncs.bubble_ns), 720865, 32);
  EXPECT_NEAR(static_cast<double>(r.steps[1].duration_ns), 1748057, 2);
  // Copies and kernels all run on stream 7: no copy/compute overlap.
  EXPECT_NEAR(static_cast<double>(r.totals.d2h.copy_ns), 34146, 24 * 2);
  EXPECT_EQ(r.totals.d2h.overlapped_ns, 0);
  EXPECT_EQ(r.totals.h2d.copy_ns, 0);
}

TEST(AnalysisFixture, DefaultStepGlobMatchesNothingAndSaysWhatWouldMatch) {
  const auto r = analyze(fixture_trace());
  EXPECT_TRUE(r.steps.empty());
  bool found = false;
  for (const auto& w : r.warnings) found |= w.find("'train_step#*' (3)") != std::string::npos;
  EXPECT_TRUE(found);
  EXPECT_EQ(r.totals.syncs.total, 26u);
}

// The idle attribution of the item-loop steps, against fixture_expectations.py, which
// computes it again from the JSON (a second implementation, not our reader): the GPU runs
// a few microseconds per layer and then waits, partly in the .item() syncs' bubbles, mostly
// for the eager host to launch the next kernels: host-bound. A few ns of slack per gap for
// the reader's rounding of ts+dur.
TEST(AnalysisFixture, ItemLoopStepsAreHostBoundWithTheirSyncBubblesNamed) {
  AnalysisOptions o;
  o.step_glob = "train_step#*";
  o.layer_glob = "layer_*";
  const auto r = analyze(fixture_trace(), o);
  ASSERT_EQ(r.steps.size(), 3u);
  struct Want {
    Ns window, busy, sync_bubble, host_wait, other;
  };
  const Want want[] = {{2474428, 167904, 948375, 1339972, 18177},
                       {1748057, 166525, 704052, 841094, 36386},
                       {1636304, 166432, 592907, 862532, 14433}};
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& s = r.steps[k];
    const auto& i = s.idle;
    EXPECT_NEAR(static_cast<double>(i.window_ns), static_cast<double>(want[k].window), 4) << s.name;
    EXPECT_NEAR(static_cast<double>(i.busy_ns), static_cast<double>(want[k].busy), 48 * 2) << s.name;
    EXPECT_NEAR(static_cast<double>(i.sync_bubble_ns), static_cast<double>(want[k].sync_bubble), 16 * 4) << s.name;
    EXPECT_NEAR(static_cast<double>(i.host_wait_ns), static_cast<double>(want[k].host_wait), 48 * 4) << s.name;
    EXPECT_NEAR(static_cast<double>(i.other_ns), static_cast<double>(want[k].other), 48 * 4) << s.name;
    EXPECT_EQ(i.dependency_wait_ns, 0) << s.name;  // one stream, no stream waits
    EXPECT_EQ(i.busy_ns + i.sync_bubble_ns + i.host_wait_ns + i.dependency_wait_ns + i.other_ns, i.window_ns) << s.name;
    EXPECT_EQ(s.verdict, IdleVerdict::HostBound) << s.name;
    ASSERT_EQ(i.sync_bubble_by_cause.size(), 1u) << s.name;
    EXPECT_EQ(i.sync_bubble_by_cause.at("aten::item"), i.sync_bubble_ns) << s.name;
  }
  // Each gap once, and only when the next work came after the sync: at most the per-sync sum.
  EXPECT_LE(r.totals.idle.sync_bubble_ns, r.totals.syncs.bubble_ns);
  EXPECT_EQ(r.totals.idle.busy_ns, r.totals.gpu_busy_ns);
}

}  // namespace
}  // namespace syncscope
