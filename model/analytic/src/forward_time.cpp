#include "syncscope/model/forward_time.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace syncscope::model {

Estimate forward_time_estimate(const Trace& t, std::string_view range_name) {
  // Latest end of the GPU work of each correlation id.
  std::unordered_map<std::uint64_t, Ns> gpu_end;
  auto note = [&](std::uint64_t corr, Ns end) {
    if (corr == 0) return;
    auto [it, fresh] = gpu_end.emplace(corr, end);
    if (!fresh) it->second = std::max(it->second, end);
  };
  for (const auto& k : t.kernels) note(k.correlation, k.end);
  for (const auto& c : t.memcpys) note(c.correlation, c.end);
  for (const auto& m : t.memsets) note(m.correlation, m.end);
  std::vector<const ApiCall*> calls;
  calls.reserve(t.api_calls.size());
  for (const auto& a : t.api_calls) calls.push_back(&a);
  std::sort(calls.begin(), calls.end(), [](const ApiCall* a, const ApiCall* b) { return a->start < b->start; });
  std::vector<double> durations;
  for (const auto& r : t.ranges) {
    // Host ranges only: NVTX (our tracer, the simulator) or record_function (torch.profiler).
    const bool host =
        r.kind == RangeKind::NvtxPushPop || r.kind == RangeKind::NvtxStartEnd || r.kind == RangeKind::UserAnnotation;
    if (!host || t.str(r.name) != range_name || r.end < r.start) continue;
    Ns end = r.end;
    auto it =
        std::lower_bound(calls.begin(), calls.end(), r.start, [](const ApiCall* a, Ns s) { return a->start < s; });
    for (; it != calls.end() && (*it)->start < r.end; ++it) {
      const ApiCall& a = **it;
      if (r.pid >= 0 && a.pid >= 0 && (a.pid != r.pid || (r.tid >= 0 && a.tid >= 0 && a.tid != r.tid))) continue;
      if (auto g = gpu_end.find(a.correlation); g != gpu_end.end()) end = std::max(end, g->second);
    }
    durations.push_back(static_cast<double>(end - r.start));
  }
  Estimate e;
  if (durations.empty()) return e;
  std::sort(durations.begin(), durations.end());
  const std::size_t n = durations.size();
  e.value = n % 2 ? durations[n / 2] : 0.5 * (durations[n / 2 - 1] + durations[n / 2]);
  e.lo = durations.front();
  e.hi = durations.back();
  e.n = static_cast<int>(n);
  return e;
}

}  // namespace syncscope::model
