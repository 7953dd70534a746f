// The moe_routing fix's closed forms and predictions (closed_form.hpp).
#include "syncscope/fixes/moe_routing/closed_form.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes::moe_routing {

using namespace syncscope::model;  // the segments, speedup and interval propagation

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

}  // namespace syncscope::fixes::moe_routing
