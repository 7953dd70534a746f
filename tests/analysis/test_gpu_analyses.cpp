// The whole-trace GPU analyses (profiler/analysis/include/syncscope/analysis/gpu_analyses.hpp) on
// hand-built traces: kernel classes and statistics, launch delay, queue length, GPU time
// per annotation, copy bandwidth and the Nsight-Systems-style findings.
#include <gtest/gtest.h>

#include "syncscope/analysis/analysis.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

using test::TraceBuilder;

TEST(KernelClass, ByNameFirstMatchWins) {
  EXPECT_EQ(classify_kernel_name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), KernelClass::Comm);
  EXPECT_EQ(classify_kernel_name("Memcpy DtoH"), KernelClass::Copy);
  EXPECT_EQ(classify_kernel_name("void at::native::direct_copy_kernel_cuda"), KernelClass::Copy);
  EXPECT_EQ(classify_kernel_name("flash_fwd_kernel<cutlass::bfloat16_t>"), KernelClass::Attention);
  EXPECT_EQ(classify_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32"), KernelClass::Gemm);
  EXPECT_EQ(classify_kernel_name("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT"), KernelClass::Gemm);
  EXPECT_EQ(classify_kernel_name("void at::native::reduce_kernel<512, 1>"), KernelClass::Reduce);
  EXPECT_EQ(classify_kernel_name("triton_red_fused_add_mean_0"), KernelClass::Reduce);
  EXPECT_EQ(classify_kernel_name("void at::native::vectorized_elementwise_kernel<4>"), KernelClass::Elementwise);
  EXPECT_EQ(classify_kernel_name("my_custom_kernel"), KernelClass::Other);
}

TEST(KernelBreakdown, CountTotalMedianP90PerNameAndClass) {
  // gemm_a: durations 10, 20, 30, 40 -> total 100, median 25, p90 at 2.7 -> 30 + 0.7*10 = 37.
  // elementwise_kernel: 5. One HtoD copy of 6 ns is class copy.
  TraceBuilder b;
  for (int i = 0; i < 4; ++i) b.kernel(0, 7, 100 * i, 100 * i + 10 * (i + 1)).name = b.t.intern("gemm_a");
  b.kernel(0, 7, 1000, 1005).name = b.t.intern("elementwise_kernel");
  b.copy(CopyKind::HtoD, 0, 7, 2000, 2006);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.by_name.size(), 3u);
  EXPECT_EQ(r.gpu.kernel_names, 3u);
  const auto& g = r.gpu.by_name[0];
  EXPECT_EQ(g.name, "gemm_a");
  EXPECT_EQ(g.cls, KernelClass::Gemm);
  EXPECT_EQ(g.stats.count, 4u);
  EXPECT_EQ(g.stats.total_ns, 100);
  EXPECT_DOUBLE_EQ(g.stats.median_ns, 25);
  EXPECT_DOUBLE_EQ(g.stats.p90_ns, 37);
  EXPECT_EQ(g.stats.max_ns, 40);
  ASSERT_EQ(r.gpu.by_class.size(), 3u);
  EXPECT_EQ(r.gpu.by_class[0].name, "gemm");
  EXPECT_EQ(r.gpu.by_class[1].name, "copy");
  EXPECT_EQ(r.gpu.by_class[1].stats.total_ns, 6);
  EXPECT_EQ(r.gpu.by_class[2].name, "elementwise");
}

TEST(LaunchDelayAndQueue, PerStream) {
  // Three kernels launched at 0, 1, 2 run [10,20), [20,30), [30,40): delays 10, 19, 28
  // (median 19, worst first 28). Queue: 1 at 0, 2 at 1, 3 at 2 (max 3 at t=2), then 2 at
  // 20, 1 at 30, 0 at 40. Mean over [0,40): (1*1 + 2*1 + 3*18 + 2*10 + 1*10) / 40 = 87/40.
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    const auto c = static_cast<std::uint64_t>(i + 1);
    b.api("cudaLaunchKernel", i, i + 1, c);
    b.kernel(0, 7, 10 * (i + 1), 10 * (i + 2), c);
  }
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.launch_delay.size(), 1u);
  const auto& d = r.gpu.launch_delay[0];
  EXPECT_EQ(d.stream, 7);
  EXPECT_EQ(d.delay.count, 3u);
  EXPECT_DOUBLE_EQ(d.delay.median_ns, 19);
  ASSERT_EQ(d.worst.size(), 3u);
  EXPECT_EQ(d.worst[0].delay_ns, 28);
  EXPECT_EQ(d.worst[0].api, "cudaLaunchKernel");
  EXPECT_EQ(d.worst[0].launch_ns, 2);
  ASSERT_EQ(r.gpu.queues.size(), 1u);
  EXPECT_EQ(r.gpu.queues[0].max_depth, 3u);
  EXPECT_EQ(r.gpu.queues[0].max_at_ns, 2);
  EXPECT_DOUBLE_EQ(r.gpu.queues[0].mean_depth, 87.0 / 40.0);
}

TEST(AnnotationGpuTime, LaunchesInsideTheRangeOnItsThread) {
  // "fwd" [0,10) launches kernels of 5 and 7 ns; "bwd" [10,20) one of 3; a launch on
  // another thread inside "fwd"'s time does not count. Numbered steps group as '#*'.
  TraceBuilder b;
  b.annotation("fwd", 0, 10);
  b.annotation("bwd", 10, 20);
  b.annotation("ProfilerStep#1", 0, 20);
  b.annotation("ProfilerStep#2", 20, 30);
  b.api("cudaLaunchKernel", 1, 2, 1);
  b.kernel(0, 7, 100, 105, 1);
  b.api("cudaLaunchKernel", 3, 4, 2);
  b.kernel(0, 7, 105, 112, 2);
  b.api("cudaLaunchKernel", 11, 12, 3);
  b.kernel(0, 7, 112, 115, 3);
  b.api("cudaLaunchKernel", 5, 6, 4, /*tid=*/2);
  b.kernel(0, 8, 120, 150, 4);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.annotations.size(), 3u);
  EXPECT_EQ(r.gpu.annotations[0].name, "ProfilerStep#*");
  EXPECT_EQ(r.gpu.annotations[0].count, 2u);
  EXPECT_EQ(r.gpu.annotations[0].gpu_ns, 15);
  EXPECT_EQ(r.gpu.annotations[1].name, "fwd");
  EXPECT_EQ(r.gpu.annotations[1].gpu_ns, 12);
  EXPECT_EQ(r.gpu.annotations[1].activities, 2u);
  EXPECT_EQ(r.gpu.annotations[2].gpu_ns, 3);
}

TEST(CopyBandwidth, ByDirectionAndHostMemory) {
  // Two pinned HtoD copies: 1000 B in 100 ns and 3000 B in 100 ns -> 4000 B / 200 ns = 20
  // GB/s; one pageable DtoH: 500 B in 250 ns -> 2 GB/s.
  TraceBuilder b;
  b.copy(CopyKind::HtoD, 0, 7, 0, 100, 0, MemoryKind::Pinned, 1000);
  b.copy(CopyKind::HtoD, 0, 7, 100, 200, 0, MemoryKind::Pinned, 3000);
  b.copy(CopyKind::DtoH, 0, 7, 300, 550, 0, MemoryKind::Pageable, 500);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.copies.size(), 2u);
  EXPECT_EQ(r.gpu.copies[0].kind, CopyKind::HtoD);
  EXPECT_EQ(r.gpu.copies[0].host_memory, MemoryKind::Pinned);
  EXPECT_DOUBLE_EQ(r.gpu.copies[0].gb_per_s, 20.0);
  EXPECT_EQ(r.gpu.copies[1].host_memory, MemoryKind::Pageable);
  EXPECT_DOUBLE_EQ(r.gpu.copies[1].gb_per_s, 2.0);
}

TEST(Findings, PageableAsyncSyncCopyAndSyncMemsetAsNsightDefinesThem) {
  // An async DtoH into pageable memory (fires async_copy_pageable); a synchronous 1 MiB HtoD
  // (fires sync_copy) and a 4 KiB one (Nsight's 64 KiB exception: not flagged); a
  // synchronous memset of pinned memory (fires) and one of device memory (asynchronous to
  // the host: not flagged).
  TraceBuilder b;
  b.api("cudaMemcpyAsync", 0, 10, 1);
  b.copy(CopyKind::DtoH, 0, 7, 2, 8, 1, MemoryKind::Pageable, 64);
  b.api("cudaMemcpy", 20, 30, 2);
  b.copy(CopyKind::HtoD, 0, 7, 22, 28, 2, MemoryKind::Pinned, 1 << 20);
  b.api("cudaMemcpy", 40, 45, 3);
  b.copy(CopyKind::HtoD, 0, 7, 41, 43, 3, MemoryKind::Pinned, 4096);
  b.api("cudaMemset", 50, 55, 4);
  b.memset(0, 7, 51, 52).correlation = 4;
  b.t.memsets.back().memory_kind = MemoryKind::Pinned;
  b.api("cudaMemset", 60, 62, 5);
  b.memset(0, 7, 61, 62).correlation = 5;
  b.t.memsets.back().memory_kind = MemoryKind::Device;
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.findings.size(), 3u);
  EXPECT_EQ(r.gpu.findings[0].rule, "async_copy_pageable");
  EXPECT_EQ(r.gpu.findings[0].count, 1u);
  EXPECT_EQ(r.gpu.findings[0].events.at(0).bytes, 64u);
  EXPECT_EQ(r.gpu.findings[1].rule, "sync_copy");
  EXPECT_EQ(r.gpu.findings[1].count, 1u);
  EXPECT_EQ(r.gpu.findings[1].host_ns, 10);
  EXPECT_EQ(r.gpu.findings[2].rule, "sync_memset");
  EXPECT_EQ(r.gpu.findings[2].count, 1u);
  EXPECT_EQ(r.gpu.findings[2].events.at(0).start_ns, 50);
  for (const auto& f : r.gpu.findings) EXPECT_FALSE(f.advice.empty());
}

}  // namespace
}  // namespace syncscope
