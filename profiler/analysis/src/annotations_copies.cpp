// GPU time per annotation range and copy bandwidth by direction and host memory kind
// (definitions in syncscope/analysis/gpu_analyses.hpp).
#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "gpu_internal.hpp"

namespace syncscope::analysis_detail {

namespace {

// "ProfilerStep#12" -> "ProfilerStep#*": numbered instances of one marker are one row.
std::string group_name(std::string_view n) {
  std::size_t e = n.size();
  while (e > 0 && std::isdigit(static_cast<unsigned char>(n[e - 1]))) --e;
  if (e < n.size() && e > 0 && n[e - 1] == '#') return std::string(n.substr(0, e)) + "*";
  return std::string(n);
}

void annotations(const Trace& trace, const LaunchIndex& launches, GpuAnalyses& out) {
  struct Launch {
    std::int64_t pid, tid;
    Ns start;
    Ns gpu_ns;
  };
  std::vector<Launch> ls;
  ls.reserve(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  auto push = [&](const GpuActivity& g) {
    if (const ApiCall* c = launches.call(g.correlation))
      ls.push_back({c->pid, c->tid, c->start, std::max<Ns>(0, g.end - g.start)});
  };
  for (const auto& k : trace.kernels) push(k);
  for (const auto& m : trace.memcpys) push(m);
  for (const auto& m : trace.memsets) push(m);
  std::sort(ls.begin(), ls.end(), [](const Launch& a, const Launch& b) {
    return std::tie(a.pid, a.tid, a.start) < std::tie(b.pid, b.tid, b.start);
  });
  std::vector<Ns> prefix(ls.size() + 1, 0);
  for (std::size_t i = 0; i < ls.size(); ++i) prefix[i + 1] = prefix[i] + ls[i].gpu_ns;

  std::map<StringId, std::string> names;  // per interned name, its group
  std::map<std::string, AnnotationGpuTime> by;
  for (const auto& r : trace.ranges) {
    if (r.kind != RangeKind::UserAnnotation && r.kind != RangeKind::NvtxPushPop && r.kind != RangeKind::NvtxStartEnd)
      continue;
    auto lo = std::lower_bound(ls.begin(), ls.end(), std::make_tuple(r.pid, r.tid, r.start),
                               [](const Launch& l, const std::tuple<std::int64_t, std::int64_t, Ns>& k) {
                                 return std::tie(l.pid, l.tid, l.start) < k;
                               });
    auto hi = std::lower_bound(lo, ls.end(), std::make_tuple(r.pid, r.tid, r.end),
                               [](const Launch& l, const std::tuple<std::int64_t, std::int64_t, Ns>& k) {
                                 return std::tie(l.pid, l.tid, l.start) < k;
                               });
    auto [it, fresh] = names.try_emplace(r.name);
    if (fresh) it->second = group_name(trace.str(r.name));
    auto& a = by[it->second];
    a.name = it->second;
    ++a.count;
    a.host_ns += std::max<Ns>(0, r.end - r.start);
    const auto i0 = static_cast<std::size_t>(lo - ls.begin()), i1 = static_cast<std::size_t>(hi - ls.begin());
    a.gpu_ns += prefix[i1] - prefix[i0];
    a.activities += i1 - i0;
  }
  for (auto& [n, a] : by) out.annotations.push_back(std::move(a));
  std::stable_sort(out.annotations.begin(), out.annotations.end(),
                   [](const AnnotationGpuTime& x, const AnnotationGpuTime& y) { return x.gpu_ns > y.gpu_ns; });
  if (out.annotations.size() > kTopAnnotations) out.annotations.resize(kTopAnnotations);
}

void copies(const Trace& trace, GpuAnalyses& out) {
  std::map<std::pair<CopyKind, MemoryKind>, CopyBandwidth> by;
  for (const auto& m : trace.memcpys) {
    const MemoryKind host = m.kind == CopyKind::HtoD   ? m.src_kind
                            : m.kind == CopyKind::DtoH ? m.dst_kind
                                                       : MemoryKind::Device;
    auto& c = by[{m.kind, host}];
    c.kind = m.kind;
    c.host_memory = host;
    ++c.count;
    c.bytes += m.bytes;
    c.time_ns += std::max<Ns>(0, m.end - m.start);
  }
  for (auto& [k, c] : by) {
    c.gb_per_s = c.time_ns > 0 ? static_cast<double>(c.bytes) / static_cast<double>(c.time_ns) : 0.0;
    out.copies.push_back(c);
  }
}

}  // namespace

void annotations_and_copies(const Trace& trace, const LaunchIndex& launches, GpuAnalyses& out) {
  annotations(trace, launches, out);
  copies(trace, out);
}

}  // namespace syncscope::analysis_detail
