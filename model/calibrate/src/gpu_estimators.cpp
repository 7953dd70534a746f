// The GPU side of calibrate --from-trace: launch calls, launch latency, the sync round trip,
// copy rates, kernel durations; and the statistics every estimator shares.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "trace_estimators.hpp"

namespace syncscope::calibrate::calib {

namespace {

constexpr std::uint64_t kRateMinBytes = 256u << 10;   // a copy's rate means something from here
constexpr std::uint64_t kSmallCopyBytes = 64u << 10;  // below: a copy's fixed cost dominates

struct Activity {
  std::int32_t device = -1;
  std::int64_t stream = -1;
  Ns start = 0, end = 0;
  std::uint64_t correlation = 0;
  bool copy = false;
};

std::string host_kind(MemoryKind k) {
  switch (k) {
    case MemoryKind::Pinned: return "pinned";
    case MemoryKind::Pageable: return "pageable";
    default: return "";
  }
}

}  // namespace

std::vector<FitWindow> fit_windows(const AnalysisResult& an, const Trace& trace, int max_steps, double warmup_factor,
                                   std::vector<std::string>& skipped) {
  std::vector<double> durations;
  for (const auto& s : an.steps) durations.push_back(static_cast<double>(s.duration_ns));
  const double limit = durations.size() >= 2 && warmup_factor > 0 ? warmup_factor * model::quantile(durations, 0.5) : 0;
  std::vector<FitWindow> w;
  for (const auto& s : an.steps) {
    if (max_steps > 0 && static_cast<int>(w.size()) >= max_steps) break;
    if (limit > 0 && static_cast<double>(s.duration_ns) > limit) {
      skipped.push_back(s.name);
      continue;
    }
    std::int64_t tid = -1;
    for (const auto& r : trace.ranges)
      if (r.start == s.start && r.end == s.end && trace.str(r.name) == s.name) tid = r.tid;
    w.push_back({s.start, s.end, tid});
  }
  if (w.empty()) {
    const auto [a, b] = trace.time_span();
    w.push_back({a, b + 1, -1});
  }
  return w;
}

void collect_gpu_samples(const Trace& trace, const AnalysisResult& an, const std::vector<FitWindow>& windows,
                         Samples& out) {
  auto inside = [&](Ns t) {
    for (const auto& w : windows)
      if (w.start <= t && t < w.end) return true;
    return false;
  };
  // Every GPU activity, and the launch call behind each (by correlation id).
  std::vector<Activity> acts;
  for (const auto& k : trace.kernels) acts.push_back({k.device, k.stream, k.start, k.end, k.correlation, false});
  for (const auto& m : trace.memcpys) acts.push_back({m.device, m.stream, m.start, m.end, m.correlation, true});
  for (const auto& m : trace.memsets) acts.push_back({m.device, m.stream, m.start, m.end, m.correlation, false});
  std::unordered_map<std::uint64_t, const ApiCall*> call_of;
  for (const auto& a : trace.api_calls)
    if (a.correlation) call_of.emplace(a.correlation, &a);
  auto launched_at = [&](const Activity& x) {
    auto it = call_of.find(x.correlation);
    return x.correlation && it != call_of.end() ? it->second->start : x.start;
  };

  // Launch calls: API calls that started GPU work, outside sync points (a blocking copy's
  // call is a wait, not a launch cost).
  {
    std::vector<std::pair<Ns, Ns>> blocked;
    for (const auto& s : an.sync_points) blocked.emplace_back(s.start, s.end);
    std::sort(blocked.begin(), blocked.end());
    auto in_sync = [&](const ApiCall& a) {
      auto it =
          std::upper_bound(blocked.begin(), blocked.end(), std::make_pair(a.start, std::numeric_limits<Ns>::max()));
      return it != blocked.begin() && std::prev(it)->second >= a.end;
    };
    std::unordered_map<std::uint64_t, int> launched;
    for (const auto& x : acts)
      if (x.correlation) launched[x.correlation]++;
    for (const auto& a : trace.api_calls)
      if (a.correlation && launched.count(a.correlation) && inside(a.start) && !in_sync(a))
        out.launch_call_ns[std::string(trace.str(a.name))].push_back(static_cast<double>(a.end - a.start));
  }

  // Latency: launch call start -> GPU start, for work whose stream was idle at the call.
  std::map<std::pair<std::int32_t, std::int64_t>, std::vector<const Activity*>> by_stream;
  for (const auto& x : acts) by_stream[{x.device, x.stream}].push_back(&x);
  for (auto& [key, v] : by_stream) {
    std::sort(v.begin(), v.end(), [](const Activity* a, const Activity* b) { return a->start < b->start; });
    Ns prev_end = std::numeric_limits<Ns>::min();
    for (const auto* x : v) {
      auto it = call_of.find(x->correlation);
      if (x->correlation && it != call_of.end() && inside(it->second->start) && prev_end <= it->second->start &&
          x->start >= it->second->start)
        (x->copy ? out.copy_latency_ns : out.latency_ns).push_back(static_cast<double>(x->start - it->second->start));
      prev_end = std::max(prev_end, x->end);
    }
  }

  // Round trip: sync return - end of the last GPU activity it waited for (its stream, or
  // its device for a device-wide sync), over syncs whose wait that activity ended inside.
  {
    std::map<std::pair<std::int32_t, std::int64_t>, std::vector<Ns>> ends;  // stream -1: device-wide
    for (const auto& x : acts) {
      ends[{x.device, x.stream}].push_back(x.end);
      ends[{x.device, -1}].push_back(x.end);
    }
    for (auto& [k, v] : ends) std::sort(v.begin(), v.end());
    for (const auto& s : an.sync_points) {
      if (!inside(s.start)) continue;
      ++out.syncs;
      auto it = ends.find({s.device, s.stream});
      if (it == ends.end()) it = ends.find({s.device, -1});
      if (it == ends.end()) continue;
      auto e = std::upper_bound(it->second.begin(), it->second.end(), s.end);
      if (e == it->second.begin() || *std::prev(e) <= s.start) {
        ++out.syncs_idle;
        continue;
      }
      out.round_trip_ns.push_back(static_cast<double>(s.end - *std::prev(e)));
    }
  }

  // Copies: rates by direction and host memory kind; small copies' fixed duration.
  for (const auto& m : trace.memcpys) {
    const Activity x{m.device, m.stream, m.start, m.end, m.correlation, true};
    if (!inside(launched_at(x)) || m.end <= m.start) continue;
    const double ns = static_cast<double>(m.end - m.start);
    std::string key;
    if (m.kind == CopyKind::HtoD && !host_kind(m.src_kind).empty()) key = "h2d_" + host_kind(m.src_kind);
    else if (m.kind == CopyKind::DtoH && !host_kind(m.dst_kind).empty()) key = "d2h_" + host_kind(m.dst_kind);
    else if (m.kind == CopyKind::DtoD) key = "d2d";
    if (m.bytes >= kRateMinBytes && !key.empty()) out.copies[key].push_back({static_cast<double>(m.bytes), ns});
    if (m.bytes < kSmallCopyBytes && (m.kind == CopyKind::HtoD || m.kind == CopyKind::DtoH))
      out.small_copy_ns.push_back(ns);
  }
  for (const auto& k : trace.kernels) {
    const Activity x{k.device, k.stream, k.start, k.end, k.correlation, false};
    if (!inside(launched_at(x)) || k.end <= k.start) continue;
    out.kernels[kernel_key(trace.str(k.name))].push_back(static_cast<double>(k.end - k.start));
  }
  for (const auto& x : acts) out.gpu_records += inside(launched_at(x)) ? 1 : 0;
}

// ---- statistics ----

model::Interval median_ci(const std::vector<double>& v, int bootstrap, std::uint64_t seed) {
  return quantile_ci(v, 0.5, bootstrap, seed);
}

model::Interval quantile_ci(const std::vector<double>& v, double q, int bootstrap, std::uint64_t seed) {
  if (v.empty()) return {};
  const double centre = model::quantile(v, q);
  if (v.size() < 2 || bootstrap < 2) return model::Interval::exact(centre);
  model::Rng rng(seed);
  std::vector<double> draws, r(v.size());
  draws.reserve(static_cast<std::size_t>(bootstrap));
  for (int b = 0; b < bootstrap; ++b) {
    for (auto& x : r) x = v[rng.index(v.size())];
    draws.push_back(model::quantile(r, q));
  }
  const double tail = (1 - model::kIntervalLevel) / 2;
  return {centre, std::min(centre, model::quantile(draws, tail)), std::max(centre, model::quantile(draws, 1 - tail))};
}

std::int64_t total_count(const std::map<std::string, std::vector<double>>& groups) {
  std::int64_t n = 0;
  for (const auto& [k, v] : groups) n += static_cast<std::int64_t>(v.size());
  return n;
}

model::Interval grouped_median_mean(const std::map<std::string, std::vector<double>>& groups, int bootstrap,
                                    std::uint64_t seed) {
  const double n = static_cast<double>(total_count(groups));
  if (n == 0) return {};
  auto estimate = [&](const auto& median_of) {
    double s = 0;
    for (const auto& [k, v] : groups)
      if (!v.empty()) s += static_cast<double>(v.size()) * median_of(v);
    return s / n;
  };
  const double centre = estimate([](const std::vector<double>& v) { return model::quantile(v, 0.5); });
  if (bootstrap < 2) return model::Interval::exact(centre);
  model::Rng rng(seed);
  std::vector<double> draws;
  std::vector<double> r;
  for (int b = 0; b < bootstrap; ++b)
    draws.push_back(estimate([&](const std::vector<double>& v) {
      r.resize(v.size());
      for (auto& x : r) x = v[rng.index(v.size())];
      return model::quantile(r, 0.5);
    }));
  const double tail = (1 - model::kIntervalLevel) / 2;
  return {centre, std::min(centre, model::quantile(draws, tail)), std::max(centre, model::quantile(draws, 1 - tail))};
}

model::Interval rate_ci(const std::vector<CopySample>& v, int bootstrap, std::uint64_t seed) {
  auto rate = [](const auto& get, std::size_t n) {
    double bytes = 0, ns = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const CopySample& c = get(i);
      bytes += c.bytes;
      ns += c.ns;
    }
    return ns > 0 ? bytes / ns * 1e9 : 0.0;
  };
  if (v.empty()) return {};
  const double centre = rate([&](std::size_t i) -> const CopySample& { return v[i]; }, v.size());
  if (v.size() < 2 || bootstrap < 2) return model::Interval::exact(centre);
  model::Rng rng(seed);
  std::vector<double> draws;
  for (int b = 0; b < bootstrap; ++b)
    draws.push_back(rate([&](std::size_t) -> const CopySample& { return v[rng.index(v.size())]; }, v.size()));
  const double tail = (1 - model::kIntervalLevel) / 2;
  return {centre, std::min(centre, model::quantile(draws, tail)), std::max(centre, model::quantile(draws, 1 - tail))};
}

}  // namespace syncscope::calibrate::calib
