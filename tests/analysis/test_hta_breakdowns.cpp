// The analyses HTA has beside ours (issue 38) on hand-built traces: per-kernel min/mean/std
// (HTA get_gpu_kernel_breakdown), GPU user annotations per name (HTA
// get_gpu_user_annotation_breakdown) and frequent kernel sequences (HTA
// get_frequent_cuda_kernel_sequences), and their JSON, CSV and table forms.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/csv.hpp"
#include "syncscope/reports/analysis_printers.hpp"
#include "trace_builder.hpp"

namespace syncscope {
namespace {

using test::TraceBuilder;

const KernelGroup* kernel(const AnalysisResult& r, std::string_view name) {
  for (const auto& k : r.gpu.by_name)
    if (k.name == name) return &k;
  return nullptr;
}

TEST(KernelStats, MinMeanAndSampleStdAsPandas) {
  // gemm: 10, 20, 30, 40 ns. Mean 25; deviations -15, -5, 5, 15: squares sum 500. Sample std
  // (ddof 1, pandas' .std(), HTA's) = sqrt(500 / 3) = 12.909944...; the population std would be
  // sqrt(125) = 11.18. One launch of "once": std 0 (HTA fills pandas' NaN with 0), min = max.
  TraceBuilder b;
  for (int i = 0; i < 4; ++i) b.kernel(0, 7, 100 * i, 100 * i + 10 * (i + 1)).name = b.t.intern("gemm");
  b.kernel(0, 7, 1000, 1007).name = b.t.intern("once");
  const auto r = analyze(b.done());
  const KernelGroup* g = kernel(r, "gemm");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->stats.min_ns, 10);
  EXPECT_EQ(g->stats.max_ns, 40);
  EXPECT_DOUBLE_EQ(g->stats.mean_ns, 25.0);
  EXPECT_NEAR(g->stats.std_ns, std::sqrt(500.0 / 3.0), 1e-9);
  const KernelGroup* once = kernel(r, "once");
  ASSERT_NE(once, nullptr);
  EXPECT_EQ(once->stats.min_ns, 7);
  EXPECT_EQ(once->stats.max_ns, 7);
  EXPECT_DOUBLE_EQ(once->stats.std_ns, 0.0);
}

TEST(KernelStats, StdOfLongNearlyEqualKernelsKeepsItsDigits) {
  // Three 1 s kernels differing by 1 ns: std exactly 1 ns. A one-pass sum of squares in
  // doubles (3e18 + ...) would lose the difference entirely.
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    const Ns start = Ns{2'000'000'000} * i;
    b.kernel(0, 7, start, start + 1'000'000'000 + i).name = b.t.intern("long");
  }
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.by_name.size(), 1u);
  EXPECT_DOUBLE_EQ(r.gpu.by_name[0].stats.std_ns, 1.0);
  EXPECT_DOUBLE_EQ(r.gpu.by_name[0].stats.mean_ns, 1'000'000'001.0);
}

Range& gpu_annotation(TraceBuilder& b, std::string_view name, Ns start, Ns end, std::int64_t stream) {
  Range& r = b.range(RangeKind::GpuUserAnnotation, name, start, end, -1, -1);
  r.device = 0;
  r.stream = stream;
  return r;
}

TEST(GpuAnnotations, PerNameStatsOverEveryRangeNestedToo) {
  // "fwd" on stream 7: 100 and 300 ns, on stream 9: 200 -> count 3, total 600, min 100, max
  // 300, mean 200, sample std 100, 2 streams. "attn" nested inside the first fwd: 50 ns. The
  // host annotation "fwd" (UserAnnotation) is not GPU time and does not count.
  TraceBuilder b;
  gpu_annotation(b, "fwd", 0, 100, 7);
  gpu_annotation(b, "attn", 10, 60, 7);
  gpu_annotation(b, "fwd", 200, 500, 7);
  gpu_annotation(b, "fwd", 0, 200, 9);
  b.annotation("fwd", 0, 10'000);
  b.kernel(0, 7, 0, 10);
  const auto r = analyze(b.done());
  ASSERT_EQ(r.gpu.gpu_annotations.size(), 2u);
  EXPECT_EQ(r.gpu.gpu_annotation_names, 2u);
  const auto& f = r.gpu.gpu_annotations[0];
  EXPECT_EQ(f.name, "fwd");
  EXPECT_EQ(f.stats.count, 3u);
  EXPECT_EQ(f.stats.total_ns, 600);
  EXPECT_EQ(f.stats.min_ns, 100);
  EXPECT_EQ(f.stats.max_ns, 300);
  EXPECT_DOUBLE_EQ(f.stats.mean_ns, 200.0);
  EXPECT_DOUBLE_EQ(f.stats.std_ns, 100.0);
  EXPECT_EQ(f.streams, 2u);
  EXPECT_EQ(r.gpu.gpu_annotations[1].name, "attn");
  EXPECT_EQ(r.gpu.gpu_annotations[1].stats.total_ns, 50);
}

TEST(GpuAnnotations, ManyNamesAreCappedAndCounted) {
  // 52 names, name i lasting i + 1 ns: the 50 longest are listed (largest first), 52 counted.
  TraceBuilder b;
  for (int i = 0; i < 52; ++i) gpu_annotation(b, "a" + std::to_string(i), 1000 * i, 1000 * i + i + 1, 7);
  const auto r = analyze(b.done());
  EXPECT_EQ(r.gpu.gpu_annotation_names, 52u);
  ASSERT_EQ(r.gpu.gpu_annotations.size(), kTopGpuAnnotations);
  EXPECT_EQ(r.gpu.gpu_annotations.front().name, "a51");
  EXPECT_EQ(r.gpu.gpu_annotations.back().name, "a2");
}

// One "aten::linear" on thread `tid` at t0 enclosing "aten::addmm"; addmm launches three
// activities: gemm on stream 7, then a copy DtoH on stream 7 and "bias" on stream 9, but the
// GPU runs bias (t0+50) before the copy (t0+60): the pattern is in GPU order.
// GPU time: gemm 20 + bias 5 + copy 10 = 35 ns; the linear lasts 100 ns.
void linear(TraceBuilder& b, Ns t0, std::uint64_t corr, std::int64_t tid = 1) {
  b.cpu_op("aten::linear", t0, t0 + 100, tid);
  b.cpu_op("aten::addmm", t0 + 5, t0 + 95, tid);
  b.api("cudaLaunchKernel", t0 + 10, t0 + 12, corr, tid);
  b.kernel(0, 7, t0 + 20, t0 + 40, corr).name = b.t.intern("gemm");
  b.api("cudaMemcpyAsync", t0 + 14, t0 + 16, corr + 1, tid);
  b.copy(CopyKind::DtoH, 0, 7, t0 + 60, t0 + 70, corr + 1);
  b.api("cudaLaunchKernel", t0 + 18, t0 + 20, corr + 2, tid);
  b.kernel(0, 9, t0 + 50, t0 + 55, corr + 2).name = b.t.intern("bias");
}

TEST(KernelSequences, TopLevelCpuOpsByDefaultInGpuOrder) {
  TraceBuilder b;
  linear(b, 0, 1);
  linear(b, 1000, 11);
  // Two kernels only: below the default min_pattern_len 3, not a root.
  b.cpu_op("aten::relu", 2000, 2100);
  b.api("cudaLaunchKernel", 2010, 2012, 21);
  b.kernel(0, 7, 2020, 2030, 21).name = b.t.intern("relu");
  b.api("cudaLaunchKernel", 2014, 2016, 22);
  b.kernel(0, 7, 2030, 2040, 22).name = b.t.intern("relu");
  const Trace t = b.done();
  const auto r = analyze(t);
  const KernelSequences& s = r.gpu.kernel_sequences;
  EXPECT_EQ(s.roots, 2u);
  EXPECT_EQ(s.patterns, 1u);
  ASSERT_EQ(s.top.size(), 1u);
  EXPECT_EQ(s.top[0].op, "aten::linear");  // the top-level op, not the addmm inside it
  EXPECT_EQ(s.top[0].kernels, (std::vector<std::string>{"gemm", "bias", "Memcpy DtoH"}));
  EXPECT_EQ(s.top[0].count, 2u);
  EXPECT_EQ(s.top[0].gpu_ns, 70);
  EXPECT_EQ(s.top[0].host_ns, 200);

  AnalysisOptions o;
  o.sequences.min_pattern_len = 2;  // now relu's two kernels count too
  const auto r2 = analyze(t, o);
  EXPECT_EQ(r2.gpu.kernel_sequences.roots, 3u);
  EXPECT_EQ(r2.gpu.kernel_sequences.patterns, 2u);
}

TEST(KernelSequences, OperatorNameTakesTheShallowestMatchesOnly) {
  // op "addmm": the addmm ranges (depth 1) are roots. op "a" matches linear (depth 0) and
  // addmm (depth 1): only the shallowest, linear, counts: no kernel twice.
  TraceBuilder b;
  linear(b, 0, 1);
  linear(b, 1000, 11);
  Trace t = b.done();
  AnalysisOptions o;
  o.sequences.op = "addmm";
  auto r = analyze(t, o);
  ASSERT_EQ(r.gpu.kernel_sequences.top.size(), 1u);
  EXPECT_EQ(r.gpu.kernel_sequences.top[0].op, "aten::addmm");
  EXPECT_EQ(r.gpu.kernel_sequences.top[0].count, 2u);
  EXPECT_EQ(r.gpu.kernel_sequences.top[0].host_ns, 180);
  o.sequences.op = "a";
  r = analyze(t, o);
  EXPECT_EQ(r.gpu.kernel_sequences.roots, 2u);
  ASSERT_EQ(r.gpu.kernel_sequences.top.size(), 1u);
  EXPECT_EQ(r.gpu.kernel_sequences.top[0].op, "aten::linear");
  o.sequences.op = "no such op";
  r = analyze(t, o);
  EXPECT_EQ(r.gpu.kernel_sequences.roots, 0u);
  EXPECT_TRUE(r.gpu.kernel_sequences.top.empty());
}

TEST(KernelSequences, OrderedByCountThenTextAndCappedAtTopK) {
  // Three linears on thread 1 (count 3), one on thread 2 whose gemm is named "a_gemm" (count
  // 1) and one with "z_gemm" (count 1): order linear|gemm.. (3), then linear|a_gemm.. before
  // linear|z_gemm.. (text). top_k 2 keeps two of the three patterns; patterns says 3.
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) linear(b, 1000 * i, 10 * static_cast<std::uint64_t>(i) + 1);
  linear(b, 5000, 101, 2);
  linear(b, 6000, 201, 2);
  b.t.kernels[b.t.kernels.size() - 4].name = b.t.intern("z_gemm");  // the 5000 linear's gemm
  b.t.kernels[b.t.kernels.size() - 2].name = b.t.intern("a_gemm");  // the 6000 linear's gemm
  AnalysisOptions o;
  o.sequences.top_k = 2;
  const auto r = analyze(b.done(), o);
  const auto& s = r.gpu.kernel_sequences;
  EXPECT_EQ(s.roots, 5u);
  EXPECT_EQ(s.patterns, 3u);
  ASSERT_EQ(s.top.size(), 2u);
  EXPECT_EQ(s.top[0].count, 3u);
  EXPECT_EQ(s.top[1].kernels.front(), "a_gemm");
}

TEST(KernelSequences, LaunchesOfAnotherThreadAreNotTheOpsKernels) {
  // The op on thread 1 spans the launches, but they were made on thread 2.
  TraceBuilder b;
  b.cpu_op("aten::linear", 0, 100, 1);
  for (std::uint64_t c = 1; c <= 3; ++c) {
    b.api("cudaLaunchKernel", static_cast<Ns>(10 * c), static_cast<Ns>(10 * c + 2), c, 2);
    b.kernel(0, 7, static_cast<Ns>(100 * c), static_cast<Ns>(100 * c + 5), c);
  }
  const auto r = analyze(b.done());
  EXPECT_EQ(r.gpu.kernel_sequences.roots, 0u);
}

AnalysisResult printed_sample() {
  TraceBuilder b;
  for (int i = 0; i < 4; ++i) linear(b, 1000 * i, 10 * static_cast<std::uint64_t>(i) + 1);
  for (int i = 0; i < 7; ++i) gpu_annotation(b, "ann" + std::to_string(i), 100 * i, 100 * i + 10 + i, 7);
  return analyze(b.done());
}

TEST(HtaBreakdownPrinters, JsonCarriesTheFigures) {
  const auto j = nlohmann::json::parse(analysis_to_json(printed_sample())).at("gpu");
  const auto& gemm = j.at("kernels_by_name").at(0);
  EXPECT_EQ(gemm.at("name"), "gemm");
  EXPECT_EQ(gemm.at("min_ns").get<Ns>(), 20);
  EXPECT_DOUBLE_EQ(gemm.at("std_ns").get<double>(), 0.0);
  EXPECT_EQ(j.at("gpu_annotation_names").get<int>(), 7);
  EXPECT_EQ(j.at("gpu_annotations").at(0).at("name"), "ann6");
  EXPECT_EQ(j.at("gpu_annotations").at(0).at("total_ns").get<Ns>(), 16);
  const auto& s = j.at("kernel_sequences");
  EXPECT_EQ(s.at("roots_rule"), "top-level cpu_op");
  EXPECT_EQ(s.at("min_pattern_len").get<int>(), 3);
  EXPECT_EQ(s.at("top").at(0).at("kernels"), (nlohmann::json{"gemm", "bias", "Memcpy DtoH"}));
  EXPECT_EQ(s.at("top").at(0).at("count").get<int>(), 4);
  EXPECT_EQ(s.at("top").at(0).at("gpu_ns").get<Ns>(), 140);
}

TEST(HtaBreakdownPrinters, CsvRowsParseBack) {
  const auto rows = csv_parse(analysis_to_csv(printed_sample()));
  int annotation_rows = 0;
  bool sequence = false;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 6u);
    if (row[0] == "gpu_annotation" && row[1] == "ann6" && row[3] == "total_ns") {
      EXPECT_EQ(row[4], "16");
    }
    if (row[0] == "gpu_annotation") ++annotation_rows;
    if (row[0] == "kernel_sequence" && row[3] == "kernels") {
      EXPECT_EQ(row[1], "aten::linear");
      EXPECT_EQ(row[4], "gemm|bias|Memcpy DtoH");
      sequence = true;
    }
  }
  EXPECT_EQ(annotation_rows, 7 * 9);
  EXPECT_TRUE(sequence);
}

TEST(HtaBreakdownPrinters, TableIsShortAndSaysWhatItLeftOut) {
  std::ostringstream out;
  print_analysis_table(printed_sample(), out);
  const std::string t = out.str();
  EXPECT_NE(t.find("GPU user annotations"), std::string::npos) << t;
  EXPECT_NE(t.find("... 2 more names"), std::string::npos) << t;  // 7 names, 5 shown
  EXPECT_NE(t.find("frequent kernel sequences (under top-level cpu_ops, >= 3 kernels): 1 patterns over 4 ops"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("4 x aten::linear: 3 kernels"), std::string::npos) << t;
  EXPECT_NE(t.find("gemm | bias | Memcpy DtoH"), std::string::npos) << t;
}

}  // namespace
}  // namespace syncscope
