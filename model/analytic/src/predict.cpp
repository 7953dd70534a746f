#include "syncscope/model/predict.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

namespace {

using json = nlohmann::ordered_json;

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

void attach_speedup(FixPrediction& f, const std::optional<Interval>& step_ns, const PropagationOptions& prop) {
  if (!step_ns) return;
  check_interval(*step_ns, "step time");
  f.step_time_ns = *step_ns;
  if (!f.applicable) return;
  // Validate at the point values (a clear error); draws where S >= T are dropped.
  (void)speedup(step_ns->value, f.saving_ns.value);
  f.speedup = propagate(
      {*step_ns, f.saving_ns},
      [](std::span<const double> x) { return x[1] < x[0] && x[0] > 0 ? x[0] / (x[0] - x[1]) : std::nan(""); }, prop);
}

FixPrediction predict_packing(const PackingParams& p, const std::optional<Interval>& step_ns,
                              const PropagationOptions& prop, const std::string& variant) {
  SYNCSCOPE_INPUT_ERROR_IF(p.layers < 1, fmt::format("packing: --layers must be >= 1 (got {})", p.layers));
  SYNCSCOPE_INPUT_ERROR_IF(variant != "cached" && variant != "device",
                           fmt::format("packing: variant must be cached or device (got '{}')", variant));
  check_interval(p.s_ns, "packing: per-layer cost s");
  FixPrediction f;
  f.fix = "packing";
  f.variant = variant;
  f.formula = "(L-1)*s";
  const int L = p.layers;
  f.parameters["L"] = Interval::exact(L);
  f.parameters["s_ns"] = p.s_ns;
  Interval published = propagate(
      {p.s_ns}, [L](std::span<const double> x) { return packing_saving_published_ns(L, x[0]); }, prop);
  f.saving_ns = published;
  const bool segment = p.host_ns && p.gpu_ns && p.rebuild_host_ns && p.rebuild_gpu_ns && p.round_trip_ns;
  if (variant == "device") {
    if (!segment) {
      f.applicable = false;
      f.reason =
          "the device variant builds the metadata once per batch on the GPU: predicting it needs host and "
          "GPU time per layer, the rebuild's host/GPU split and the round trip (or a trace)";
      f.saving_ns = Interval::exact(0);
      f.formula = "segment model (inputs missing)";
      return f;
    }
    std::vector<Interval> in = {*p.host_ns, *p.gpu_ns, *p.rebuild_host_ns, *p.rebuild_gpu_ns, *p.round_trip_ns};
    const int k = p.syncs_per_layer;
    f.saving_ns = propagate(
        in,
        [L, k](std::span<const double> x) {
          return packing_segment_device(L, {x[0], x[1], x[2], x[3], x[4], k}).saved_ns;
        },
        prop);
    PackingTimes t = packing_segment_device(L, {in[0].value, in[1].value, in[2].value, in[3].value, in[4].value, k});
    f.regime = regime_name(t.regime);
    f.formula = "segment model: L(k r + w_h + max(H - w_h, D)) - max(L (H - w_h), L (D - w_d) + w_d)";
    const char* names[] = {"host_ns_per_layer", "gpu_ns_per_layer", "rebuild_host_ns", "rebuild_gpu_ns",
                           "round_trip_ns"};
    for (std::size_t i = 0; i < in.size(); ++i) f.parameters[names[i]] = in[i];
    f.notes.push_back(
        "built once per batch by one GPU kernel from lengths the host already knows: every layer's "
        "syncs and rebuild leave, and host and GPU overlap across all layers");
    attach_speedup(f, step_ns, prop);
    return f;
  }
  const int m = std::clamp(p.cached_rebuilds, 1, L);
  if (m > 1) {
    f.formula = "(L-m)*s";
    f.parameters["m"] = Interval::exact(m);
    f.saving_ns = propagate(
        {p.s_ns}, [L, m](std::span<const double> x) { return packing_saving_cached_ns(L, m, x[0]); }, prop);
    f.alternatives["published (L-1)*s"] = published;
    f.notes.push_back(fmt::format(
        "Unsloth's mask cache holds one (dtype, window) entry: the cached variant still rebuilds the mask in m = {} "
        "of the L = {} layers, at each window change{}",
        m, L, p.cached_rebuilds_why.empty() ? "" : " (" + p.cached_rebuilds_why + ")"));
  }
  if (segment) {
    std::vector<Interval> in = {*p.host_ns, *p.gpu_ns, *p.rebuild_host_ns, *p.rebuild_gpu_ns, *p.round_trip_ns};
    const char* names[] = {"host_ns_per_layer", "gpu_ns_per_layer", "rebuild_host_ns", "rebuild_gpu_ns",
                           "round_trip_ns"};
    for (std::size_t i = 0; i < in.size(); ++i) {
      check_interval(in[i], std::string("packing: ") + names[i]);
      f.parameters[names[i]] = in[i];
    }
    f.parameters["syncs_per_layer"] = Interval::exact(p.syncs_per_layer);
    const int k = p.syncs_per_layer;
    auto seg = [L, k, m](std::span<const double> x) {
      return packing_segment(L, {x[0], x[1], x[2], x[3], x[4], k, m}).saved_ns;
    };
    Interval seg_saving = propagate(in, seg, prop);
    PackingTimes t = packing_segment(L, {in[0].value, in[1].value, in[2].value, in[3].value, in[4].value, k, m});
    f.regime = regime_name(t.regime);
    if (m > 1) f.alternatives["(L-m)*s"] = f.saving_ns;
    f.alternatives["published (L-1)*s"] = published;
    f.alternatives["segment model"] = seg_saving;
    f.saving_ns = seg_saving;
    f.formula = m > 1 ? "segment model: L(k r + w_h + max(H - w_h, D)) - [m layers + (L-m) max(H - w_h, D - w_d)]"
                      : "segment model: L(k r + w_h + max(H - w_h, D)) - [first layer + (L-1) max(H - w_h, D - w_d)]";
    if (t.regime == Regime::HostBound && in[3].value <= 0) {
      f.notes.push_back(
          "host-bound after the fix: the host stays the bottleneck; the saving is the removed host "
          "rebuild work and round trips");
    } else if (t.regime == Regime::HostBound) {
      f.notes.push_back(fmt::format(
          "host-bound after the fix: the rebuild kernels ({} per layer) were already hidden under host time, so the "
          "published (L-1)*s over-predicts by up to (L-1)*w_d",
          ms(in[3].value)));
    } else if (t.regime == Regime::GpuBound) {
      f.notes.push_back(
          "gpu-bound after the fix: the segment model and (L-1)*s agree (the whole rebuild and its "
          "round trips leave the critical path)");
    } else {
      f.notes.push_back(
          "balanced: host and GPU time per layer are within 25% of each other; removing the syncs "
          "lets them overlap, and the segment model's saving sits between the two bounds");
    }
  } else {
    f.regime = "unknown";
    f.notes.push_back(
        "regime unknown: give host and GPU time per layer (or a trace) for the segment model; "
        "(L-1)*s assumes every layer's rebuild, with its syncs, is serial and equal");
  }
  attach_speedup(f, step_ns, prop);
  return f;
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

FixPrediction predict_moe(const MoeParams& p, const std::string& variant, const std::optional<Interval>& step_ns,
                          const PropagationOptions& prop) {
  SYNCSCOPE_INPUT_ERROR_IF(variant != "sorted" && variant != "device",
                           fmt::format("moe: variant must be sorted or device (got '{}')", variant));
  SYNCSCOPE_INPUT_ERROR_IF(p.experts < 1, fmt::format("moe: --experts must be >= 1 (got {})", p.experts));
  SYNCSCOPE_INPUT_ERROR_IF(p.moe_layers < 1, fmt::format("moe: --moe-layers must be >= 1 (got {})", p.moe_layers));
  SYNCSCOPE_INPUT_ERROR_IF(p.passes < 1, fmt::format("moe: --passes must be >= 1 (got {})", p.passes));
  check_interval(p.per_expert_ns, "moe: per-expert cost q");
  FixPrediction f;
  f.fix = "moe_routing";
  f.variant = variant;
  f.parameters["E"] = Interval::exact(p.experts);
  f.parameters["moe_layers"] = Interval::exact(p.moe_layers);
  f.parameters["passes"] = Interval::exact(p.passes);
  f.parameters["q_ns"] = p.per_expert_ns;
  f.parameters["kernel_delta_ns"] = p.kernel_delta_ns;
  const int E = p.experts, N = p.moe_layers, P = p.passes, K = p.sorted_syncs_left;
  SYNCSCOPE_INPUT_ERROR_IF(K < 0 || K > E,
                           fmt::format("moe: sorted syncs per call must be in 0..E ({}), got {}", E, K));
  if (variant == "sorted") {
    f.formula = fmt::format("N * passes * (E-{}) * q + kernel delta", p.sorted_syncs_left);
    f.parameters["sorted_syncs_per_call"] = Interval::exact(p.sorted_syncs_left);
    f.saving_ns = propagate(
        {p.per_expert_ns, p.kernel_delta_ns},
        [=](std::span<const double> x) { return moe_saving_sorted_ns(E, N, P, x[0], x[1], K); }, prop);
    if (p.sync_saving_ns && p.query_launches && p.query_launch_ns && p.calls_per_step > 0) {
      // Each removed sync saves its segment's share (min of the host's wait and the GPU's
      // idle), and the loop's per-expert queries go with their own time, less what sorted
      // launches instead; the q form charges only the bubbles.
      f.alternatives["published N*passes*(E-3)*q + kernel delta"] = f.saving_ns;
      f.parameters["sync_saving_ns"] = *p.sync_saving_ns;
      f.parameters["query_launches_per_call"] = *p.query_launches;
      f.parameters["query_launch_ns"] = *p.query_launch_ns;
      f.parameters["calls_per_step"] = Interval::exact(p.calls_per_step);
      const double calls = p.calls_per_step;
      f.formula = fmt::format("calls * ((E-{0}) * s_sync + (n_q - E*{1} - {2}) * h_q) + kernel delta", K,
                              kMoeSortedLaunchesPerExpert, kMoeSortedLaunchesPerCall);
      f.saving_ns = propagate(
          {*p.sync_saving_ns, *p.query_launches, *p.query_launch_ns, p.kernel_delta_ns},
          [=](std::span<const double> x) {
            return calls * moe_sorted_segment_saving_ns(E, x[0], x[1], x[2], K) + x[3];
          },
          prop);
    }
  } else {
    f.formula = "N * passes * E * q + kernel delta";
    f.saving_ns = propagate(
        {p.per_expert_ns, p.kernel_delta_ns},
        [=](std::span<const double> x) { return moe_saving_device_ns(E, N, P, x[0], x[1]); }, prop);
    if (p.gpu_busy_ns && p.other_bubble_ns && p.host_after_ns && step_ns) {
      // Without a routing sync the host no longer waits for the GPU inside the MoE layers,
      // so the step runs at the pace of whichever side is longer, not at the sum of both
      // plus the bubbles (the q form counts only the bubbles of the syncs themselves).
      f.alternatives["published N*passes*E*q + kernel delta"] = f.saving_ns;
      f.parameters["gpu_busy_ns_per_step"] = *p.gpu_busy_ns;
      f.parameters["other_bubble_ns_per_step"] = *p.other_bubble_ns;
      f.parameters["host_after_ns_per_step"] = *p.host_after_ns;
      f.formula = "T_step - max(GPU busy - kernel delta + other bubbles, host time after)";
      f.saving_ns = propagate(
          {*step_ns, *p.gpu_busy_ns, p.kernel_delta_ns, *p.other_bubble_ns, *p.host_after_ns},
          [](std::span<const double> x) { return x[0] - std::max(x[1] - x[2] + x[3], x[4]); }, prop);
      const double gpu_side = p.gpu_busy_ns->value - p.kernel_delta_ns.value + p.other_bubble_ns->value;
      f.regime = gpu_side >= p.host_after_ns->value ? "gpu-bound" : "host-bound";
      f.alternatives["segment (gpu side)"] = Interval::exact(step_ns->value - gpu_side);
      f.alternatives["segment (host side)"] = Interval::exact(step_ns->value - p.host_after_ns->value);
    }
  }
  attach_speedup(f, step_ns, prop);
  return f;
}

std::string prediction_to_json(const PredictionReport& r) {
  auto iv = [](const Interval& x) { return json{{"value", x.value}, {"lo", x.lo}, {"hi", x.hi}}; };
  json j;
  j["schema_version"] = r.schema_version;
  j["kind"] = "syncscope.prediction";
  j["interval_level"] = kIntervalLevel;
  j["source"] = r.source;
  j["gpu_profile"] = r.gpu_profile;
  j["fixes"] = json::array();
  for (const auto& f : r.fixes) {
    json o;
    o["fix"] = f.fix;
    o["variant"] = f.variant;
    o["applicable"] = f.applicable;
    o["reason"] = f.reason;
    o["formula"] = f.formula;
    o["predicted_saving_ns"] = f.saving_ns.value;
    o["predicted_saving_interval_ns"] = json::array({f.saving_ns.lo, f.saving_ns.hi});
    o["step_time_ns"] = f.step_time_ns ? iv(*f.step_time_ns) : json(nullptr);
    o["predicted_speedup"] = f.speedup ? json(f.speedup->value) : json(nullptr);
    o["predicted_speedup_interval"] = f.speedup ? json::array({f.speedup->lo, f.speedup->hi}) : json(nullptr);
    o["regime"] = f.regime;
    o["parameters"] = json::object();
    for (const auto& [k, v] : f.parameters) o["parameters"][k] = iv(v);
    o["alternatives"] = json::object();
    for (const auto& [k, v] : f.alternatives) o["alternatives"][k] = iv(v);
    o["evidence"] = f.evidence;
    o["notes"] = f.notes;
    j["fixes"].push_back(o);
  }
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

}  // namespace syncscope::model
