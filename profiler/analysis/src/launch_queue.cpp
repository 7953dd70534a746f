// Launch delay (launch call -> kernel start) and queue length per stream (definitions in
// syncscope/analysis/gpu_analyses.hpp).
#include <algorithm>
#include <map>

#include "gpu_internal.hpp"
#include "syncscope/trace/api_classes.hpp"

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
  // Per stream, when each activity entered the queue (its launch call's start; its own
  // start when the trace has no call) and when it left (its end). The area under the depth
  // curve is the sum of the time each spent queued or running, so the mean needs no sweep;
  // the maximum is one merge of the two sorted time lists.
  struct Times {
    std::vector<Ns> in, out;
    Ns first = 0, last = 0;
    long double area = 0;  // depth x ns
  };
  std::map<StreamKey, Times> per;
  auto push = [&](const GpuActivity& g) {
    const Ns l = launches.start(g.correlation);
    const Ns in = l == kNoLaunch ? g.start : std::min(l, g.end);
    auto& t = per[{g.device, g.stream}];
    if (t.in.empty() || in < t.first) t.first = in;
    if (t.in.empty() || g.end > t.last) t.last = g.end;
    t.in.push_back(in);
    t.out.push_back(g.end);
    t.area += static_cast<long double>(g.end - in);
  };
  for (const auto& k : trace.kernels) push(k);
  for (const auto& m : trace.memcpys) push(m);
  for (const auto& m : trace.memsets) push(m);
  for (auto& [key, t] : per) {
    // Records come sorted by start, so these are nearly sorted already.
    if (!std::is_sorted(t.in.begin(), t.in.end())) std::sort(t.in.begin(), t.in.end());
    if (!std::is_sorted(t.out.begin(), t.out.end())) std::sort(t.out.begin(), t.out.end());
    StreamQueue q;
    q.device = key.first;
    q.stream = key.second;
    std::int64_t depth = 0;
    std::size_t i = 0, o = 0;
    while (i < t.in.size()) {
      // All changes at one instant, then the depth: an activity leaving as another enters
      // does not count twice.
      const Ns now = std::min(t.in[i], o < t.out.size() ? t.out[o] : t.in[i]);
      for (; o < t.out.size() && t.out[o] == now; ++o) --depth;
      for (; i < t.in.size() && t.in[i] == now; ++i) ++depth;
      if (depth > 0 && static_cast<std::uint64_t>(depth) > q.max_depth) {
        q.max_depth = static_cast<std::uint64_t>(depth);
        q.max_at_ns = now;
      }
    }
    q.mean_depth = t.last > t.first ? static_cast<double>(t.area / static_cast<long double>(t.last - t.first)) : 0.0;
    out.queues.push_back(q);
  }
}

}  // namespace

void launch_delay_and_queues(const Trace& trace, const LaunchIndex& launches, GpuAnalyses& out) {
  launch_delay(trace, launches, out);
  queues(trace, launches, out);
}

}  // namespace syncscope::analysis_detail
