// `analyze` on an nsys export: the sync definitions apply unchanged. Every figure below is
// worked out by hand from tests/fixtures/nsys/nsys_2024_6.sql (session times in ns):
//
//   sync point                         host blocked                 bubble (device 0)
//   1 cudaMemcpyAsync D2H pageable     1,310,000..1,340,000 = 30,000 next work 1,400,000 (relu)
//     + cudaStreamSynchronize (merged,                               - last end 1,330,000 (copy)
//     cause aten::item via emit_nvtx)                                = 70,000
//   2 cudaDeviceSynchronize            1,600,000..1,700,000 = 100,000 memset 1,720,000 - 1,550,000
//                                                                     (H2D copy end) = 170,000
//   3 cudaEventSynchronize             2,020,000..2,400,500 = 380,500 2,600,000 - 2,400,000 = 200,000
//   4 cudaMemcpy D2H (synchronous)     2,710,000..2,800,000 = 90,000  nothing follows: 0
//   5 cuStreamSynchronize (tid 4250)   2,900,000..2,910,000 = 10,000  nothing follows: 0
//   not sync points: cudaStreamWaitEvent (counted apart), cudaStreamQuery, the driver
//   cuMemcpyDtoH_v2 inside cudaMemcpy (part of that call).
//
// GPU busy, step 1 [1,000,000, 2,000,000): gemm 280,000 + D2H copy 5,000 + relu with the
// overlapping H2D copy [1,400,000, 1,550,000) 150,000 + memset 2,000 = 437,000; step 2:
// gemm 300,000 + layer_norm 100,000 + D2H copy 40,000 = 440,000. H2D overlap: the copy
// [1,450,000, 1,550,000) on stream 13 runs beside relu (stream 7) until 1,500,000: 0.5.
#include <gtest/gtest.h>

#include "nsys_fixture.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

using test::kSessionUtc;

AnalysisResult analyze_fixture(const std::string& name, const AnalysisOptions& options = {}) {
  test::TempDir dir;
  return analyze(read_trace(test::build_export(dir, name)), options);
}

TEST(NsysAnalysis, SyncPointsBlockedTimeAndBubbles) {
  const AnalysisResult r = analyze_fixture("nsys_2024_6");
  ASSERT_EQ(r.sync_points.size(), 5u);
  const auto& p = r.sync_points;
  EXPECT_EQ(p[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(p[0].cause, "aten::item");
  EXPECT_TRUE(p[0].merged_copy);
  EXPECT_EQ(p[0].start, kSessionUtc + 1310000);
  EXPECT_EQ(p[0].blocked_ns, 30000);
  EXPECT_EQ(p[0].bubble_ns, 70000);
  EXPECT_EQ(p[0].device, 0);
  EXPECT_EQ(p[0].stream, 7);
  EXPECT_EQ(p[1].api, "cudaDeviceSynchronize");
  EXPECT_EQ(p[1].cause, "cudaDeviceSynchronize");
  EXPECT_EQ(p[1].blocked_ns, 100000);
  EXPECT_EQ(p[1].bubble_ns, 170000);
  EXPECT_EQ(p[2].api, "cudaEventSynchronize");
  EXPECT_EQ(p[2].blocked_ns, 380500);
  EXPECT_EQ(p[2].bubble_ns, 200000);
  EXPECT_EQ(p[3].api, "cudaMemcpy");
  EXPECT_EQ(p[3].blocked_ns, 90000);
  EXPECT_EQ(p[3].bubble_ns, 0);
  EXPECT_EQ(p[4].api, "cuStreamSynchronize");
  EXPECT_EQ(p[4].tid, 4250);
  EXPECT_EQ(p[4].blocked_ns, 10000);
  EXPECT_EQ(p[4].bubble_ns, 0);

  EXPECT_EQ(r.totals.syncs.total, 5u);
  EXPECT_EQ(r.totals.syncs.blocked_ns, 610500);
  EXPECT_EQ(r.totals.syncs.bubble_ns, 440000);
  EXPECT_EQ(r.totals.syncs.stream_wait_events, 1u);
  EXPECT_EQ(r.totals.gpu_busy_ns, 877000);
  EXPECT_EQ(r.totals.kernels, 4u);
  EXPECT_EQ(r.totals.memcpys, 3u);
  EXPECT_EQ(r.totals.memcpy_bytes, 4u + 1048576u + 8388608u);
  EXPECT_EQ(r.totals.h2d.copy_ns, 100000);
  EXPECT_EQ(r.totals.h2d.overlapped_ns, 50000);
  EXPECT_DOUBLE_EQ(r.totals.h2d.fraction, 0.5);
  EXPECT_EQ(r.totals.d2h.copy_ns, 45000);
  EXPECT_EQ(r.totals.d2h.overlapped_ns, 0);
}

TEST(NsysAnalysis, StepsFromNvtxRanges) {
  const AnalysisResult r = analyze_fixture("nsys_2024_6");  // default --step-range ProfilerStep#*
  ASSERT_EQ(r.steps.size(), 2u);
  const WindowStats& s1 = r.steps[0];
  EXPECT_EQ(s1.name, "ProfilerStep#1");
  EXPECT_EQ(s1.duration_ns, 1000000);
  EXPECT_EQ(s1.syncs.total, 2u);
  EXPECT_EQ(s1.syncs.blocked_ns, 130000);
  EXPECT_EQ(s1.syncs.bubble_ns, 240000);
  EXPECT_EQ(s1.gpu_busy_ns, 437000);
  EXPECT_EQ(s1.kernels, 2u);
  EXPECT_EQ(s1.memcpys, 2u);
  EXPECT_DOUBLE_EQ(s1.h2d.fraction, 0.5);
  const WindowStats& s2 = r.steps[1];
  EXPECT_EQ(s2.name, "ProfilerStep#2");
  EXPECT_EQ(s2.syncs.total, 3u);
  EXPECT_EQ(s2.syncs.blocked_ns, 480500);
  EXPECT_EQ(s2.syncs.bubble_ns, 200000);
  EXPECT_EQ(s2.syncs.stream_wait_events, 1u);
  EXPECT_EQ(s2.gpu_busy_ns, 440000);
  EXPECT_EQ(r.step_summary.syncs.n, 2u);
  EXPECT_DOUBLE_EQ(r.step_summary.syncs.median, 2.5);
}

TEST(NsysAnalysis, LayersFromNvtxRanges) {
  AnalysisOptions o;
  o.layer_glob = "layer_*";
  const AnalysisResult r = analyze_fixture("nsys_2024_6", o);
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[0].name, "layer_0");
  EXPECT_EQ(r.layers[0].syncs.total, 1u);
  EXPECT_EQ(r.layers[0].syncs.by_cause.at("aten::item"), 1u);
  EXPECT_EQ(r.layers[1].name, "layer_1");
  EXPECT_EQ(r.layers[1].syncs.total, 1u);
  EXPECT_EQ(r.layers[1].syncs.by_api.at("cudaDeviceSynchronize"), 1u);
}

TEST(NsysAnalysis, ReaderWarningsReachTheAnalysis) {
  const AnalysisResult r = analyze_fixture("nsys_2024_6");
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0], "1 rows of NVTX_EVENTS skipped: a range that never ended (no end time)");
}

}  // namespace
}  // namespace syncscope
