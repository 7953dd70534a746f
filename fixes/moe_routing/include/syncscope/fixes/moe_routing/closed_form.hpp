// The MoE routing fix's closed forms (docs/model-analytic.md derives them): the sorted and
// device variants' savings per routed layer and pass, the segment form of sorted from a
// trace's routing syncs, and predict_moe, which turns parameters with intervals into the
// fix's predictions (predict from values, predict --trace). Built on the segments of
// syncscope/model/analytic.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/analytic.hpp"
#include "syncscope/model/interval.hpp"
#include "syncscope/model/predict.hpp"

namespace syncscope::fixes::moe_routing {

using model::FixPrediction;
using model::Interval;
using model::PropagationOptions;
using model::Regime;
using model::Segment;

// ---- MoE routing -----------------------------------------------------------------------
// Saving per step: N MoE layers x passes (forward, plus the recompute under checkpointing)
// x (E - k) q for "sorted", where k is the syncs each of its MoE calls still issues (3 on
// CUDA: torch.bincount reads min and max back, then .tolist() reads the counts;
// kMoeSortedSyncsPerCall), or E q for "device" (none left), plus the measured kernel-time
// difference (positive: the fix's kernels are faster).
inline constexpr int kMoeSortedSyncsPerCall = 3;
double moe_saving_sorted_ns(int experts, int moe_layers, int passes, double q_ns, double kernel_delta_ns = 0,
                            int syncs_left = kMoeSortedSyncsPerCall);
double moe_saving_device_ns(int experts, int moe_layers, int passes, double q_ns, double kernel_delta_ns = 0);

// MoE "sorted" in the segment form, per MoE call (one layer's routing, one pass):
//   saving = (E - k) * s_sync + (n_q - E * a - b) * h_q
// s_sync the mean segment saving of its routing syncs (segment_of_sync), n_q the loop's
// routing-query launches in the call (the boolean mask, nonzero, the count read, the token
// and slot index arithmetic: is_routing_query_kernel) with mean own time h_q (host time when
// the call's host side binds, else GPU time), and what sorted launches instead: a = 1 index
// op per expert (slot -> token), b = 8 per call (stable argsort, bincount's min and max with
// their reads, its zeroing and histogram, the counts' read; kernels/README.md).
inline constexpr int kMoeSortedLaunchesPerExpert = 1;
inline constexpr int kMoeSortedLaunchesPerCall = 8;
// MoE "device" routes on the device with 4 launches per call (histogram of expert counts,
// stable sort of the slots, slot -> token division, the offsets' cast for the grouped GEMM;
// kernels/README.md), then runs each expert launch once, grouped.
inline constexpr int kMoeDeviceRoutingLaunches = 4;
double moe_sorted_segment_saving_ns(int experts, double sync_saving_ns, double query_launches, double launch_ns,
                                    int syncs_left = kMoeSortedSyncsPerCall);

// ---- predictions with intervals ----------------------------------------------------------
struct MoeParams {
  int experts = 0;
  int moe_layers = 0;
  int passes = 1;  // forward (+1 for the recompute under gradient checkpointing)
  // Syncs each "sorted" MoE call still issues (bincount's min and max reads, .tolist()).
  int sorted_syncs_left = kMoeSortedSyncsPerCall;
  Interval per_expert_ns;                         // q
  Interval kernel_delta_ns = Interval::exact(0);  // measured kernel-time difference per step
  // Segment form of "device" (all routing syncs gone: host and GPU overlap across the MoE
  // layers), per step of the baseline: GPU busy time, the bubbles of its other (non-routing)
  // syncs, which stay, and its host time without the routing syncs' blocked time and the
  // per-expert launches the device variant does not make. Given all three and a step time,
  // device's step is max(gpu_busy - kernel_delta + other_bubbles, host_after).
  std::optional<Interval> gpu_busy_ns, other_bubble_ns, host_after_ns;
  // Segment form of "sorted" (analytic.hpp moe_sorted_segment_saving_ns), per MoE call of
  // the baseline: the mean segment saving of a routing sync, the routing-query launches and
  // their mean own time; with calls_per_step the per-step saving replaces the q form.
  std::optional<Interval> sync_saving_ns, query_launches, query_launch_ns;
  double calls_per_step = 0;
};

// variant "sorted" or "device".
FixPrediction predict_moe(const MoeParams& p, const std::string& variant, const std::optional<Interval>& step_ns,
                          const PropagationOptions& prop = {});

}  // namespace syncscope::fixes::moe_routing
