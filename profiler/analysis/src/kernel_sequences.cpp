// Frequent kernel sequences under one host operator (definition in
// syncscope/analysis/kernel_sequences.hpp; HTA hta/analyzers/cuda_kernel_analysis.py,
// get_frequent_cuda_kernel_sequences).
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "gpu_internal.hpp"

namespace syncscope::analysis_detail {

namespace {

// One GPU activity with the host call that launched it. Names are ids: a kernel's StringId,
// or past the string table one id per copy kind and one for memsets (they have no name).
struct ThreadLaunch {
  std::int64_t pid, tid;
  Ns call_start;
  Ns gpu_start;
  Ns gpu_ns;
  std::uint32_t name;
};

std::vector<ThreadLaunch> launches_by_thread(const Trace& trace, const LaunchIndex& index) {
  const auto base = static_cast<std::uint32_t>(trace.strings.size());
  std::vector<ThreadLaunch> ls;
  ls.reserve(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  auto push = [&](const GpuActivity& g, std::uint32_t name) {
    if (const ApiCall* c = index.call(g.correlation))
      ls.push_back({c->pid, c->tid, c->start, g.start, std::max<Ns>(0, g.end - g.start), name});
  };
  for (const auto& k : trace.kernels) push(k, k.name);
  for (const auto& m : trace.memcpys) push(m, base + static_cast<std::uint32_t>(m.kind));
  for (const auto& m : trace.memsets) push(m, base + 6);
  std::sort(ls.begin(), ls.end(), [](const ThreadLaunch& a, const ThreadLaunch& b) {
    return std::tie(a.pid, a.tid, a.call_start, a.gpu_start) < std::tie(b.pid, b.tid, b.call_start, b.gpu_start);
  });
  return ls;
}

std::string activity_name(const Trace& trace, std::uint32_t id) {
  const auto base = static_cast<std::uint32_t>(trace.strings.size());
  if (id < base) return std::string(trace.str(id));
  if (id == base + 6) return "Memset";
  return "Memcpy " + std::string(kind_name(static_cast<CopyKind>(id - base)));  // as kernel_breakdown.cpp
}

bool is_host_range(const Range& r) { return r.kind != RangeKind::GpuUserAnnotation; }

// The roots: host ranges whose name contains `op` at the smallest depth among them; without
// `op`, the cpu_ops no other cpu_op of their thread encloses.
std::vector<const Range*> roots(const Trace& trace, const std::string& op) {
  std::vector<const Range*> out;
  if (op.empty()) {
    // Ranges are sorted by (start asc, end desc): one stack of open cpu_op ends per thread.
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Ns>> open;
    for (const auto& r : trace.ranges) {
      if (r.kind != RangeKind::CpuOp) continue;
      auto& stack = open[{r.pid, r.tid}];
      while (!stack.empty() && stack.back() <= r.start) stack.pop_back();
      if (stack.empty()) out.push_back(&r);
      stack.push_back(r.end);
    }
    return out;
  }
  std::vector<std::int8_t> matches(trace.strings.size(), -1);  // per name: -1 unknown, 0/1
  std::int32_t min_depth = std::numeric_limits<std::int32_t>::max();
  for (const auto& r : trace.ranges) {
    if (!is_host_range(r) || r.name >= matches.size()) continue;
    auto& m = matches[r.name];
    if (m < 0) m = trace.str(r.name).find(op) != std::string_view::npos ? 1 : 0;
    if (m == 0) continue;
    out.push_back(&r);
    min_depth = std::min(min_depth, r.depth);
  }
  std::erase_if(out, [&](const Range* r) { return r->depth != min_depth; });
  return out;
}

struct PatternTotals {
  std::uint64_t count = 0;
  Ns gpu_ns = 0;
  Ns host_ns = 0;
};

}  // namespace

KernelSequences kernel_sequences(const Trace& trace, const LaunchIndex& index, const KernelSequenceOptions& options) {
  KernelSequences out;
  out.options = options;
  const std::vector<ThreadLaunch> ls = launches_by_thread(trace, index);
  std::map<std::vector<std::uint32_t>, PatternTotals> patterns;  // root name, then kernel names
  std::vector<const ThreadLaunch*> mine;
  for (const Range* r : roots(trace, options.op)) {
    auto key_of = [](const ThreadLaunch& l) { return std::tie(l.pid, l.tid, l.call_start); };
    auto lo = std::lower_bound(ls.begin(), ls.end(), std::make_tuple(r->pid, r->tid, r->start),
                               [&](const ThreadLaunch& l, const auto& k) { return key_of(l) < k; });
    auto hi = std::lower_bound(lo, ls.end(), std::make_tuple(r->pid, r->tid, r->end),
                               [&](const ThreadLaunch& l, const auto& k) { return key_of(l) < k; });
    if (static_cast<std::size_t>(hi - lo) < options.min_pattern_len) continue;
    mine.clear();
    for (auto it = lo; it != hi; ++it) mine.push_back(&*it);
    // In the order the GPU ran them (HTA sorts the subtree's kernels by ts); launch order on ties.
    std::stable_sort(mine.begin(), mine.end(),
                     [](const ThreadLaunch* a, const ThreadLaunch* b) { return a->gpu_start < b->gpu_start; });
    std::vector<std::uint32_t> key;
    key.reserve(mine.size() + 1);
    key.push_back(r->name);
    Ns gpu = 0;
    for (const ThreadLaunch* l : mine) {
      key.push_back(l->name);
      gpu += l->gpu_ns;
    }
    auto& p = patterns[key];
    ++p.count;
    p.gpu_ns += gpu;
    p.host_ns += std::max<Ns>(0, r->end - r->start);
    ++out.roots;
  }
  out.patterns = patterns.size();
  std::vector<std::pair<std::string, KernelSequence>> all;  // ('|'-joined text, sequence)
  all.reserve(patterns.size());
  for (const auto& [key, totals] : patterns) {
    KernelSequence s;
    s.op = std::string(trace.str(key.front()));
    std::string text = s.op;
    for (std::size_t i = 1; i < key.size(); ++i) {
      s.kernels.push_back(activity_name(trace, key[i]));
      text += "|" + s.kernels.back();
    }
    s.count = totals.count;
    s.gpu_ns = totals.gpu_ns;
    s.host_ns = totals.host_ns;
    all.emplace_back(std::move(text), std::move(s));
  }
  // HTA's order: count descending, then the pattern's text ascending.
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.second.count != b.second.count ? a.second.count > b.second.count : a.first < b.first;
  });
  for (std::size_t i = 0; i < std::min(options.top_k, all.size()); ++i) out.top.push_back(std::move(all[i].second));
  return out;
}

}  // namespace syncscope::analysis_detail
