// Kernels (and GPU copies and memsets) by name and by class, with count, total, median,
// p90, min, max, mean and sample std of the durations (definitions in syncscope/analysis/gpu_analyses.hpp).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

#include "gpu_internal.hpp"

namespace syncscope {

KernelClass classify_kernel_name(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  auto has = [&](std::initializer_list<std::string_view> keys) {
    for (auto k : keys)
      if (n.find(k) != std::string::npos) return true;
    return false;
  };
  if (is_communication_kernel(name)) return KernelClass::Comm;
  if (has({"memcpy", "memset", "copy"})) return KernelClass::Copy;
  // Attention before GEMM: flash-attention and FMHA kernels are often cutlass-based.
  if (has({"flash", "fmha", "attention", "attn", "sdpa"})) return KernelClass::Attention;
  if (has({"gemm", "cutlass", "xmma", "nvjet", "cublas", "matmul", "wgmma", "triton_tem"})) return KernelClass::Gemm;
  if (has({"reduce", "reduction", "softmax", "norm", "scan", "sort", "topk", "bincount", "triton_red", "triton_per"}))
    return KernelClass::Reduce;
  if (has({"elementwise", "pointwise", "triton_poi", "fill", "where", "cat"})) return KernelClass::Elementwise;
  return KernelClass::Other;
}

std::string_view kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::Gemm: return "gemm";
    case KernelClass::Attention: return "attention";
    case KernelClass::Elementwise: return "elementwise";
    case KernelClass::Reduce: return "reduce";
    case KernelClass::Comm: return "comm";
    case KernelClass::Copy: return "copy";
    case KernelClass::Other: break;
  }
  return "other";
}

namespace analysis_detail {

DurationStats duration_stats(std::vector<Ns>& v) {
  DurationStats d;
  d.count = v.size();
  if (v.empty()) return d;
  for (Ns x : v) d.total_ns += x;
  const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
  d.min_ns = *lo_it;
  d.max_ns = *hi_it;
  // Mean and the sample standard deviation (ddof = 1: pandas' .std(), which HTA's kernel
  // breakdown uses; 0 for one value, as HTA fills pandas' NaN). Two passes over doubles:
  // deviations from the mean, not sum-of-squares minus square-of-sum, which loses every
  // digit for long kernels of nearly equal length.
  d.mean_ns = static_cast<double>(d.total_ns) / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (Ns x : v) ss += (static_cast<double>(x) - d.mean_ns) * (static_cast<double>(x) - d.mean_ns);
    d.std_ns = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  // Order statistics by selection, O(n), not a sort: the k-th value with nth_element, the
  // (k+1)-th as the minimum of what lies above it.
  auto pct = [&](double p) {
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
    const Ns a = v[lo];
    const Ns b = lo + 1 < v.size() ? *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end()) : a;
    return static_cast<double>(a) + (pos - static_cast<double>(lo)) * static_cast<double>(b - a);
  };
  d.median_ns = pct(0.5);
  d.p90_ns = pct(0.9);
  return d;
}

void kernel_breakdown(const Trace& trace, GpuAnalyses& out) {
  // Per interned kernel name its durations; copies and memsets under one name per direction.
  std::vector<std::int32_t> slot(trace.strings.size(), -1);
  std::vector<std::string> names;
  std::vector<std::vector<Ns>> durs;
  auto add = [&](const std::string& name, Ns d) {
    names.push_back(name);
    durs.push_back({d});
  };
  for (const auto& k : trace.kernels) {
    const Ns d = std::max<Ns>(0, k.end - k.start);
    if (k.name < slot.size() && slot[k.name] >= 0) {
      durs[static_cast<std::size_t>(slot[k.name])].push_back(d);
      continue;
    }
    if (k.name < slot.size()) slot[k.name] = static_cast<std::int32_t>(names.size());
    add(std::string(trace.str(k.name)), d);
  }
  std::array<std::int32_t, 7> copy_slot{-1, -1, -1, -1, -1, -1, -1};  // per CopyKind, then memset
  auto activity = [&](std::size_t key, const std::string& name, Ns d) {
    if (copy_slot[key] >= 0) {
      durs[static_cast<std::size_t>(copy_slot[key])].push_back(d);
    } else {
      copy_slot[key] = static_cast<std::int32_t>(names.size());
      add(name, d);
    }
  };
  for (const auto& m : trace.memcpys)
    activity(static_cast<std::size_t>(m.kind), "Memcpy " + std::string(kind_name(m.kind)),
             std::max<Ns>(0, m.end - m.start));
  for (const auto& m : trace.memsets) activity(6, "Memset", std::max<Ns>(0, m.end - m.start));

  std::array<std::vector<Ns>, kKernelClasses> by_class;
  std::vector<KernelGroup> groups;
  groups.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    KernelGroup g;
    g.name = std::move(names[i]);
    g.cls = classify_kernel_name(g.name);
    auto& c = by_class[static_cast<std::size_t>(g.cls)];
    c.insert(c.end(), durs[i].begin(), durs[i].end());
    g.stats = duration_stats(durs[i]);
    groups.push_back(std::move(g));
  }
  auto by_total = [](const KernelGroup& x, const KernelGroup& y) {
    return x.stats.total_ns != y.stats.total_ns ? x.stats.total_ns > y.stats.total_ns : x.name < y.name;
  };
  std::sort(groups.begin(), groups.end(), by_total);
  out.kernel_names = groups.size();
  if (groups.size() > kTopKernels) groups.resize(kTopKernels);
  out.by_name = std::move(groups);
  for (int c = 0; c < kKernelClasses; ++c) {
    if (by_class[static_cast<std::size_t>(c)].empty()) continue;
    KernelGroup g;
    g.cls = static_cast<KernelClass>(c);
    g.name = std::string(kernel_class_name(g.cls));
    g.stats = duration_stats(by_class[static_cast<std::size_t>(c)]);
    out.by_class.push_back(std::move(g));
  }
  std::sort(out.by_class.begin(), out.by_class.end(), by_total);
}

GpuAnalyses gpu_analyses(const Trace& trace, const std::vector<SyncPoint>& points, const LaunchIndex& launches) {
  GpuAnalyses g;
  kernel_breakdown(trace, g);
  launch_delay_and_queues(trace, launches, g);
  annotations_and_copies(trace, launches, g);
  gpu_annotation_breakdown(trace, g);
  rule_findings(trace, points, g);
  return g;
}

}  // namespace analysis_detail
}  // namespace syncscope
