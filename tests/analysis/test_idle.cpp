// Idle-time attribution (profiler/analysis/include/syncscope/analysis/idle.hpp) on hand-built
// traces: one test per class, each worked out in the comment above its checks, and the
// exact sum busy + classes == GPU window for the trace, steps and streams.
#include <gtest/gtest.h>

#include <algorithm>

#include "idle_checks.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

using test::TraceBuilder;

using test::stream_idle;
using test::sum;

TEST(IdleAttribution, HostWaitWhenTheNextLaunchCameAfterTheGpuRanDry) {
  // Kernel 1 [5,10) launched at 0; kernel 2 launched at 20 (> 10, the end of kernel 1),
  // runs [25,30). GPU window [5,30) = 25: busy 10, host wait [10,25) = 15.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 2, 1);
  b.kernel(0, 7, 5, 10, 1);
  b.api("cudaLaunchKernel", 20, 22, 2);
  b.kernel(0, 7, 25, 30, 2);
  const auto r = analyze(b.done());
  const auto& i = r.totals.idle;
  EXPECT_EQ(i.window_ns, 25);
  EXPECT_EQ(i.busy_ns, 10);
  EXPECT_EQ(i.host_wait_ns, 15);
  EXPECT_EQ(i.sync_bubble_ns + i.dependency_wait_ns + i.other_ns, 0);
  EXPECT_EQ(r.totals.verdict, IdleVerdict::HostBound);  // busy 40% < 90%, host wait largest
  ASSERT_EQ(r.idle_by_device.size(), 1u);
  EXPECT_EQ(r.idle_by_device[0].gaps, 1u);
  EXPECT_EQ(stream_idle(r, 7).idle.host_wait_ns, 15);
}

TEST(IdleAttribution, SyncBubbleWithTheSyncsCause) {
  // Kernel 1 [5,10) launched at 0; the host blocks in cudaStreamSynchronize [3,12) inside
  // aten::item [2,13); kernel 2 launched at 14 runs [20,30). The sync returned at 12, in the
  // gap [10,20) and before the launch: sync bubble 10, cause aten::item.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 5, 10, 1);
  b.cpu_op("aten::item", 2, 13);
  b.api("cudaStreamSynchronize", 3, 12, 2);
  b.api("cudaLaunchKernel", 14, 15, 3);
  b.kernel(0, 7, 20, 30, 3);
  const auto r = analyze(b.done());
  const auto& i = r.totals.idle;
  EXPECT_EQ(i.window_ns, 25);
  EXPECT_EQ(i.busy_ns, 15);
  EXPECT_EQ(i.sync_bubble_ns, 10);
  EXPECT_EQ(i.host_wait_ns + i.dependency_wait_ns + i.other_ns, 0);
  ASSERT_EQ(i.sync_bubble_by_cause.size(), 1u);
  EXPECT_EQ(i.sync_bubble_by_cause.at("aten::item"), 10);
  EXPECT_EQ(r.totals.syncs.bubble_ns, 10);  // the per-sync bubble agrees here
  EXPECT_EQ(r.totals.verdict, IdleVerdict::SyncBound);
}

TEST(IdleAttribution, WorkQueuedBeforeTheSyncReturnedIsNotItsBubble) {
  // As above, but kernel 2 was launched at 1, before the sync returned at 12: the gap
  // [10,20) was not caused by the blocked host. No wait either: other.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 5, 10, 1);
  b.api("cudaLaunchKernel", 1, 2, 3);
  b.api("cudaStreamSynchronize", 3, 12, 2);
  b.kernel(0, 7, 20, 30, 3);
  const auto r = analyze(b.done());
  EXPECT_EQ(r.totals.idle.sync_bubble_ns, 0);
  EXPECT_EQ(r.totals.idle.other_ns, 10);
  EXPECT_EQ(r.totals.verdict, IdleVerdict::OtherIdle);
}

TEST(IdleAttribution, DependencyWaitOnAStreamWaitEvent) {
  // Stream 7: kernel [5,10) launched at 0. Stream 8: a stream-wait-event issued at 1 (its
  // sync record names stream 8), then a launch at 3 of a kernel that runs [20,30): queued
  // before the GPU ran dry at 10 and held by the wait. Device gap [10,20): dependency 10.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 5, 10, 1);
  b.api("cudaStreamWaitEvent", 1, 2, 5);
  b.sync_record(SyncType::StreamWaitEvent, 0, 8, 1, 2, 5);
  b.api("cudaLaunchKernel", 3, 4, 2);
  b.kernel(0, 8, 20, 30, 2);
  const auto r = analyze(b.done());
  const auto& i = r.totals.idle;
  EXPECT_EQ(i.window_ns, 25);
  EXPECT_EQ(i.dependency_wait_ns, 10);
  EXPECT_EQ(i.sync_bubble_ns + i.host_wait_ns + i.other_ns, 0);
  EXPECT_EQ(r.totals.verdict, IdleVerdict::DependencyBound);
  EXPECT_EQ(r.idle_by_stream.size(), 2u);
}

TEST(IdleAttribution, AStreamWaitingWhileAnotherStreamRunsIsADependency) {
  // Stream 7 runs [0,10) and [30,40), both launched by 2; stream 8 runs [10,30). The device
  // is never idle; stream 7's gap [10,30) had its work queued while stream 8 ran: dependency.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 0, 10, 1);
  b.api("cudaLaunchKernel", 1, 2, 2);
  b.kernel(0, 8, 10, 30, 2);
  b.api("cudaLaunchKernel", 2, 3, 3);
  b.kernel(0, 7, 30, 40, 3);
  const auto r = analyze(b.done());
  EXPECT_EQ(r.totals.idle.window_ns, 40);
  EXPECT_EQ(r.totals.idle.busy_ns, 40);
  EXPECT_EQ(r.totals.verdict, IdleVerdict::GpuBound);
  const auto& s7 = stream_idle(r, 7);
  EXPECT_EQ(s7.idle.window_ns, 40);
  EXPECT_EQ(s7.idle.busy_ns, 20);
  EXPECT_EQ(s7.idle.dependency_wait_ns, 20);
  EXPECT_EQ(stream_idle(r, 8).idle.window_ns, 20);
  EXPECT_EQ(stream_idle(r, 8).idle.busy_ns, 20);
}

TEST(IdleAttribution, OtherWhenQueuedWithoutADependencyOrWithoutALaunchCall) {
  // Kernel 2 launched at 1, before kernel 1 ended at 10, starts at 15: other [10,15) = 5.
  // Kernel 3 has no launch call in the trace: its gap [20,26) = 6 is other too.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 5, 10, 1);
  b.api("cudaLaunchKernel", 1, 2, 2);
  b.kernel(0, 7, 15, 20, 2);
  b.kernel(0, 7, 26, 30, 0);
  const auto r = analyze(b.done());
  EXPECT_EQ(r.totals.idle.window_ns, 25);
  EXPECT_EQ(r.totals.idle.busy_ns, 14);
  EXPECT_EQ(r.totals.idle.other_ns, 11);
  EXPECT_EQ(sum(r.totals.idle), r.totals.idle.window_ns);
}

TEST(IdleAttribution, ClassesSumExactlyToTheWindowPerStepAndClipToIt) {
  // Steps [0,18) and [18,40); GPU window [5,35). Step 1's GPU window [5,18) = 13: busy
  // [5,10) 5, host wait [10,18) 8 (the gap [10,25), launch at 20). Step 2's [18,35) = 17:
  // host wait [18,25) 7, busy [25,35) 10. Together they are the trace's window.
  TraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 18);
  b.annotation("ProfilerStep#2", 18, 40);
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 5, 10, 1);
  b.api("cudaLaunchKernel", 20, 21, 2);
  b.kernel(0, 7, 25, 35, 2);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].idle.window_ns, 13);
  EXPECT_EQ(r.steps[0].idle.busy_ns, 5);
  EXPECT_EQ(r.steps[0].idle.host_wait_ns, 8);
  EXPECT_EQ(r.steps[1].idle.window_ns, 17);
  EXPECT_EQ(r.steps[1].idle.host_wait_ns, 7);
  EXPECT_EQ(r.steps[1].idle.busy_ns, 10);
  for (const auto& s : r.steps) EXPECT_EQ(sum(s.idle), s.idle.window_ns) << s.name;
  EXPECT_EQ(r.totals.idle.window_ns, r.steps[0].idle.window_ns + r.steps[1].idle.window_ns);
  // The whole trace's span (host prologue included) stays beside the GPU window.
  EXPECT_EQ(r.totals.duration_ns, 40);
}

TEST(IdleAttribution, DevicesAddUpAndANoGpuTraceHasNoVerdict) {
  // Device 0: [0,10) busy, [10,20) host wait (launch at 15), [20,30) busy. Device 1:
  // [0,5) only. Totals: window 30 + 5, busy 20 + 5, host wait 10.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 1, 1);
  b.kernel(0, 7, 0, 10, 1);
  b.api("cudaLaunchKernel", 15, 16, 2);
  b.kernel(0, 7, 20, 30, 2);
  b.kernel(1, 7, 0, 5, 0);
  const auto r = analyze(b.done());
  EXPECT_EQ(r.totals.idle.window_ns, 35);
  EXPECT_EQ(r.totals.idle.busy_ns, 25);
  EXPECT_EQ(r.totals.idle.host_wait_ns, 10);
  ASSERT_EQ(r.idle_by_device.size(), 2u);
  EXPECT_EQ(r.idle_by_device[1].idle.window_ns, 5);
  EXPECT_EQ(r.idle_by_device[1].verdict, IdleVerdict::GpuBound);

  TraceBuilder none;
  none.api("cudaStreamSynchronize", 0, 1, 1);
  const auto n = analyze(none.done());
  EXPECT_EQ(n.totals.idle.window_ns, 0);
  EXPECT_EQ(n.totals.verdict, IdleVerdict::NoGpuActivity);
}

TEST(IdleVerdict, NinetyPercentBusyIsGpuBound) {
  IdleBreakdown b;
  b.window_ns = 100;
  b.busy_ns = 90;
  b.host_wait_ns = 10;
  EXPECT_EQ(verdict_of(b), IdleVerdict::GpuBound);
  b.busy_ns = 89;
  b.host_wait_ns = 5;
  b.dependency_wait_ns = 6;
  EXPECT_EQ(verdict_of(b), IdleVerdict::DependencyBound);
  EXPECT_EQ(verdict_name(IdleVerdict::DependencyBound), "dependency-bound");
}

TEST(SyncPoints, EventQueryWithAnEventSyncRecordIsAPoll) {
  // Three cudaEventQuery calls in a row, each with an Event Sync record: one polling sync
  // point [10,31), 3 queries. A query without a record (40) is not a sync and does not
  // extend the run; after a launch (45) ends the run, a single polled query (50) is a
  // second polling sync point but not a loop.
  TraceBuilder b;
  b.kernel(0, 7, 0, 30);
  for (int q = 0; q < 3; ++q) {
    b.api("cudaEventQuery", 10 + 10 * q, 11 + 10 * q, static_cast<std::uint64_t>(q + 1));
    b.sync_record(SyncType::EventSync, 0, 7, 10 + 10 * q, 11 + 10 * q, static_cast<std::uint64_t>(q + 1));
  }
  b.api("cudaEventQuery", 40, 41, 9);
  b.api("cudaLaunchKernel", 45, 46, 11);
  b.api("cudaEventQuery", 50, 51, 10);
  b.sync_record(SyncType::EventSync, 0, 7, 50, 51, 10);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.sync_points.size(), 2u);
  EXPECT_TRUE(r.sync_points[0].polling);
  EXPECT_EQ(r.sync_points[0].polls, 3u);
  EXPECT_EQ(r.sync_points[0].start, 10);
  EXPECT_EQ(r.sync_points[0].end, 31);
  EXPECT_EQ(r.sync_points[0].api, "cudaEventQuery");
  EXPECT_EQ(r.totals.syncs.polling, 2u);
  ASSERT_EQ(r.gpu.findings.size(), 1u);
  EXPECT_EQ(r.gpu.findings[0].rule, "event_query_polling");
  EXPECT_EQ(r.gpu.findings[0].count, 1u);
  EXPECT_EQ(r.gpu.findings[0].events.at(0).calls, 3u);
}

TEST(SyncPoints, PollsOnAThreadThatQueuesNoGpuWorkAreAWatchdogsNotSyncPoints) {
  // Thread 1 launches and polls: one polling sync point, as above. Thread 2 neither launches
  // nor synchronizes and polls every 100 ms, as PyTorch's NCCL watchdog does (a real 2-rank Nsight Systems
  // export, nsys-ai's mfu_2gpu_before.sqlite, has 64 such queries on its pt_nccl_watchdg
  // threads, 0.16 ms of calls, which a run from the first to the last charged as ~200 ms
  // blocked): no sync point, counted in a warning.
  TraceBuilder b;
  b.kernel(0, 7, 0, 30);
  b.api("cudaLaunchKernel", 0, 1, 1);
  for (int q = 0; q < 2; ++q) {
    b.api("cudaEventQuery", 10 + 10 * q, 11 + 10 * q, static_cast<std::uint64_t>(q + 2));
    b.sync_record(SyncType::EventSync, 0, 7, 10 + 10 * q, 11 + 10 * q, static_cast<std::uint64_t>(q + 2));
  }
  constexpr Ns kSleep = 100'000'000;  // ProcessGroupNCCL::kWatchdogThreadSleepMillis
  for (int q = 0; q < 3; ++q) {
    const Ns t = 5 + kSleep * q;
    b.api("cudaEventQuery", t, t + 3'000, static_cast<std::uint64_t>(q + 10), /*tid=*/2);
    b.sync_record(SyncType::EventSync, 0, 7, t, t + 3'000, static_cast<std::uint64_t>(q + 10));
  }
  const auto r = analyze(b.done());
  ASSERT_EQ(r.sync_points.size(), 1u);
  EXPECT_EQ(r.sync_points[0].tid, 1);
  EXPECT_EQ(r.sync_points[0].polls, 2u);
  EXPECT_EQ(r.totals.syncs.polling, 1u);
  const auto has = [&](const std::string& text) {
    return std::any_of(r.warnings.begin(), r.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("3 polled cudaEventQuery calls on 1 thread(s) that neither queue GPU work nor block on it"))
      << ::testing::PrintToString(r.warnings);
}

}  // namespace
}  // namespace syncscope
