// The offload fix's closed forms and predictions (closed_form.hpp).
#include "syncscope/fixes/offload/closed_form.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes::offload {

using namespace syncscope::model;  // the segments, speedup and interval propagation

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

FixPrediction predict_offload(const OffloadParams& p, const std::string& variant,
                              const std::optional<Interval>& step_ns, const PropagationOptions& prop) {
  SYNCSCOPE_INPUT_ERROR_IF(p.layers < 1, fmt::format("offload: --layers must be >= 1 (got {})", p.layers));
  SYNCSCOPE_INPUT_ERROR_IF(variant != "double" && variant != "prefetch",
                           fmt::format("offload: variant must be double or prefetch (got '{}')", variant));
  check_interval(p.copy_ns, "offload: copy time c");
  check_interval(p.compute_ns, "offload: compute time g");
  check_interval(p.slowdown, "offload: overlap slowdown sigma");
  const int depth = variant == "double" ? 1 : p.prefetch_depth;
  SYNCSCOPE_INPUT_ERROR_IF(variant == "prefetch" && depth < 2,
                           fmt::format("offload prefetch: depth must be >= 2 (got {}); depth 1 is double buffering",
                                       depth));
  const bool per_layer = !p.copy_per_layer_ns.empty();
  if (per_layer) {
    SYNCSCOPE_INPUT_ERROR_IF(p.copy_per_layer_ns.size() != p.compute_per_layer_ns.size() ||
                                 static_cast<int>(p.copy_per_layer_ns.size()) != p.layers,
                             "offload: per-layer copy and compute lists must both have one entry per layer");
  }
  FixPrediction f;
  f.fix = "offload";
  f.variant = variant;
  const int L = p.layers;
  f.parameters["L"] = Interval::exact(L);
  f.parameters["c_ns"] = p.copy_ns;
  f.parameters["g_ns"] = p.compute_ns;
  f.parameters["sigma"] = p.slowdown;
  f.parameters["prefetch_depth"] = Interval::exact(depth);
  if (p.unified_memory) {
    f.applicable = false;
    f.reason =
        "unified-memory GPU (GB10 / DGX Spark, APUs): the reload is not a PCIe copy that can hide under "
        "compute; double buffering made steps ~2.15x slower on one APU and is off by default there "
        "(unsloth-zoo PR 928, docs/sources.md#offload-double-buffer)";
    f.saving_ns = Interval::exact(0);
    f.formula = "not applicable";
    return f;
  }
  // Per-layer arrays scale with c/c0 and g/g0 so their intervals propagate.
  const double c0 = p.copy_ns.value, g0 = p.compute_ns.value;
  auto arrays = [&](double c, double g, std::vector<double>& ca, std::vector<double>& ga) {
    ca.assign(static_cast<std::size_t>(L), c);
    ga.assign(static_cast<std::size_t>(L), g);
    if (per_layer) {
      for (int i = 0; i < L; ++i) {
        ca[i] = c0 > 0 ? p.copy_per_layer_ns[i] * c / c0 : p.copy_per_layer_ns[i];
        ga[i] = g0 > 0 ? p.compute_per_layer_ns[i] * g / g0 : p.compute_per_layer_ns[i];
      }
    }
  };
  // The host bound: the host issues each layer's backward (its recompute, the reload, the
  // backward launches) in h, and no buffering lets a layer finish before the host has
  // issued it. A variant's backward then takes max(L*h, its ring time): with h >= c + g (an
  // eager host, every layer host-bound) single buffering already hides the reload under host
  // time and nothing is saved; with h = 0 it is the ring alone. L*h against the ring's total
  // (not per layer) is exact for constant per-layer times and, with varying ones, lets a
  // host-bound layer absorb a device-bound neighbour's excess, as a host running ahead of a
  // GPU queue does.
  const bool host_bound_known = p.host_ns.has_value();
  if (host_bound_known) {
    check_interval(*p.host_ns, "offload: host issue time per layer h");
    SYNCSCOPE_INPUT_ERROR_IF(p.host_ns->lo < 0,
                             fmt::format("offload: host issue time per layer h must be >= 0 (got {})", p.host_ns->lo));
  }
  auto saving = [&](std::span<const double> x) {
    std::vector<double> ca, ga;
    arrays(x[0], x[1], ca, ga);
    const double host = host_bound_known ? L * x[3] : 0;
    return std::max(host, offload_ring_ns(ca, ga, 0, 0)) - std::max(host, offload_ring_ns(ca, ga, depth, x[2]));
  };
  f.saving_ns = propagate({p.copy_ns, p.compute_ns, p.slowdown, p.host_ns.value_or(Interval::exact(0))}, saving, prop);
  f.formula = depth == 1 ? "(L-1)(c + g - stage(c, g, sigma)); sigma = 0: (L-1)*min(c,g)"
                         : fmt::format("ring of {} buffers (prefetch depth {}), event recurrence", depth + 1, depth);
  if (per_layer) f.formula += " over per-layer c_i, g_i";
  if (host_bound_known) {
    f.parameters["h_ns"] = *p.host_ns;
    f.formula = fmt::format("max(L*h, single) - max(L*h, {})", depth == 1 ? "double" : "ring");
  }
  Interval plain = propagate(
      {p.copy_ns, p.compute_ns}, [L](std::span<const double> x) { return offload_saving_published_ns(L, x[0], x[1]); },
      prop);
  f.alternatives["published (L-1)*min(c,g)"] = plain;
  if (depth == 1 && !per_layer) {
    f.alternatives["closed form with slowdown"] = propagate(
        {p.copy_ns, p.compute_ns, p.slowdown},
        [L](std::span<const double> x) { return offload_saving_slowed_ns(L, x[0], x[1], x[2]); }, prop);
  }
  const double sigma = p.slowdown.value;
  f.regime = c0 >= g0 * (1 + sigma) ? "copy-bound" : "compute-bound";
  const bool host_bound = host_bound_known && p.host_ns->value >= c0 + g0;
  if (host_bound) {
    f.regime = "host-bound";
    f.notes.push_back(fmt::format(
        "host-bound: the host's issue time per layer h = {:.3f} ms is at least c + g = {:.3f} ms, so the reload "
        "already hides under host time with one buffer",
        p.host_ns->value / 1e6, (c0 + g0) / 1e6));
  }
  if (c0 > 0) {
    f.parameters["hidden_reloads"] = propagate(
        {f.saving_ns, p.copy_ns}, [](std::span<const double> x) { return x[1] > 0 ? x[0] / x[1] : std::nan(""); },
        prop);
  }
  if (sigma == 0)
    f.notes.push_back(
        "sigma = 0 assumes overlap is free; kernels that share memory bandwidth with a running copy "
        "slow down (fit sigma from traces or `syncscope calibrate`; the B200 figures imply ~0.15)");
  if (f.regime == "copy-bound" && !host_bound)
    f.notes.push_back(
        "copy-bound: c >= g(1+sigma), so the saving is limited by compute (L-1)*g; a deeper ring "
        "helps only when c and g vary per layer");
  attach_speedup(f, step_ns, prop);
  return f;
}

}  // namespace syncscope::fixes::offload
