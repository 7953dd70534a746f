// On a GPU: the sync-count workload (sync_counts.cu) traced in process with
// syncscope::Tracer and analysed with syncscope::analyze must show exactly the sync points
// it makes (N stream syncs + M event syncs + K pageable D2H copies + 1 device sync) and a
// pinned H2D copy overlapped with a kernel on another stream. Skips without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "sync_counts.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/tracer/tracer.hpp"

namespace syncscope {
namespace {

using device_test::SyncWorkload;

void start(void* t) { static_cast<Tracer*>(t)->start(); }
void stop(void* t) { static_cast<Tracer*>(t)->stop(); }

std::uint64_t count(const std::map<std::string, std::uint64_t>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

class TracerDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_device_available(&why)) GTEST_SKIP() << "skipped: no CUDA device (" << why << ")";
  }
};

TEST_F(TracerDevice, SyncPointsAndOverlapOfAKnownWorkload) {
  SyncWorkload w;
  w.stream_syncs = 5;
  w.event_syncs = 4;
  w.pageable_copies = 3;
  Tracer tracer;
  const auto report = device_test::run_sync_workload(w, &start, &stop, &tracer);
  ASSERT_TRUE(report.ok) << report.error;
  const TracerStats stats = tracer.stats();
  Trace trace = tracer.take();
  ASSERT_GT(trace.kernels.size(), 0u);
  EXPECT_EQ(trace.meta.clock, ClockBase::UnixEpoch);
  EXPECT_EQ(trace.meta.dropped_records, 0u);
  EXPECT_EQ(stats.lost_to_cap, 0u);
  // Every API call carries its name and callback id.
  for (const auto& a : trace.api_calls) {
    EXPECT_FALSE(trace.str(a.name).empty());
    EXPECT_GE(a.cbid, 0);
  }
  // The pageable copies are device -> pageable host, joined to their cudaMemcpyAsync.
  std::size_t pageable = 0;
  for (const auto& m : trace.memcpys)
    if (m.kind == CopyKind::DtoH && m.dst_kind == MemoryKind::Pageable) ++pageable;
  EXPECT_EQ(pageable, static_cast<std::size_t>(w.pageable_copies));

  const AnalysisResult r = analyze(trace);
  const std::uint64_t expected = w.stream_syncs + w.event_syncs + w.pageable_copies + 1;
  EXPECT_EQ(r.totals.syncs.total, expected);
  EXPECT_EQ(r.sync_points.size(), expected);
  const auto& by_api = r.totals.syncs.by_api;
  EXPECT_EQ(count(by_api, "cudaStreamSynchronize"), static_cast<std::uint64_t>(w.stream_syncs));
  EXPECT_EQ(count(by_api, "cudaEventSynchronize"), static_cast<std::uint64_t>(w.event_syncs));
  EXPECT_EQ(count(by_api, "cudaMemcpyAsync"), static_cast<std::uint64_t>(w.pageable_copies));
  EXPECT_EQ(count(by_api, "cudaDeviceSynchronize"), 1u);
  EXPECT_GE(r.totals.h2d.fraction, 0.9) << "pinned H2D " << report.h2d_ms_measured << " ms during a "
                                        << report.long_kernel_ms_measured << " ms kernel";
  EXPECT_GT(r.totals.h2d.copy_ns, 0);
}

// A second session in the same process after the first one's cuptiFinalize.
TEST_F(TracerDevice, StartStopTwice) {
  SyncWorkload w;
  w.stream_syncs = 2;
  w.event_syncs = 1;
  w.pageable_copies = 1;
  w.long_kernel_ms = 2;
  for (int round = 0; round < 2; ++round) {
    Tracer tracer;
    const auto report = device_test::run_sync_workload(w, &start, &stop, &tracer);
    ASSERT_TRUE(report.ok) << report.error;
    Trace t = tracer.take();
    EXPECT_GT(t.kernels.size(), 0u) << "round " << round;
    EXPECT_GT(t.api_calls.size(), 0u) << "round " << round;
  }
}

TEST_F(TracerDevice, SecondConcurrentTracerIsRefused) {
  Tracer a;
  a.start();
  Tracer b;
  EXPECT_THROW(b.start(), Error);
  a.stop();
}

}  // namespace
}  // namespace syncscope
