#include "syncscope/model/analytic.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

const char* regime_name(Regime r) {
  switch (r) {
    case Regime::HostBound: return "host-bound";
    case Regime::GpuBound: return "gpu-bound";
    case Regime::Balanced: return "balanced";
    case Regime::Unknown: break;
  }
  return "unknown";
}

Regime classify_regime(double host_ns, double gpu_ns) {
  if (host_ns <= 0 && gpu_ns <= 0) return Regime::Unknown;
  if (host_ns > kRegimeBand * gpu_ns) return Regime::HostBound;
  if (gpu_ns > kRegimeBand * host_ns) return Regime::GpuBound;
  return Regime::Balanced;
}

double synced_time_ns(const std::vector<Segment>& segments, double round_trip_ns) {
  double t = 0;
  for (const auto& s : segments) {
    double p = std::clamp(s.serial_host_ns, 0.0, s.host_ns);
    t += p + std::max(s.host_ns - p, s.gpu_ns) + round_trip_ns;
  }
  return t;
}

double pipelined_time_ns(const std::vector<Segment>& segments, double round_trip_ns) {
  if (segments.empty()) return 0;
  double h = 0, d = 0;
  for (const auto& s : segments) {
    h += s.host_ns;
    d += s.gpu_ns;
  }
  return std::max(h, d) + round_trip_ns;
}

double sync_removal_saving_ns(const Segment& s, double round_trip_ns) {
  double p = std::clamp(s.serial_host_ns, 0.0, s.host_ns);
  return round_trip_ns + std::clamp(s.gpu_ns - s.host_ns + p, 0.0, p);
}

Segment segment_of_sync(double blocked_ns, double bubble_ns, double round_trip_ns) {
  Segment s;
  s.serial_host_ns = std::max(0.0, bubble_ns - round_trip_ns);
  s.host_ns = s.serial_host_ns;
  s.gpu_ns = std::max(0.0, blocked_ns - round_trip_ns);
  return s;
}

double packing_saving_published_ns(int layers, double s_ns) {
  SYNCSCOPE_INPUT_ERROR_IF(layers < 1, fmt::format("packing: layers must be >= 1 (got {})", layers));
  return static_cast<double>(layers - 1) * s_ns;
}

std::vector<bool> packing_mask_cache_misses(const std::vector<int>& visit_windows) {
  std::vector<bool> miss(visit_windows.size());
  for (std::size_t i = 0; i < visit_windows.size(); ++i) miss[i] = i == 0 || visit_windows[i] != visit_windows[i - 1];
  return miss;
}

double packing_saving_cached_ns(int layers, int rebuilds, double s_ns) {
  SYNCSCOPE_INPUT_ERROR_IF(layers < 1, fmt::format("packing: layers must be >= 1 (got {})", layers));
  SYNCSCOPE_INPUT_ERROR_IF(rebuilds < 1 || rebuilds > layers,
                           fmt::format("packing: the cached variant's rebuilds per step must be in [1, {}] (got {})",
                                       layers, rebuilds));
  return static_cast<double>(layers - rebuilds) * s_ns;
}

PackingTimes packing_segment(int layers, const PackingSegmentInputs& in) {
  SYNCSCOPE_INPUT_ERROR_IF(layers < 1, fmt::format("packing: layers must be >= 1 (got {})", layers));
  const double wh = std::clamp(in.rebuild_host_ns, 0.0, in.host_ns);
  const double wd = std::clamp(in.rebuild_gpu_ns, 0.0, in.gpu_ns);
  const double k = std::max(0, in.syncs_per_layer);
  const double layer = k * in.round_trip_ns + wh + std::max(in.host_ns - wh, in.gpu_ns);
  PackingTimes t;
  t.uncached_ns = layers * layer;
  const int m = std::clamp(in.cached_rebuilds, 1, layers);
  const double rest = layers - m;
  const double body_h = in.host_ns - wh, body_d = in.gpu_ns - wd;
  t.cached_ns = m * layer + std::max(rest * body_h, rest * body_d);
  t.saved_ns = t.uncached_ns - t.cached_ns;
  t.regime = classify_regime(body_h, body_d);
  return t;
}

PackingTimes packing_segment_device(int layers, const PackingSegmentInputs& in) {
  PackingTimes t = packing_segment(layers, in);
  const double wh = std::clamp(in.rebuild_host_ns, 0.0, in.host_ns);
  const double wd = std::clamp(in.rebuild_gpu_ns, 0.0, in.gpu_ns);
  const double body_h = in.host_ns - wh, body_d = in.gpu_ns - wd;
  t.cached_ns = std::max(layers * body_h, layers * body_d + wd);
  t.saved_ns = t.uncached_ns - t.cached_ns;
  t.regime = classify_regime(body_h, body_d);
  return t;
}

namespace {
void check_offload(int layers, double c, double g) {
  SYNCSCOPE_INPUT_ERROR_IF(layers < 1, fmt::format("offload: layers must be >= 1 (got {})", layers));
  SYNCSCOPE_INPUT_ERROR_IF(c < 0 || g < 0, "offload: copy and compute times must be >= 0");
}
}  // namespace

double offload_single_ns(int layers, double c, double g) {
  check_offload(layers, c, g);
  return layers * (c + g);
}

double offload_double_ns(int layers, double c, double g) {
  check_offload(layers, c, g);
  return c + (layers - 1) * std::max(c, g) + g;
}

double offload_saving_published_ns(int layers, double c, double g) {
  check_offload(layers, c, g);
  return (layers - 1) * std::min(c, g);
}

double offload_stage_ns(double c, double g, double sigma) {
  sigma = std::max(0.0, sigma);
  if (c >= g * (1 + sigma)) return c;
  return g + c * sigma / (1 + sigma);
}

double offload_double_slowed_ns(int layers, double c, double g, double sigma) {
  check_offload(layers, c, g);
  return c + (layers - 1) * offload_stage_ns(c, g, sigma) + g;
}

double offload_saving_slowed_ns(int layers, double c, double g, double sigma) {
  return offload_single_ns(layers, c, g) - offload_double_slowed_ns(layers, c, g, sigma);
}

RingTimeline offload_ring(const std::vector<double>& c, const std::vector<double>& g, int depth, double sigma) {
  SYNCSCOPE_INPUT_ERROR_IF(c.size() != g.size(),
                           fmt::format("offload ring: {} copy times but {} compute times", c.size(), g.size()));
  SYNCSCOPE_INPUT_ERROR_IF(depth < 0, fmt::format("offload ring: prefetch depth must be >= 0 (got {})", depth));
  sigma = std::max(0.0, sigma);
  const std::size_t n = c.size();
  RingTimeline t;
  t.copy_start.assign(n, 0);
  t.copy_end.assign(n, 0);
  t.compute_start.assign(n, 0);
  t.compute_end.assign(n, 0);
  std::size_t copies_scheduled = 0;
  // Copy i may start once copy i-1 is done and compute i-depth-1 (the last user of its
  // buffer) has finished; every compute it depends on precedes compute i-1.
  auto schedule_copy = [&](std::size_t i) {
    double start = i > 0 ? t.copy_end[i - 1] : 0.0;
    if (i >= static_cast<std::size_t>(depth) + 1) start = std::max(start, t.compute_end[i - depth - 1]);
    t.copy_start[i] = start;
    t.copy_end[i] = start + c[i];
  };
  for (std::size_t i = 0; i < n; ++i) {
    // Copies up to i+depth depend only on computes before i: schedule them first so the
    // compute below knows which copies run beside it.
    std::size_t last = std::min(n, i + static_cast<std::size_t>(depth) + 1);
    while (copies_scheduled < last) schedule_copy(copies_scheduled++);
    double start = std::max(i > 0 ? t.compute_end[i - 1] : 0.0, t.copy_end[i]);
    t.compute_start[i] = start;
    // Integrate progress: rate 1 with no copy running, 1/(1+sigma) while one runs.
    double remaining = g[i], now = start;
    if (sigma > 0) {
      // Copy intervals after `now` that may overlap (copies i+1..last-1; earlier ones ended
      // before copy i ended, i.e. before `start`).
      for (std::size_t j = i + 1; j < last && remaining > 0; ++j) {
        double cs = std::max(now, t.copy_start[j]), ce = t.copy_end[j];
        if (ce <= cs) continue;
        double free_run = cs - now;  // full-rate time before this copy starts
        if (free_run >= remaining) break;
        remaining -= free_run;
        now = cs;
        double slow_span = ce - cs;
        double slow_work = slow_span / (1 + sigma);
        if (slow_work >= remaining) {
          now += remaining * (1 + sigma);
          remaining = 0;
          break;
        }
        remaining -= slow_work;
        now = ce;
      }
    }
    t.compute_end[i] = now + remaining;
  }
  t.total_ns = n ? t.compute_end[n - 1] : 0.0;
  return t;
}

double offload_ring_ns(const std::vector<double>& c, const std::vector<double>& g, int depth, double sigma) {
  return offload_ring(c, g, depth, sigma).total_ns;
}

double moe_saving_sorted_ns(int experts, int moe_layers, int passes, double q, double kernel_delta, int syncs_left) {
  SYNCSCOPE_INPUT_ERROR_IF(experts < 1 || moe_layers < 0 || passes < 1,
                           "moe: need experts >= 1, moe layers >= 0, passes >= 1");
  SYNCSCOPE_INPUT_ERROR_IF(syncs_left < 0 || syncs_left > experts,
                           fmt::format("moe: syncs left per MoE call must be in 0..E ({}), got {}", experts,
                                       syncs_left));
  return static_cast<double>(moe_layers) * passes * (experts - syncs_left) * q + kernel_delta;
}

double moe_saving_device_ns(int experts, int moe_layers, int passes, double q, double kernel_delta) {
  SYNCSCOPE_INPUT_ERROR_IF(experts < 1 || moe_layers < 0 || passes < 1,
                           "moe: need experts >= 1, moe layers >= 0, passes >= 1");
  return static_cast<double>(moe_layers) * passes * experts * q + kernel_delta;
}

double moe_sorted_segment_saving_ns(int experts, double sync_saving_ns, double query_launches, double launch_ns,
                                    int syncs_left) {
  SYNCSCOPE_INPUT_ERROR_IF(experts < 1, "moe: need experts >= 1");
  SYNCSCOPE_INPUT_ERROR_IF(syncs_left < 0 || syncs_left > experts,
                           fmt::format("moe: syncs left per MoE call must be in 0..E ({}), got {}", experts,
                                       syncs_left));
  const double replaced = static_cast<double>(experts) * kMoeSortedLaunchesPerExpert + kMoeSortedLaunchesPerCall;
  return (experts - syncs_left) * sync_saving_ns + (query_launches - replaced) * launch_ns;
}

double speedup(double step_ns, double saved_ns) {
  SYNCSCOPE_INPUT_ERROR_IF(!(step_ns > 0), fmt::format("step time must be > 0 (got {} ns)", step_ns));
  SYNCSCOPE_INPUT_ERROR_IF(!(saved_ns < step_ns),
                           fmt::format("predicted saving {:.3f} ms is not smaller than the step time {:.3f} ms: "
                                       "check --step-ms and the per-layer inputs",
                                       saved_ns / 1e6, step_ns / 1e6));
  return step_ns / (step_ns - saved_ns);
}

}  // namespace syncscope::model
