// Launch delay (launch call -> kernel start) and queue length per stream (definitions in
// syncscope/analysis/gpu_analyses.hpp).
#include <algorithm>
#include <map>
#include <tuple>

#include "api_classes.hpp"
#include "gpu_internal.hpp"

namespace syncscope::analysis_detail {

namespace {

constexpr std::size_t kWorstCalls = 5;

using StreamKey = std::pair<std::int32_t, std::int64_t>;

void launch_delay(const Trace& trace, const LaunchIndex& launches, GpuAnalyses& out) {
  struct Delay {
    Ns delay;
    std::uint32_t kernel;
    const ApiCall* call;
  };
  std::map<StreamKey, std::vector<Delay>> per;
  for (std::size_t i = 0; i < trace.kernels.size(); ++i) {
    const Kernel& k = trace.kernels[i];
    const ApiCall* c = launches.call(k.correlation);
    if (!c) continue;
    per[{k.device, k.stream}].push_back({k.start - c->start, static_cast<std::uint32_t>(i), c});
  }
  for (auto& [key, v] : per) {
    StreamLaunchDelay s;
    s.device = key.first;
    s.stream = key.second;
    std::vector<Ns> d;
    d.reserve(v.size());
    for (const auto& x : v) d.push_back(x.delay);
    s.delay = duration_stats(d);
    const std::size_t n = std::min(kWorstCalls, v.size());
    std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), v.end(),
                      [](const Delay& x, const Delay& y) { return x.delay > y.delay; });
    for (std::size_t i = 0; i < n; ++i) {
      const Kernel& k = trace.kernels[v[i].kernel];
      LaunchDelayCall w;
      w.api = api_display_name(v[i].call->kind, trace.str(v[i].call->name), v[i].call->cbid);
      w.kernel = std::string(trace.str(k.name));
      w.launch_ns = v[i].call->start;
      w.start_ns = k.start;
      w.delay_ns = v[i].delay;
      w.correlation = k.correlation;
      s.worst.push_back(std::move(w));
    }
    out.launch_delay.push_back(std::move(s));
  }
}

void queues(const Trace& trace, const LaunchIndex& launches, GpuAnalyses& out) {
  // +1 at the launch call (the activity's own start when the trace has no call), -1 at its
  // end; per stream, in time order.
  struct Edge {
    std::int32_t device;
    std::int64_t stream;
    Ns t;
    int delta;
  };
  std::vector<Edge> edges;
  edges.reserve(2 * (trace.kernels.size() + trace.memcpys.size() + trace.memsets.size()));
  auto push = [&](const GpuActivity& g) {
    const Ns l = launches.start(g.correlation);
    const Ns in = l == kNoLaunch ? g.start : std::min(l, g.end);
    edges.push_back({g.device, g.stream, in, +1});
    edges.push_back({g.device, g.stream, g.end, -1});
  };
  for (const auto& k : trace.kernels) push(k);
  for (const auto& m : trace.memcpys) push(m);
  for (const auto& m : trace.memsets) push(m);
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.device, a.stream, a.t) < std::tie(b.device, b.stream, b.t);
  });
  for (std::size_t i = 0; i < edges.size();) {
    StreamQueue q;
    q.device = edges[i].device;
    q.stream = edges[i].stream;
    const Ns first = edges[i].t;
    Ns last = first;
    long double area = 0;  // depth x ns
    std::int64_t depth = 0;
    Ns prev = first;
    while (i < edges.size() && edges[i].device == q.device && edges[i].stream == q.stream) {
      const Ns t = edges[i].t;
      area += static_cast<long double>(depth) * static_cast<long double>(t - prev);
      for (; i < edges.size() && edges[i].device == q.device && edges[i].stream == q.stream && edges[i].t == t; ++i)
        depth += edges[i].delta;
      if (depth > 0 && static_cast<std::uint64_t>(depth) > q.max_depth) {
        q.max_depth = static_cast<std::uint64_t>(depth);
        q.max_at_ns = t;
      }
      prev = last = t;
    }
    q.mean_depth = last > first ? static_cast<double>(area / static_cast<long double>(last - first)) : 0.0;
    out.queues.push_back(q);
  }
}

}  // namespace

void launch_delay_and_queues(const Trace& trace, const LaunchIndex& launches, GpuAnalyses& out) {
  launch_delay(trace, launches, out);
  queues(trace, launches, out);
}

}  // namespace syncscope::analysis_detail
