// Kernels and launch delay per ATen op, queue length over time and time blocked on a full
// queue (syncscope/analysis/hta_extras.hpp), on hand-built traces whose answers are worked
// out in the comments; and their JSON, CSV and table forms.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/reports/analysis_printers.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

using test::TraceBuilder;

// One launch on thread `tid` at [start, start + 2) of a kernel named `name` at [k0, k1).
void launch(TraceBuilder& b, std::uint64_t corr, Ns start, const char* name, Ns k0, Ns k1, std::int64_t tid = 1) {
  b.api("cudaLaunchKernel", start, start + 2, corr, tid);
  b.kernel(0, 7, k0, k1, corr).name = b.t.intern(name);
}

const AtenOpKernelGroup* group(const AtenOpKernels& a, const std::string& op, const std::string& kernels) {
  for (const auto& g : a.groups)
    if (g.op == op && g.kernels == kernels) return &g;
  return nullptr;
}

TEST(AtenOpKernels, InnermostAtenOpOnTheCallsThreadOwnsTheLaunch) {
  // aten::linear [0,100) wraps aten::mm [10,50) (launches gemm at 20 -> kernel 120) and, after
  // it, launches bias at 60 -> kernel 200: the linear owns bias only, the mm owns gemm.
  // A second mm [300,340) launches gemm at 305 -> 330 and gemm2 at 310 -> 350.
  // A launch at 400 on thread 2 lies inside aten::add_ [390,420) on thread 1: no op on its
  // own thread (HTA's rule, any thread, would give it to add_).
  TraceBuilder b;
  b.cpu_op("aten::linear", 0, 100);
  b.cpu_op("aten::mm", 10, 50);
  launch(b, 1, 20, "gemm", 120, 180);
  launch(b, 2, 60, "bias", 200, 210);
  b.cpu_op("aten::mm", 300, 340);
  launch(b, 3, 305, "gemm", 330, 340);
  launch(b, 4, 310, "gemm2", 350, 370);
  b.cpu_op("aten::add_", 390, 420);
  launch(b, 5, 400, "add", 430, 440, /*tid=*/2);
  const auto r = analyze(b.done());
  const auto& a = r.gpu.aten_ops;
  EXPECT_EQ(a.ops, 3u);
  EXPECT_EQ(a.launches, 4u);
  EXPECT_EQ(a.launches_outside_ops, 1u);
  EXPECT_EQ(a.group_count, 3u);
  const auto* mm1 = group(a, "aten::mm", "gemm");
  ASSERT_NE(mm1, nullptr);
  EXPECT_EQ(mm1->count, 1u);
  EXPECT_EQ(mm1->op_delay_mean_ns, 10);       // 20 - 10
  EXPECT_EQ(mm1->launch_delay_mean_ns, 100);  // 120 - 20
  EXPECT_EQ(mm1->kernel_ns, 60);
  const auto* lin = group(a, "aten::linear", "bias");
  ASSERT_NE(lin, nullptr);
  EXPECT_EQ(lin->op_delay_mean_ns, 60);
  EXPECT_EQ(lin->launch_delay_mean_ns, 140);
  const auto* mm2 = group(a, "aten::mm", "gemm -> gemm2");
  ASSERT_NE(mm2, nullptr);
  EXPECT_EQ(mm2->kernels_per_op, 2u);
  EXPECT_EQ(mm2->op_delay_mean_ns, 5);       // first launch 305 - 300
  EXPECT_EQ(mm2->launch_delay_mean_ns, 25);  // 330 - 305
  EXPECT_EQ(mm2->kernel_ns, 30);
  EXPECT_EQ(group(a, "aten::add_", "add"), nullptr);
}

TEST(AtenOpKernels, GroupsByOpAndSequenceWithMeanAndMaxDelays) {
  // Three aten::add_ each launching one "add": op delays 4, 6, 11 (mean 7, max 11), launch
  // delays 10, 20, 40 (mean 23.33 -> 23, max 40). A non-aten op (my::op) wrapping a launch
  // does not count as an op: that launch is outside.
  TraceBuilder b;
  const Ns op_delay[] = {4, 6, 11}, launch_delay[] = {10, 20, 40};
  for (int i = 0; i < 3; ++i) {
    const Ns t = 1000 * i;
    b.cpu_op("aten::add_", t, t + 50);
    launch(b, static_cast<std::uint64_t>(i + 1), t + op_delay[i], "add", t + op_delay[i] + launch_delay[i],
           t + op_delay[i] + launch_delay[i] + 5);
  }
  b.cpu_op("my::op", 5000, 5100);
  launch(b, 9, 5010, "custom", 5020, 5030);
  const auto r = analyze(b.done());
  const auto& a = r.gpu.aten_ops;
  ASSERT_EQ(a.groups.size(), 1u);
  const auto& g = a.groups[0];
  EXPECT_EQ(g.count, 3u);
  EXPECT_EQ(g.op_delay_mean_ns, 7);
  EXPECT_EQ(g.op_delay_max_ns, 11);
  EXPECT_EQ(g.launch_delay_mean_ns, 23);
  EXPECT_EQ(g.launch_delay_max_ns, 40);
  EXPECT_EQ(a.launches_outside_ops, 1u);
}

TEST(AtenOpKernels, ACallRunningPastItsOpIsOutsideIt) {
  // aten::mm [0,10) and a launch call [8,12): the op does not wrap the whole call (HTA's rule
  // too), so the launch is outside; a kernel whose call is missing counts nowhere.
  TraceBuilder b;
  b.cpu_op("aten::mm", 0, 10);
  b.api("cudaLaunchKernel", 8, 12, 1);
  b.kernel(0, 7, 20, 30, 1);
  b.kernel(0, 7, 40, 50, 99);  // no call with correlation 99
  const auto r = analyze(b.done());
  EXPECT_EQ(r.gpu.aten_ops.launches, 0u);
  EXPECT_EQ(r.gpu.aten_ops.launches_outside_ops, 1u);
  EXPECT_TRUE(r.gpu.aten_ops.groups.empty());
}

TEST(AtenOpKernels, ManyGroupsAreCappedAndCounted) {
  TraceBuilder b;
  const int n = static_cast<int>(kTopAtenOpGroups) + 7;
  for (int i = 0; i < n; ++i) {
    const Ns t = 100 * i;
    b.cpu_op("aten::op" + std::to_string(i), t, t + 20);
    launch(b, static_cast<std::uint64_t>(i + 1), t + 1, "k", t + 30, t + 40);
  }
  const auto r = analyze(b.done());
  EXPECT_EQ(r.gpu.aten_ops.group_count, static_cast<std::uint64_t>(n));
  EXPECT_EQ(r.gpu.aten_ops.groups.size(), kTopAtenOpGroups);
  const auto j = nlohmann::json::parse(analysis_to_json(r));
  EXPECT_EQ(j["gpu"]["aten_op_kernels"]["groups_total"], n);
  EXPECT_TRUE(j["gpu"]["aten_op_kernels"]["groups_truncated"].get<bool>());
  std::ostringstream table;
  print_analysis_table(r, table);
  EXPECT_NE(table.str().find("... 52 more (op, kernel sequence) groups"), std::string::npos) << table.str();
}

// Stream 7: kernels launched at 0, 1, 2 run [10,20), [20,30), [30,40).
// depth (ours): 1 at 0, 2 at 1, 3 at 2, 2 at 20, 1 at 30, 0 at 40.
// pending (HTA's): 1 at 0, 2 at 1, 3 at 2, 2 at 10, 1 at 20, 0 at 30.
TraceBuilder three_queued() {
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    const auto c = static_cast<std::uint64_t>(i + 1);
    b.api("cudaLaunchKernel", i, i + 1, c);
    b.kernel(0, 7, 10 * (i + 1), 10 * (i + 2), c);
  }
  return b;
}

TEST(QueueSeries, ChangePointsOfOursAndHtasCounts) {
  const auto r = analyze(three_queued().done());
  const auto& q = r.gpu.queue_series;
  ASSERT_EQ(q.streams.size(), 1u);
  const auto& s = q.streams[0];
  const std::vector<std::array<std::uint64_t, 3>> want = {{0, 1, 1},  {1, 2, 2},  {2, 3, 3}, {10, 3, 2},
                                                          {20, 2, 1}, {30, 1, 0}, {40, 0, 0}};
  ASSERT_EQ(s.points.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(static_cast<std::uint64_t>(s.points[i].t_ns), want[i][0]) << i;
    EXPECT_EQ(s.points[i].depth, want[i][1]) << i;
    EXPECT_EQ(s.points[i].pending, want[i][2]) << i;
  }
  EXPECT_EQ(s.max_pending, 3u);
  EXPECT_EQ(s.bucket_ns, 0);
  // Ours and the existing summary agree on the maximum.
  ASSERT_EQ(r.gpu.queues.size(), 1u);
  EXPECT_EQ(r.gpu.queues[0].max_depth, 3u);
}

TEST(QueueSeries, BlockedIsTheTimePendingStaysAtOrAboveTheThreshold) {
  // pending >= 2 from 1 to 20 (2 at 1, 3 at 2, 2 at 10, 1 at 20): 19 ns; >= 3: [2,10) = 8 ns.
  AnalysisOptions o;
  o.queue_full = 2;
  EXPECT_EQ(analyze(three_queued().done(), o).gpu.queue_series.streams[0].blocked_ns, 19);
  o.queue_full = 3;
  const auto r = analyze(three_queued().done(), o);
  EXPECT_EQ(r.gpu.queue_series.streams[0].blocked_ns, 8);
  EXPECT_EQ(r.gpu.queue_series.threshold, 3u);
  o.queue_full = 4;
  EXPECT_EQ(analyze(three_queued().done(), o).gpu.queue_series.streams[0].blocked_ns, 0);
  // The default is HTA's CUDA_MAX_LAUNCH_QUEUE_PER_STREAM.
  EXPECT_EQ(AnalysisOptions{}.queue_full, 1024u);
}

TEST(QueueSeries, LongSeriesAreBucketedKeepingPeaksAndBlockedTimeExact) {
  // 3000 kernels: kernel i runs [10 i + 1, 10 i + 5), launched at 10 i, so pending is 1 for
  // [10 i, 10 i + 1); kernel 1500 is launched at 0 instead and pending until 15001, so before
  // it pending is 2 for [10 i, 10 i + 1), i < 1500. About 12,000 change points.
  TraceBuilder b;
  for (int i = 0; i < 3000; ++i) {
    const auto c = static_cast<std::uint64_t>(i + 1);
    const Ns s = 10 * i + 1;
    b.api("cudaLaunchKernel", i == 1500 ? 0 : s - 1, i == 1500 ? 1 : s, c);
    b.kernel(0, 7, s, s + 4, c);
  }
  AnalysisOptions o;
  o.queue_full = 2;
  const auto r = analyze(b.done(), o);
  const auto& s = r.gpu.queue_series.streams.at(0);
  EXPECT_GT(s.change_points, kQueueSeriesMaxPoints);
  EXPECT_LE(s.points.size(), kQueueSeriesMaxPoints);
  EXPECT_GT(s.bucket_ns, 0);
  // The peak of 2 pending (kernel 1500 waiting while each other launch waits 1 ns) survives.
  std::uint64_t peak = 0;
  for (const auto& p : s.points) peak = std::max(peak, p.pending);
  EXPECT_EQ(peak, 2u);
  EXPECT_EQ(s.max_pending, 2u);
  // Blocked (pending >= 2) from the full series: the 1500 launches before kernel 1500's start
  // each add 1 ns (kernels 0..1499; [10 i, 10 i + 1)): 1500 ns.
  EXPECT_EQ(s.blocked_ns, 1500);
}

TEST(QueueSeries, ALaunchRecordedAfterItsKernelStartedNeverCountsBelowZero) {
  // Clock skew: the call starts at 15, its kernel runs [10,20). Pending enters and leaves at 10
  // (never -1); depth enters at 15 (the call) and leaves at 20.
  TraceBuilder b;
  b.api("cudaLaunchKernel", 15, 16, 1);
  b.kernel(0, 7, 10, 20, 1);
  AnalysisOptions o;
  o.queue_full = 1;
  const auto r = analyze(b.done(), o);
  const auto& s = r.gpu.queue_series.streams.at(0);
  for (const auto& p : s.points) EXPECT_LE(p.pending, 1u);
  EXPECT_EQ(s.max_pending, 0u);
  EXPECT_EQ(s.blocked_ns, 0);
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[0].t_ns, 15);
  EXPECT_EQ(s.points[0].depth, 1u);
  EXPECT_EQ(s.points[1].t_ns, 20);
  EXPECT_EQ(s.points[1].depth, 0u);
}

TEST(QueueSeries, JsonCsvAndTableForms) {
  AnalysisOptions o;
  o.queue_full = 3;
  auto b = three_queued();
  b.cpu_op("aten::mm", 0, 5);
  const auto r = analyze(b.done(), o);
  const auto j = nlohmann::json::parse(analysis_to_json(r));
  const auto& qs = j["gpu"]["queue_series"];
  EXPECT_EQ(qs["threshold"], 3);
  EXPECT_EQ(qs["point_fields"], nlohmann::json::array({"t_ns", "depth", "pending"}));
  ASSERT_EQ(qs["streams"].size(), 1u);
  EXPECT_EQ(qs["streams"][0]["blocked_ns"], 8);
  EXPECT_EQ(qs["streams"][0]["points"][3], nlohmann::json::array({10, 3, 2}));
  EXPECT_EQ(j["gpu"]["aten_op_kernels"]["groups"][0]["kernels"], "k -> k -> k");
  const std::string csv = analysis_to_csv(r);
  EXPECT_NE(csv.find("queue_point,device 0 stream 7,3,pending,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("queue_blocked,device 0 stream 7,0,blocked_ns,8,"), std::string::npos);
  EXPECT_NE(csv.find("aten_op,aten::mm,0,kernels,k -> k -> k,"), std::string::npos);
  std::ostringstream table;
  print_analysis_table(r, table);
  EXPECT_NE(table.str().find("blocked on a full queue (launched, not started >= 3): 8 ns"), std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("kernels per ATen op: 1 ops launched 3 kernels"), std::string::npos);
}

}  // namespace
}  // namespace syncscope
