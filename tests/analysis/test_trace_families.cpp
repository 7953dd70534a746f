// One small fixture per family of traces we read (tests/fixtures/traces/families/ and the
// Kineto fixture), shaped like what each tool writes, read and analyzed. Expected figures
// are worked out by hand in the comment above each check (times in microseconds as the
// fixtures write them; the model holds nanoseconds).
#include <gtest/gtest.h>

#include <algorithm>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

constexpr Ns us(double v) { return static_cast<Ns>(v * 1000); }

AnalysisResult analyze_fixture(const std::string& name, const Trace** out = nullptr) {
  static std::map<std::string, Trace> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, read_trace(test::fixture(name))).first;
  if (out) *out = &it->second;
  return analyze(it->second);
}

bool has_warning(const AnalysisResult& r, std::string_view text) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// CUDA, Kineto >= 2022 (traces/kineto_all_categories.json). Host calls of thread 100/101:
// cudaLaunchKernel, cudaMemcpyAsync (record: HtoD pinned, not a sync), cuLaunchKernel,
// cudaStreamSynchronize [1130, 1155) -> the one sync point, blocked 25; cudaEventRecord,
// cudaStreamWaitEvent (1 stream wait). Its bubble: it returned at 1155, the last GPU
// activity ended at 1120 and none follows -> 0. No CPU op encloses it: cause = the API.
// GPU busy on device 0: kernels 20 + 10, copies 2 + 1 + 3, memset 0.75 = 36.75.
TEST(TraceFamilies, CudaKineto) {
  const auto r = analyze_fixture("traces/kineto_all_categories.json");
  EXPECT_EQ(r.totals.syncs.total, 1u);
  EXPECT_EQ(r.totals.syncs.blocked_ns, us(25));
  EXPECT_EQ(r.totals.syncs.bubble_ns, 0);
  EXPECT_EQ(r.totals.syncs.by_cause.at("cudaStreamSynchronize"), 1u);
  EXPECT_EQ(r.totals.syncs.stream_wait_events, 1u);
  EXPECT_EQ(r.totals.kernels, 2u);
  EXPECT_EQ(r.totals.gpu_busy_ns, us(36.75));
  EXPECT_EQ(r.steps.size(), 1u);
}

// Kineto of 2021 (families/kineto_2021.json: "Operator", "Runtime", "Kernel", "Memcpy",
// "Memset", lower-case "external id", GPU tids "stream 7", absolute microseconds). Relative
// to 1621401187223000: cudaMemcpyAsync [420, 450) whose record is DtoH into pageable memory,
// then cudaStreamSynchronize [460, 660) on the same thread -> one merged sync point, blocked
// 660 - 420 = 240, cause aten::item (outermost aten op). Bubble: at 660 nothing runs (the
// copy ended at 605), next activity the memset at 720 -> 115. GPU busy: kernel 300 + copy 5
// + memset 5 = 310. ProfilerStep#1 (an "Operator") is one step.
TEST(TraceFamilies, Kineto2021) {
  const Trace* t = nullptr;
  const auto r = analyze_fixture("traces/families/kineto_2021.json", &t);
  ASSERT_EQ(t->kernels.size(), 1u);
  ASSERT_EQ(t->memsets.size(), 1u);
  EXPECT_EQ(t->memsets[0].stream, 7);  // from the tid "stream 7"
  EXPECT_EQ(t->kernels[0].external_id, 2u);
  EXPECT_EQ(t->api_calls.size(), 4u);
  EXPECT_EQ(t->meta.unknown_categories.count("Kernel"), 0u);
  EXPECT_EQ(r.totals.syncs.total, 1u);
  ASSERT_EQ(r.sync_points.size(), 1u);
  EXPECT_TRUE(r.sync_points[0].merged_copy);
  EXPECT_EQ(r.sync_points[0].cause, "aten::item");
  EXPECT_EQ(r.totals.syncs.blocked_ns, us(240));
  EXPECT_EQ(r.totals.syncs.bubble_ns, us(115));
  EXPECT_EQ(r.totals.gpu_busy_ns, us(310));
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].name, "ProfilerStep#1");
  EXPECT_FALSE(has_warning(r, "ProfilerActivity.CUDA"));
}

// torch.compile (families/torch_compile.json): Inductor's Triton launch ranges are cpu_ops
// with "grid": "grid(100,)" (not read by a cpu_op: no warning, no rejection); kernels are
// launched by cuLaunchKernel. The .item(): cudaMemcpyAsync [5310, 5330) DtoH pageable +
// cudaStreamSynchronize [5335, 5360) -> one merged point, blocked 50, cause aten::item.
// Bubble: at 5360 nothing runs (copy ended 5352), next kernel at 5700 -> 348. GPU busy:
// 100 + 80 + 2 + 50 = 232.
TEST(TraceFamilies, TorchCompile) {
  const Trace* t = nullptr;
  const auto r = analyze_fixture("traces/families/torch_compile.json", &t);
  EXPECT_TRUE(t->meta.read_warnings.empty());
  EXPECT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->str(t->kernels[0].name), "triton_poi_fused_add_mul_0");
  EXPECT_EQ(t->kernels[0].grid[0], 100);
  EXPECT_EQ(r.totals.syncs.total, 1u);
  EXPECT_EQ(r.totals.syncs.by_cause.at("aten::item"), 1u);
  EXPECT_EQ(r.totals.syncs.blocked_ns, us(50));
  EXPECT_EQ(r.totals.syncs.bubble_ns, us(348));
  EXPECT_EQ(r.totals.gpu_busy_ns, us(232));
  EXPECT_EQ(r.totals.kernels, 3u);
  ASSERT_EQ(r.steps.size(), 1u);
}

// CUDA graphs (families/cuda_graph.json): one cudaGraphLaunch (correlation 300) whose three
// kernels and device-to-device copy carry that correlation; not a sync. The .item() copies
// into PINNED memory, so the sync point is cudaStreamSynchronize [245, 550) alone: blocked
// 305, cause aten::item. Bubble: at 550 nothing runs (the D2H copy ended 540), next
// activity the second graph's kernel at 620 -> 80. GPU busy: 100 + 150 + 20 + 10 + 5 + 80 =
// 365.
TEST(TraceFamilies, CudaGraphs) {
  const Trace* t = nullptr;
  const auto r = analyze_fixture("traces/families/cuda_graph.json", &t);
  EXPECT_EQ(std::count_if(t->kernels.begin(), t->kernels.end(), [](const Kernel& k) { return k.correlation == 300; }),
            3);
  EXPECT_EQ(r.totals.syncs.total, 1u);
  EXPECT_EQ(r.totals.syncs.by_api.at("cudaStreamSynchronize"), 1u);
  EXPECT_EQ(r.totals.syncs.by_cause.at("aten::item"), 1u);
  EXPECT_EQ(r.totals.syncs.blocked_ns, us(305));
  EXPECT_EQ(r.totals.syncs.bubble_ns, us(80));
  EXPECT_EQ(r.totals.gpu_busy_ns, us(365));
  EXPECT_EQ(r.totals.kernels, 4u);
  EXPECT_FALSE(has_warning(r, "memcpy calls were not counted"));
}

// ROCm (families/rocm_hip.json, shaped like PyTorch on ROCm 6.2: HIP calls under
// "cuda_runtime", streams as "0x0" text, hipMemcpyKind as "kind": "1", copy records "Memcpy
// HtoD (Host -> Device)"). Sync points: hipMemcpyWithStream [1020, 1290) (bubble: copy ended
// 1280, next 1330 -> 50) and [1310, 1400) (copy ended 1390, next kernel 1450 -> 60), both
// aten::copy_; hipDeviceSynchronize [1720, 1900) (kernel ended 1700, next 1950 -> 250).
// Blocked 270 + 90 + 180 = 540, bubble 360. hipStreamWaitEvent: 1 stream wait;
// hipEventQuery: nothing. GPU busy: 180 + 60 + 250 + 50 = 540. Rank 0 from distributedInfo.
TEST(TraceFamilies, Rocm) {
  const Trace* t = nullptr;
  const auto r = analyze_fixture("traces/families/rocm_hip.json", &t);
  EXPECT_TRUE(t->meta.read_warnings.empty());
  ASSERT_TRUE(t->meta.rank.has_value());
  EXPECT_EQ(*t->meta.rank, 0);
  EXPECT_EQ(r.totals.syncs.total, 3u);
  EXPECT_EQ(r.totals.syncs.by_api.at("hipMemcpyWithStream"), 2u);
  EXPECT_EQ(r.totals.syncs.by_api.at("hipDeviceSynchronize"), 1u);
  EXPECT_EQ(r.totals.syncs.by_cause.at("aten::copy_"), 2u);
  EXPECT_EQ(r.totals.syncs.blocked_ns, us(540));
  EXPECT_EQ(r.totals.syncs.bubble_ns, us(360));
  EXPECT_EQ(r.totals.syncs.stream_wait_events, 1u);
  EXPECT_EQ(r.totals.gpu_busy_ns, us(540));
  EXPECT_EQ(r.totals.h2d.copy_ns, us(240));
}

// syncscope's own writer: the CUDA fixture written and read back analyzes the same.
TEST(TraceFamilies, SyncscopeOwnRoundTrip) {
  const Trace* t = nullptr;
  const auto before = analyze_fixture("traces/kineto_all_categories.json", &t);
  const Trace back = parse_chrome_json(chrome_json_string(*t), "own.json");
  const auto after = analyze(back);
  EXPECT_EQ(after.totals.syncs.total, before.totals.syncs.total);
  EXPECT_EQ(after.totals.syncs.blocked_ns, before.totals.syncs.blocked_ns);
  EXPECT_EQ(after.totals.syncs.bubble_ns, before.totals.syncs.bubble_ns);
  EXPECT_EQ(after.totals.gpu_busy_ns, before.totals.gpu_busy_ns);
  EXPECT_EQ(back.meta.rank, t->meta.rank);
}

// Idle attribution (analysis/idle.hpp) on every family: busy and the four idle classes add up
// to the GPU window exactly, for the trace, each device and each stream, and the trace's GPU
// window is the sum of the devices' (first to last GPU activity).
TEST(TraceFamilies, IdleClassesSumToTheGpuWindowExactly) {
  for (const char* name :
       {"traces/kineto_all_categories.json", "traces/families/kineto_2021.json", "traces/families/torch_compile.json",
        "traces/families/cuda_graph.json", "traces/families/rocm_hip.json", "torch/item_loop_l8_h200.json.gz"}) {
    const auto r = analyze_fixture(name);
    auto sum = [](const IdleBreakdown& b) {
      return b.busy_ns + b.sync_bubble_ns + b.host_wait_ns + b.dependency_wait_ns + b.other_ns;
    };
    EXPECT_GT(r.totals.idle.window_ns, 0) << name;
    EXPECT_EQ(sum(r.totals.idle), r.totals.idle.window_ns) << name;
    EXPECT_EQ(r.totals.idle.busy_ns, r.totals.gpu_busy_ns) << name;
    Ns devices = 0;
    for (const auto& d : r.idle_by_device) {
      EXPECT_EQ(sum(d.idle), d.idle.window_ns) << name;
      EXPECT_EQ(d.idle.window_ns, d.last_ns - d.first_ns) << name;
      devices += d.idle.window_ns;
    }
    EXPECT_EQ(devices, r.totals.idle.window_ns) << name;
    for (const auto& s : r.idle_by_stream) EXPECT_EQ(sum(s.idle), s.idle.window_ns) << name << " stream " << s.stream;
    for (const auto& s : r.steps) EXPECT_EQ(sum(s.idle), s.idle.window_ns) << name << " " << s.name;
    for (const auto& l : r.layers) EXPECT_EQ(sum(l.idle), l.idle.window_ns) << name << " " << l.name;
  }
}

}  // namespace
}  // namespace syncscope
