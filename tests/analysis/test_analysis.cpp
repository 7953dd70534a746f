// The analysis definitions (profiler/analysis/include/syncscope/analysis/analysis.hpp) on traces
// built by hand; each expected value is worked out in the comment above its check.
#include <gtest/gtest.h>

#include <algorithm>

#include "sample_traces.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

using test::TraceBuilder;
using test::windows_trace;

const SyncStats& totals(const AnalysisResult& r) { return r.totals.syncs; }

bool has_warning(const AnalysisResult& r, std::string_view needle) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

TEST(UnionLength, NestedPartialTouchingAndEmpty) {
  // [0,10) contains [2,5); [8,15) overlaps it -> [0,15) = 15; [20,25) = 5; total 20.
  EXPECT_EQ(union_length({{8, 15}, {0, 10}, {20, 25}, {2, 5}}), 20);
  // Touching half-open intervals join: [0,5) + [5,10) = 10. Empty and inverted count 0.
  EXPECT_EQ(union_length({{0, 5}, {5, 10}, {7, 7}, {9, 3}}), 10);
  EXPECT_EQ(union_length({}), 0);
}

TEST(Distribution, LinearInterpolationBetweenOrderStatistics) {
  // sorted {1,2,3,4,5}: median index 2 -> 3; p10 at 0.4 -> 1 + 0.4 = 1.4; p90 at 3.6 -> 4.6.
  auto d = distribution({5, 1, 4, 2, 3});
  EXPECT_EQ(d.n, 5u);
  EXPECT_DOUBLE_EQ(d.median, 3);
  EXPECT_DOUBLE_EQ(d.p10, 1.4);
  EXPECT_DOUBLE_EQ(d.p90, 4.6);
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_DOUBLE_EQ(d.max, 5);
  // {0,10}: median at 0.5 -> 5; p10 at 0.1 -> 1; p90 at 0.9 -> 9.
  auto two = distribution({10, 0});
  EXPECT_DOUBLE_EQ(two.median, 5);
  EXPECT_DOUBLE_EQ(two.p10, 1);
  EXPECT_DOUBLE_EQ(two.p90, 9);
  EXPECT_EQ(distribution({}).n, 0u);
  EXPECT_DOUBLE_EQ(distribution({7}).p90, 7);
}

TEST(Overlap, SameStreamIsNotOverlapOtherStreamsAre) {
  TraceBuilder b;
  // device 0 kernels: s7 [0,100), s9 [95,105), s8 [110,120)
  b.kernel(0, 7, 0, 100);
  b.kernel(0, 9, 95, 105);
  b.kernel(0, 8, 110, 120);
  // H2D on s7 [10,30): only s7 runs then -> 0 overlapped.
  // H2D on s8 [40,60): s7 runs -> 20 overlapped. copy 40, overlapped 20, fraction 0.5.
  b.copy(CopyKind::HtoD, 0, 7, 10, 30);
  b.copy(CopyKind::HtoD, 0, 8, 40, 60);
  // D2H on s8 [90,130): other streams s7 [90,100) and s9 [95,105) -> [90,105) = 15; the
  //   copy's own stream s8 [110,120) does not count.
  // D2H on s7 [118,125): inside the first copy's time (copy union stays [90,130) = 40);
  //   s8's kernel [110,120) is another stream for it -> [118,120) = 2 more.
  // D2H: copy 40, overlapped 15 + 2 = 17, fraction 0.425.
  b.copy(CopyKind::DtoH, 0, 8, 90, 130);
  b.copy(CopyKind::DtoH, 0, 7, 118, 125);
  auto r = analyze(b.done());
  EXPECT_EQ(r.totals.h2d.copy_ns, 40);
  EXPECT_EQ(r.totals.h2d.overlapped_ns, 20);
  EXPECT_DOUBLE_EQ(r.totals.h2d.fraction, 0.5);
  EXPECT_EQ(r.totals.d2h.copy_ns, 40);
  EXPECT_EQ(r.totals.d2h.overlapped_ns, 17);
  EXPECT_DOUBLE_EQ(r.totals.d2h.fraction, 17.0 / 40.0);
  // busy: kernels [0,105) [110,120) and copies [10,30) [40,60) [90,130) [118,125) -> [0,130).
  EXPECT_EQ(r.totals.gpu_busy_ns, 130);
  // kernel union: [0,105) + [110,120) = 115.
  EXPECT_EQ(r.totals.kernel_ns, 115);
  EXPECT_EQ(r.totals.kernels, 3u);
  EXPECT_EQ(r.totals.memcpys, 4u);
}

TEST(Overlap, NoCopiesMeansFractionZero) {
  TraceBuilder b;
  b.kernel(0, 7, 0, 100);
  auto r = analyze(b.done());
  EXPECT_EQ(r.totals.h2d.copy_ns, 0);
  EXPECT_DOUBLE_EQ(r.totals.h2d.fraction, 0);
  EXPECT_DOUBLE_EQ(r.totals.d2h.fraction, 0);
}

TEST(Overlap, KernelsOnAnotherDeviceDoNotOverlapCopies) {
  TraceBuilder b;
  // device 0: kernel s8 [0,50), H2D s9 [0,10) -> overlapped 10.
  // device 1: kernel s7 [0,50), H2D s7 [0,10): same stream on its device -> 0, even
  //   though device 0 runs kernels on other streams at the time.
  // totals sum devices: copy 20, overlapped 10; busy 50 + 50 = 100.
  b.kernel(0, 8, 0, 50);
  b.copy(CopyKind::HtoD, 0, 9, 0, 10);
  b.kernel(1, 7, 0, 50);
  b.copy(CopyKind::HtoD, 1, 7, 0, 10);
  auto r = analyze(b.done());
  EXPECT_EQ(r.totals.h2d.copy_ns, 20);
  EXPECT_EQ(r.totals.h2d.overlapped_ns, 10);
  EXPECT_EQ(r.totals.gpu_busy_ns, 100);
  ASSERT_EQ(r.totals.gpu_busy_by_device.size(), 2u);
  EXPECT_EQ(r.totals.gpu_busy_by_device.at(0), 50);
  EXPECT_EQ(r.totals.gpu_busy_by_device.at(1), 50);
}

TEST(GpuBusy, UnionOfKernelsCopiesAndMemsetsPerDeviceSummed) {
  TraceBuilder b;
  // device 0: kernel [0,10) and copy [5,20) -> [0,20) = 20; memset [30,40) = 10 -> 30.
  // device 1: kernel [0,100) = 100. Total 130; kernel_ns 10 + 100 = 110.
  b.kernel(0, 7, 0, 10);
  b.copy(CopyKind::HtoD, 0, 8, 5, 20);
  b.memset(0, 7, 30, 40);
  b.kernel(1, 7, 0, 100);
  auto r = analyze(b.done());
  EXPECT_EQ(r.totals.gpu_busy_by_device.at(0), 30);
  EXPECT_EQ(r.totals.gpu_busy_by_device.at(1), 100);
  EXPECT_EQ(r.totals.gpu_busy_ns, 130);
  EXPECT_EQ(r.totals.kernel_ns, 110);
}

TEST(Bubble, ZeroWhenWorkQueuedElseTheGap) {
  TraceBuilder b;
  // sync 1 [10,50) returns at 50 while kernel [0,100) runs -> bubble 0, blocked 40.
  b.kernel(0, 7, 0, 100);
  b.api("cudaStreamSynchronize", 10, 50, 1);
  // sync 2 [150,210) returns at 210; last end before it 200 (kernel [100,200)); next start
  // 260 (a memset on ANOTHER stream of the same device counts) -> bubble 60, blocked 60.
  b.kernel(0, 7, 100, 200);
  b.api("cudaStreamSynchronize", 150, 210, 2);
  b.memset(0, 8, 260, 270);
  // sync 3 [300,310): nothing follows on the device -> bubble 0 (documented), blocked 10.
  b.api("cudaStreamSynchronize", 300, 310, 3);
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 3u);
  EXPECT_EQ(sp[0].bubble_ns, 0);
  EXPECT_EQ(sp[0].blocked_ns, 40);
  EXPECT_EQ(sp[1].bubble_ns, 60);
  EXPECT_EQ(sp[1].blocked_ns, 60);
  EXPECT_EQ(sp[2].bubble_ns, 0);
  EXPECT_EQ(sp[2].device, 0);  // the trace's only device
}

TEST(Bubble, UsesTheSyncsDeviceAndMaxForDeviceWideSyncs) {
  TraceBuilder b;
  // device 0: kernels [0,100) and [150,160); device 1: kernels [0,100) and [400,410).
  b.kernel(0, 7, 0, 100);
  b.kernel(0, 7, 150, 160);
  b.kernel(1, 7, 0, 100);
  b.kernel(1, 7, 400, 410);
  // stream sync on device 1 (from its sync record) returning at 120: 400 - 100 = 300.
  b.api("cudaStreamSynchronize", 110, 120, 1);
  b.sync_record(SyncType::StreamSync, 1, 7, 111, 119, 1);
  // device-wide sync returning at 130: device 0 gap 150 - 100 = 50, device 1 gap 300 -> 300.
  b.api("cudaDeviceSynchronize", 125, 130, 2);
  b.sync_record(SyncType::ContextSync, 0, -1, 126, 129, 2);
  // stream sync on device 0 returning at 140: 150 - 100 = 50.
  b.api("cudaStreamSynchronize", 135, 140, 3);
  b.sync_record(SyncType::StreamSync, 0, 7, 136, 139, 3);
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 3u);
  EXPECT_EQ(sp[0].device, 1);
  EXPECT_EQ(sp[0].stream, 7);
  EXPECT_EQ(sp[0].bubble_ns, 300);
  EXPECT_EQ(sp[1].stream, -1);
  EXPECT_EQ(sp[1].bubble_ns, 300);
  EXPECT_EQ(sp[2].device, 0);
  EXPECT_EQ(sp[2].bubble_ns, 50);
}

TEST(SyncPoints, ItemPatternPageableCopyAndStreamSyncIsOne) {
  TraceBuilder b;
  // cudaMemcpyAsync [100,110) whose GPU copy is D2H into pageable memory, then the sync of
  // the same stream [111,115): ONE sync point, blocked from 100 to 115 = 15.
  b.api("cudaMemcpyAsync", 100, 110, 1);
  b.copy(CopyKind::DtoH, 0, 7, 105, 108, 1, MemoryKind::Pageable);
  b.api("cudaStreamSynchronize", 111, 115, 2);
  b.sync_record(SyncType::StreamSync, 0, 7, 112, 114, 2);
  auto r = analyze(b.done());
  ASSERT_EQ(r.sync_points.size(), 1u);
  const auto& p = r.sync_points[0];
  EXPECT_TRUE(p.merged_copy);
  EXPECT_EQ(p.api, "cudaStreamSynchronize");
  EXPECT_EQ(p.start, 100);
  EXPECT_EQ(p.end, 115);
  EXPECT_EQ(p.blocked_ns, 15);
  EXPECT_EQ(p.stream, 7);
  EXPECT_EQ(p.correlation, 2u);
  EXPECT_EQ(totals(r).total, 1u);
  EXPECT_EQ(totals(r).blocked_ns, 15);
}

TEST(SyncPoints, ItemPatternPinnedCopyCountsOnlyTheSync) {
  TraceBuilder b;
  // A pinned D2H copy does not block the host; the stream sync [111,115) is the one sync
  // point, blocked 4.
  b.api("cudaMemcpyAsync", 100, 110, 1);
  b.copy(CopyKind::DtoH, 0, 7, 105, 108, 1, MemoryKind::Pinned);
  b.api("cudaStreamSynchronize", 111, 115, 2);
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 1u);
  EXPECT_FALSE(sp[0].merged_copy);
  EXPECT_EQ(sp[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(sp[0].blocked_ns, 4);
}

TEST(SyncPoints, PageableCopyAloneIsOne) {
  TraceBuilder b;
  b.api("cudaMemcpyAsync", 100, 110, 1);
  b.copy(CopyKind::DtoH, 0, 7, 105, 108, 1, MemoryKind::Pageable);
  b.api("cudaLaunchKernel", 120, 125, 2);
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 1u);
  EXPECT_EQ(sp[0].api, "cudaMemcpyAsync");
  EXPECT_FALSE(sp[0].merged_copy);
  EXPECT_EQ(sp[0].blocked_ns, 10);
}

TEST(SyncPoints, PageableCopyThenUnrelatedWorkThenSyncIsTwo) {
  // A launch between the copy and the sync queues new work the sync waits for: two
  // episodes. A sync of another stream after the copy: also two. A device sync right after
  // the copy: one.
  {
    TraceBuilder b;
    b.api("cudaMemcpyAsync", 100, 110, 1);
    b.copy(CopyKind::DtoH, 0, 7, 105, 108, 1, MemoryKind::Pageable);
    b.api("cudaLaunchKernel", 111, 112, 2);
    b.api("cudaStreamSynchronize", 113, 120, 3);
    EXPECT_EQ(find_sync_points(b.done()).size(), 2u);
  }
  {
    TraceBuilder b;
    b.api("cudaMemcpyAsync", 100, 110, 1);
    b.copy(CopyKind::DtoH, 0, 7, 105, 108, 1, MemoryKind::Pageable);
    b.api("cudaStreamSynchronize", 113, 120, 3);
    b.sync_record(SyncType::StreamSync, 0, 8, 114, 119, 3);
    EXPECT_EQ(find_sync_points(b.done()).size(), 2u);
  }
  {
    TraceBuilder b;
    b.api("cudaMemcpyAsync", 100, 110, 1);
    b.copy(CopyKind::DtoH, 0, 7, 105, 108, 1, MemoryKind::Pageable);
    b.api("cudaDeviceGetAttribute", 110, 111, 2);  // not sync-relevant: does not split
    b.api("cudaDeviceSynchronize", 113, 120, 3);
    auto sp = find_sync_points(b.done());
    ASSERT_EQ(sp.size(), 1u);
    EXPECT_TRUE(sp[0].merged_copy);
    EXPECT_EQ(sp[0].api, "cudaDeviceSynchronize");
    EXPECT_EQ(sp[0].blocked_ns, 20);
  }
}

TEST(SyncPoints, SynchronousMemcpyInvolvingTheHost) {
  TraceBuilder b;
  // cudaMemcpy H2D [0,10) -> 1; cudaMemcpy whose record says DtoD [20,30) -> 0 (no host
  // sync for device-to-device, CUDA "API synchronization behavior"); cuMemcpyDtoH_v2
  // without a GPU record [40,45) -> 1 (direction from the name); cuMemcpyDtoD_v2 -> 0;
  // cudaMemcpyAsync H2D from pageable memory -> 0. Total 2.
  b.api("cudaMemcpy", 0, 10, 1);
  b.copy(CopyKind::HtoD, 0, 7, 2, 8, 1, MemoryKind::Pageable);
  b.api("cudaMemcpy", 20, 30, 2);
  b.copy(CopyKind::DtoD, 0, 7, 22, 28, 2);
  b.api("cuMemcpyDtoH_v2", 40, 45, 3);
  b.api("cuMemcpyDtoD_v2", 50, 55, 4);
  b.api("cudaMemcpyAsync", 60, 65, 5);
  b.copy(CopyKind::HtoD, 0, 7, 62, 64, 5, MemoryKind::Pageable);
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 2u);
  EXPECT_EQ(sp[0].api, "cudaMemcpy");
  EXPECT_EQ(sp[0].blocked_ns, 10);
  EXPECT_EQ(sp[0].stream, 7);
  EXPECT_EQ(sp[1].api, "cuMemcpyDtoH_v2");
  EXPECT_EQ(sp[1].blocked_ns, 5);
}

// One rule for copies whose blocking the trace does not give (README "Definitions"): a copy
// call counts as a sync point only when the trace says it blocks the host: a synchronous copy
// with a host<->device direction (from its GPU copy record, its "kind" argument or its name),
// an async device-to-host copy into pageable memory. A synchronous copy of unknown direction
// and an async device-to-host copy into host memory of unknown kind (no record, or ROCm's
// "Host") not followed by a sync of its stream are not counted, and one warning counts both.
// Such an async copy followed by a sync of its stream is one sync point with the sync (the
// host blocked once either way).
TEST(SyncPoints, CopiesOfUnknownDirectionOrMemoryFollowOneRule) {
  TraceBuilder b;
  // [0,10) cudaMemcpy, no record, name gives no direction -> not counted (sync, unknown);
  // [20,30) cudaMemcpyAsync, no record, then cudaLaunchKernel -> not counted (async, unknown);
  // [40,45) cudaMemcpyAsync, no record, then cudaStreamSynchronize [46,60) -> one merged
  //   point, blocked 60 - 40 = 20;
  // [70,75) cudaMemcpyAsync, record DtoH into Unknown host memory, then [80,90) launch ->
  //   not counted; [100,110) cudaMemcpy with a record HtoD -> 1 (blocked 10).
  // Total 2 points; warning: 3 calls (1 synchronous, 2 async).
  b.api("cudaMemcpy", 0, 10, 1);
  b.api("cudaMemcpyAsync", 20, 30, 2);
  b.api("cudaLaunchKernel", 31, 32, 3);
  b.api("cudaMemcpyAsync", 40, 45, 4);
  b.api("cudaStreamSynchronize", 46, 60, 5);
  b.api("cudaMemcpyAsync", 70, 75, 6);
  b.copy(CopyKind::DtoH, 0, 7, 71, 72, 6, MemoryKind::Unknown);
  b.api("cudaLaunchKernel", 80, 90, 7);
  b.api("cudaMemcpy", 100, 110, 8);
  b.copy(CopyKind::HtoD, 0, 7, 101, 109, 8, MemoryKind::Pageable);
  b.kernel(0, 7, 200, 210);
  auto r = analyze(b.done());
  ASSERT_EQ(r.sync_points.size(), 2u);
  EXPECT_TRUE(r.sync_points[0].merged_copy);
  EXPECT_EQ(r.sync_points[0].blocked_ns, 20);
  EXPECT_EQ(r.sync_points[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(r.sync_points[1].api, "cudaMemcpy");
  EXPECT_EQ(r.sync_points[1].blocked_ns, 10);
  EXPECT_TRUE(has_warning(r, "3 memcpy calls were not counted as sync points"));
  EXPECT_TRUE(has_warning(r, "(1 synchronous without a direction, 2 async device-to-host"));
}

// HIP runtime calls (ROCm builds of PyTorch write them under "cuda_runtime"), from HIP's
// documented semantics: hipMemcpyWithStream is synchronous (direction from its "kind"
// argument when no record says it), hipDeviceSynchronize/hipStreamSynchronize/
// hipEventSynchronize block, hipStreamWaitEvent is a stream wait, queries never are, the
// _spt (per-thread stream) forms are the same calls, hipMemcpyDtoD does not block the host.
TEST(SyncPoints, HipRuntimeCalls) {
  TraceBuilder b;
  // [0,10) hipMemcpyWithStream kind DtoH, no record -> 1; [20,30) hipMemcpyWithStream kind
  // DtoD -> 0; [40,50) hipMemcpyHtoD (direction from the name) -> 1; [60,65) hipMemcpyDtoD
  // -> 0; [70,71) hipStreamWaitEvent -> wait; [72,73) hipEventQuery, [74,75) hipStreamQuery
  // -> 0; [80,90) hipStreamSynchronize_spt -> 1; [100,110) hipEventSynchronize -> 1;
  // [120,130) hipDeviceSynchronize -> 1; [140,150) hipMemcpyDtoHAsync with a record DtoH
  // pageable, then [151,160) hipStreamSynchronize -> 1 merged. Total 6.
  b.api("hipMemcpyWithStream", 0, 10, 1).copy_kind = CopyKind::DtoH;
  b.api("hipMemcpyWithStream", 20, 30, 2).copy_kind = CopyKind::DtoD;
  b.api("hipMemcpyHtoD", 40, 50, 3);
  b.api("hipMemcpyDtoD", 60, 65, 4);
  b.api("hipStreamWaitEvent", 70, 71, 5);
  b.api("hipEventQuery", 72, 73, 6);
  b.api("hipStreamQuery", 74, 75, 7);
  b.api("hipStreamSynchronize_spt", 80, 90, 8);
  b.api("hipEventSynchronize", 100, 110, 9);
  b.api("hipDeviceSynchronize", 120, 130, 10);
  b.api("hipMemcpyDtoHAsync", 140, 150, 11);
  b.copy(CopyKind::DtoH, 0, 7, 141, 142, 11, MemoryKind::Pageable);
  b.api("hipStreamSynchronize", 151, 160, 12);
  b.kernel(0, 7, 300, 310);
  auto r = analyze(b.done());
  EXPECT_EQ(totals(r).total, 6u);
  EXPECT_EQ(totals(r).by_api.at("hipMemcpyWithStream"), 1u);
  EXPECT_EQ(totals(r).by_api.at("hipMemcpyHtoD"), 1u);
  EXPECT_EQ(totals(r).by_api.at("hipStreamSynchronize_spt"), 1u);
  EXPECT_EQ(totals(r).by_api.at("hipEventSynchronize"), 1u);
  EXPECT_EQ(totals(r).by_api.at("hipDeviceSynchronize"), 1u);
  EXPECT_EQ(totals(r).by_api.at("hipStreamSynchronize"), 1u);
  EXPECT_EQ(totals(r).stream_wait_events, 1u);
  EXPECT_EQ(r.sync_points.back().blocked_ns, 20);  // the merged copy + sync
  EXPECT_TRUE(r.sync_points.back().merged_copy);
  EXPECT_FALSE(has_warning(r, "memcpy calls were not counted"));
}

// A cudaGraphLaunch enqueues the graph's kernels (they carry its correlation id): no sync.
TEST(SyncPoints, GraphLaunchIsNotASync) {
  TraceBuilder b;
  b.api("cudaGraphLaunch", 0, 5, 1);
  b.kernel(0, 7, 10, 20, 1);
  b.kernel(0, 7, 20, 30, 1);
  b.api("cuGraphLaunch", 40, 45, 2);
  b.kernel(0, 7, 50, 60, 2);
  auto r = analyze(b.done());
  EXPECT_EQ(totals(r).total, 0u);
  EXPECT_EQ(r.totals.kernels, 3u);
}

TEST(SyncPoints, StreamWaitEventAndQueriesAreNotSyncsUnlessAnEventQueryPolls) {
  TraceBuilder b;
  b.api("cudaStreamWaitEvent", 0, 5, 1);
  b.api("cuStreamWaitEvent", 6, 8, 2);
  b.api("cudaStreamQuery", 10, 12, 3);
  b.api("cudaEventQuery", 13, 15, 4);
  b.sync_record(SyncType::EventSync, 0, 7, 13, 14, 4).is_query = true;
  b.api("cuEventQuery", 16, 17, 5);
  b.api("cudaEventSynchronize", 20, 30, 6);
  b.kernel(0, 7, 0, 40);
  auto r = analyze(b.done());
  // The event sync counts, and the cudaEventQuery that has an Event Sync record (a poll,
  // SyncPoint::polling); the other queries do not. Both wait-event calls are counted apart.
  EXPECT_EQ(totals(r).total, 2u);
  EXPECT_EQ(totals(r).by_api.at("cudaEventSynchronize"), 1u);
  EXPECT_EQ(totals(r).by_api.at("cudaEventQuery"), 1u);
  EXPECT_EQ(totals(r).polling, 1u);
  EXPECT_EQ(totals(r).stream_wait_events, 2u);
}

TEST(SyncPoints, PerThreadStreamAndVersionedNames) {
  TraceBuilder b;
  // _ptsz copy + _ptsz sync -> 1 merged; cuStreamSynchronize_ptsz -> 1; cuCtxSynchronize_v2
  // -> 1; cudaDeviceSynchronize_ptsz-style suffix on a query stays a query -> 0. Total 3.
  b.api("cudaMemcpyAsync_ptsz", 0, 10, 1);
  b.copy(CopyKind::DtoH, 0, 7, 2, 8, 1, MemoryKind::Pageable);
  b.api("cudaStreamSynchronize_ptsz", 11, 15, 2);
  b.api("cuStreamSynchronize_ptsz", 20, 25, 3);
  b.api("cuCtxSynchronize_v2", 30, 40, 4);
  b.api("cudaStreamQuery_ptsz", 45, 46, 5);
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 3u);
  EXPECT_TRUE(sp[0].merged_copy);
  EXPECT_EQ(sp[0].api, "cudaStreamSynchronize_ptsz");
  EXPECT_EQ(sp[1].api, "cuStreamSynchronize_ptsz");
  EXPECT_EQ(sp[2].api, "cuCtxSynchronize_v2");
}

TEST(SyncPoints, CallbackIdWhenTheNameIsMissing) {
  TraceBuilder b;
  // Runtime cbid 165 = cudaDeviceSynchronize, 132 = cudaStreamQuery; driver cbid 126 =
  // cuStreamSynchronize (CUDA 13.0 cupti_runtime_cbid.h / cupti_driver_cbid.h). Note the
  // same number means different calls per domain: runtime 126 is cudaThreadSynchronize.
  b.api_cbid(ApiKind::Runtime, 165, 0, 10);
  b.api_cbid(ApiKind::Runtime, 132, 20, 21);
  b.api_cbid(ApiKind::Driver, 126, 30, 35);
  b.api_cbid(ApiKind::Runtime, 999999, 40, 45);  // unknown id: ignored
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 2u);
  EXPECT_EQ(sp[0].api, "cudaDeviceSynchronize");
  EXPECT_EQ(sp[1].api, "cuStreamSynchronize");
}

TEST(SyncPoints, DriverCallInsideRuntimeCallIsTheSameEpisode) {
  TraceBuilder b;
  b.api("cudaStreamSynchronize", 0, 100, 1);
  b.api("cuStreamSynchronize", 5, 95, 2);
  // another thread's sync at the same time is its own episode
  b.api("cudaStreamSynchronize", 10, 20, 3, /*tid=*/2);
  auto sp = find_sync_points(b.done());
  ASSERT_EQ(sp.size(), 2u);
  EXPECT_EQ(sp[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(sp[0].tid, 1);
  EXPECT_EQ(sp[0].blocked_ns, 100);
  EXPECT_EQ(sp[1].tid, 2);
}

TEST(SyncPoints, CauseIsOutermostAtenOpElseInnermostCpuOp) {
  TraceBuilder b;
  // 1: aten::item [90,130) > aten::_local_scalar_dense [95,125) > copy+sync -> aten::item.
  b.cpu_op("aten::item", 90, 130);
  b.cpu_op("aten::_local_scalar_dense", 95, 125);
  b.api("cudaMemcpyAsync", 100, 110, 1);
  b.copy(CopyKind::DtoH, 0, 7, 105, 108, 1, MemoryKind::Pageable);
  b.api("cudaStreamSynchronize", 111, 115, 2);
  // 2: only non-aten ops enclose: outer [200,400) > inner [250,300) -> "inner".
  b.cpu_op("outer", 200, 400);
  b.cpu_op("inner", 250, 300);
  b.api("cudaDeviceSynchronize", 260, 270, 3);
  // 3: an op that ended before the call, and an op of another thread, do not enclose it
  //    -> the API name.
  b.cpu_op("aten::done_before", 500, 510);
  b.cpu_op("aten::other_thread", 500, 600, /*tid=*/2);
  b.api("cudaStreamSynchronize", 520, 530, 4);
  // 4: an op that starts inside the call does not enclose it.
  b.cpu_op("aten::late", 705, 800);
  b.api("cudaEventSynchronize", 700, 710, 5);
  auto r = analyze(b.done());
  ASSERT_EQ(r.sync_points.size(), 4u);
  EXPECT_EQ(r.sync_points[0].cause, "aten::item");
  EXPECT_EQ(r.sync_points[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(r.sync_points[1].cause, "inner");
  EXPECT_EQ(r.sync_points[2].cause, "cudaStreamSynchronize");
  EXPECT_EQ(r.sync_points[3].cause, "cudaEventSynchronize");
  EXPECT_EQ(totals(r).by_cause.at("aten::item"), 1u);
}

TEST(SyncPoints, PidOptionRestrictsHostThreads) {
  TraceBuilder b;
  b.api("cudaStreamSynchronize", 0, 10, 1, 1, /*pid=*/100);
  b.api("cudaStreamSynchronize", 20, 30, 2, 1, /*pid=*/200);
  AnalysisOptions o;
  o.pid = 200;
  auto sp = find_sync_points(b.done(), o);
  ASSERT_EQ(sp.size(), 1u);
  EXPECT_EQ(sp[0].pid, 200);
}

TEST(Windows, StepsLayersAndTheirDistributions) {
  AnalysisOptions o;
  o.layer_glob = "layer_*";
  auto r = analyze(windows_trace(), o);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].name, "ProfilerStep#0");
  EXPECT_EQ(r.steps[2].index, 2);
  EXPECT_EQ(r.steps[0].duration_ns, 1000);
  EXPECT_EQ(r.steps[1].duration_ns, 1500);
  EXPECT_EQ(r.steps[0].gpu_busy_ns, 100);
  EXPECT_EQ(r.steps[1].gpu_busy_ns, 200);
  EXPECT_EQ(r.steps[2].gpu_busy_ns, 300);
  EXPECT_EQ(r.steps[0].kernels, 1u);
  EXPECT_EQ(r.steps[1].kernels, 1u);
  // syncs per step 1, 2, 0; blocked 100, 40, 0; bubble 0, 1400, 0.
  EXPECT_EQ(r.steps[0].syncs.total, 1u);
  EXPECT_EQ(r.steps[1].syncs.total, 2u);
  EXPECT_EQ(r.steps[2].syncs.total, 0u);
  EXPECT_EQ(r.steps[0].syncs.blocked_ns, 100);
  EXPECT_EQ(r.steps[1].syncs.blocked_ns, 40);
  EXPECT_EQ(r.steps[1].syncs.bubble_ns, 1400);
  EXPECT_EQ(r.steps[0].syncs.bubble_ns, 0);
  // totals: 4 syncs, blocked 150, bubble 1400; span [0,3110).
  EXPECT_EQ(r.totals.syncs.total, 4u);
  EXPECT_EQ(r.totals.syncs.blocked_ns, 150);
  EXPECT_EQ(r.totals.syncs.bubble_ns, 1400);
  EXPECT_EQ(r.totals.duration_ns, 3110);
  EXPECT_EQ(r.totals.gpu_busy_ns, 600);
  // distributions over the 3 steps: durations {500,1000,1500}: median 1000, p10 at 0.2 ->
  // 600, p90 at 1.8 -> 1400. syncs {0,1,2}: median 1, p10 0.2, p90 1.8.
  EXPECT_EQ(r.step_summary.duration_ns.n, 3u);
  EXPECT_DOUBLE_EQ(r.step_summary.duration_ns.median, 1000);
  EXPECT_DOUBLE_EQ(r.step_summary.duration_ns.p10, 600);
  EXPECT_DOUBLE_EQ(r.step_summary.duration_ns.p90, 1400);
  EXPECT_DOUBLE_EQ(r.step_summary.syncs.median, 1);
  EXPECT_DOUBLE_EQ(r.step_summary.syncs.p10, 0.2);
  EXPECT_DOUBLE_EQ(r.step_summary.syncs.p90, 1.8);
  EXPECT_DOUBLE_EQ(r.step_summary.sync_bubble_ns.max, 1400);
  EXPECT_DOUBLE_EQ(r.step_summary.gpu_busy_ns.median, 200);
  // layers: layer_a has no sync and no GPU work; layer_b has B and C and kernel
  // [1200,1300) plus [1100,1100) of nothing -> busy 100.
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[0].name, "layer_a");
  EXPECT_EQ(r.layers[0].syncs.total, 0u);
  EXPECT_EQ(r.layers[1].syncs.total, 2u);
  EXPECT_EQ(r.layers[1].gpu_busy_ns, 100);
  EXPECT_EQ(r.layer_summary.syncs.n, 2u);
  EXPECT_DOUBLE_EQ(r.layer_summary.syncs.median, 1);
  // offenders by blocked+bubble: aten::nonzero 10+1300 = 1310 > cudaStreamSynchronize
  // (A, B, D) 140+100 = 240.
  ASSERT_EQ(r.worst.size(), 2u);
  EXPECT_EQ(r.worst[0].cause, "aten::nonzero");
  EXPECT_EQ(r.worst[0].count, 1u);
  EXPECT_EQ(r.worst[0].bubble_ns, 1300);
  EXPECT_EQ(r.worst[1].cause, "cudaStreamSynchronize");
  EXPECT_EQ(r.worst[1].count, 3u);
  EXPECT_EQ(r.worst[1].blocked_ns, 140);
}

TEST(Windows, CopiesClippedToTheWindow) {
  TraceBuilder b;
  b.annotation("ProfilerStep#0", 0, 100);
  b.annotation("ProfilerStep#1", 100, 200);
  // D2H on s8 [50,150) while a kernel on s7 runs [0,200): overlapped everywhere.
  // Step 0 sees copy [50,100) = 50, step 1 sees [100,150) = 50; the copy counts (by start)
  // only in step 0.
  b.kernel(0, 7, 0, 200);
  b.copy(CopyKind::DtoH, 0, 8, 50, 150, 0, MemoryKind::Pinned, 1000);
  // The same step marker also recorded as an NVTX range: still two steps.
  b.range(RangeKind::NvtxPushPop, "ProfilerStep#1", 100, 200);
  // A sync starting exactly at step 0's end belongs to step 1 (windows are [start, end)).
  b.api("cudaStreamSynchronize", 100, 110, 1);
  auto r = analyze(b.done());
  EXPECT_EQ(r.steps[0].syncs.total, 0u);
  EXPECT_EQ(r.steps[1].syncs.total, 1u);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].d2h.copy_ns, 50);
  EXPECT_EQ(r.steps[1].d2h.copy_ns, 50);
  EXPECT_DOUBLE_EQ(r.steps[1].d2h.fraction, 1.0);
  EXPECT_EQ(r.steps[0].memcpys, 1u);
  EXPECT_EQ(r.steps[0].memcpy_bytes, 1000u);
  EXPECT_EQ(r.steps[1].memcpys, 0u);
}

TEST(Warnings, DroppedRecordsNoGpuNoApiAndUnmatchedStepGlob) {
  {
    TraceBuilder b;
    b.t.meta.dropped_records = 42;
    b.api("cudaStreamSynchronize", 0, 10, 1);
    b.annotation("train_step#0", 0, 100);
    b.annotation("train_step#1", 100, 200);
    auto r = analyze(b.done());
    EXPECT_TRUE(has_warning(r, "42 records were dropped by the tracer: counts are lower bounds"));
    EXPECT_TRUE(has_warning(r, "no GPU activity"));
    // the default glob matches nothing; the warning names what looks like steps
    EXPECT_TRUE(has_warning(r, "'ProfilerStep#*'"));
    EXPECT_TRUE(has_warning(r, "'train_step#*' (2)"));
    EXPECT_FALSE(has_warning(r, "no CUDA runtime/driver API calls"));
  }
  {
    TraceBuilder b;
    b.kernel(0, 7, 0, 10);
    b.sync_record(SyncType::StreamSync, 0, 7, 0, 5, 1);
    AnalysisOptions o;
    o.step_glob = "";
    auto r = analyze(b.done(), o);
    EXPECT_TRUE(has_warning(r, "1 cuda_sync records but no CUDA runtime/driver API calls"));
    EXPECT_FALSE(has_warning(r, "step-range"));
    EXPECT_FALSE(has_warning(r, "dropped"));
    EXPECT_EQ(r.totals.syncs.total, 0u);
  }
  {
    TraceBuilder b;
    b.kernel(0, 7, 0, 10);
    auto r = analyze(b.done());
    EXPECT_TRUE(has_warning(r, "no CUDA runtime/driver API calls"));
  }
  {
    // an async copy with no GPU record, not followed by a sync, cannot be classified: say so
    TraceBuilder b;
    b.kernel(0, 7, 0, 10);
    b.api("cudaMemcpyAsync", 0, 10, 1);
    auto r = analyze(b.done());
    EXPECT_TRUE(has_warning(r, "1 memcpy calls were not counted as sync points"));
    EXPECT_TRUE(has_warning(r, "1 async device-to-host"));
  }
}

// What the reader tolerated (read_warnings) is reported with the analysis, one line each.
TEST(Warnings, ReadWarningsAreReported) {
  TraceBuilder b;
  b.kernel(0, 7, 0, 10);
  ReadWarning w;
  w.kind = ReadWarning::Kind::SkippedEvent;
  w.category = "kernel";
  w.field = "args.stream";
  w.expected = "an integer";
  w.example = "[7]";
  w.first_event = 12;
  w.count = 4;
  b.t.meta.read_warnings.push_back(w);
  auto r = analyze(b.done());
  EXPECT_TRUE(has_warning(r,
                          "4 \"kernel\" events were skipped: their \"args.stream\" is not an integer "
                          "(first: traceEvents[12]: [7]) and the analyses need it"));
}

TEST(Analyze, EmptyTraceIsNotAnError) {
  Trace t;
  t.finalize();
  auto r = analyze(t);
  EXPECT_EQ(r.totals.syncs.total, 0u);
  EXPECT_EQ(r.totals.duration_ns, 0);
  EXPECT_TRUE(r.steps.empty());
  EXPECT_FALSE(r.warnings.empty());
}

}  // namespace
}  // namespace syncscope
