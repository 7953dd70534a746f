// The analytical model of the three fixes. Pure functions of plain numbers (ns, counts,
// fractions); intervals come in and go out through interval.hpp. model/README.md derives
// every form and says when it holds.
//
// Notation: L layers, s the per-layer cost packing caching removes, c the reload copy time
// per layer, g the backward (recompute + gradient) time per layer, sigma the fractional
// slowdown of kernels that run beside a copy, E experts, q the per-expert dynamic-query
// cost, r the host-observed sync round trip, H/D host/GPU time of a segment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/interval.hpp"

namespace syncscope::model {

// ---- segments: the host/GPU view of sync removal ---------------------------------------
// Syncs cut a step into segments. A segment that ends in a sync costs
//   P + max(H - P, D) + r
// where H is its host time, D its GPU time and P <= H the part of the host work that must
// happen before the GPU can start (the work right after the previous sync, e.g. building
// metadata the next kernels read). A run of segments with no sync between them pipelines:
// the host queues ahead, so it costs max(sum H, sum D) + r.
struct Segment {
  double host_ns = 0;         // H
  double gpu_ns = 0;          // D
  double serial_host_ns = 0;  // P (0 <= P <= H)
};

enum class Regime { Unknown, HostBound, GpuBound, Balanced };
const char* regime_name(Regime r);  // "unknown", "host-bound", "gpu-bound", "balanced"

// A run is host-bound when its host time exceeds its GPU time by more than this factor,
// GPU-bound when the GPU time exceeds the host time by more than it, balanced otherwise.
// A convention (README), not a measured constant.
inline constexpr double kRegimeBand = 1.25;
Regime classify_regime(double host_ns, double gpu_ns);

double synced_time_ns(const std::vector<Segment>& segments, double round_trip_ns);
double pipelined_time_ns(const std::vector<Segment>& segments, double round_trip_ns);
// Saving from removing one sync between identical segments (the limit of many):
//   r + clamp(D - H + P, 0, P)
// = r + min(H, D) when all host work is serial (P = H): largest when the two sides are
// balanced, only the round trip when one side dominates.
double sync_removal_saving_ns(const Segment& segment, double round_trip_ns);

// ---- packing metadata cache ------------------------------------------------------------
struct PackingSegmentInputs {
  double host_ns = 0;          // H: host time per layer, rebuild included
  double gpu_ns = 0;           // D: GPU time per layer, rebuild kernels included
  double rebuild_host_ns = 0;  // w_h: host rebuild work (runs right after the sync: P)
  double rebuild_gpu_ns = 0;   // w_d: GPU time of the rebuild kernels
  double round_trip_ns = 0;    // r
  int syncs_per_layer = 1;     // k: syncs the rebuild makes per layer
  int cached_rebuilds = 1;     // m: layers the cached variant still rebuilds in (>= 1)
};

struct PackingTimes {
  double uncached_ns = 0;
  double cached_ns = 0;
  double saved_ns = 0;
  Regime regime = Regime::Unknown;  // of the cached run (what is left after the fix)
};

// Published form: T_saved = (L-1) s (the first layer still builds the cache).
double packing_saving_published_ns(int layers, double s_ns);
// Unsloth's packed SDPA mask cache keeps one entry per device, keyed by dtype and sliding
// window (the packing program, fixes/packing/src/program.cpp): over one
// step's metadata builds in issue order (program::packing_visit_windows), true where the
// entry holds another window (or none: the first build), so the cached variant rebuilds the
// mask there. A model with one window misses once; Gemma 3 (5 sliding of 6) at each change.
std::vector<bool> packing_mask_cache_misses(const std::vector<int>& visit_windows);
// The cached variant with m rebuilds left per step (m >= 1: the mask at each window
// change): T_saved = (L-m) s; (L-1) s when m = 1.
double packing_saving_cached_ns(int layers, int rebuilds, double s_ns);
// Segment form: baseline layers cost k r + w_h + max(H - w_h, D); with the cache the first
// layer is unchanged and the other L-1 pipeline without the rebuild:
// max((L-1)(H - w_h), (L-1)(D - w_d)). Equals (L-1)(k r + w_h + w_d) when the GPU bounds
// the cached run; in a host-bound run the rebuild kernels were already hidden, so the
// published form over-predicts by up to (L-1) w_d.
// With m = cached_rebuilds > 1 (a window change rebuilds the mask) m layers keep their
// rebuild and L-m pipeline: m (k r + w_h + max(H - w_h, D)) + max((L-m)(H - w_h), (L-m)(D - w_d)).
PackingTimes packing_segment(int layers, const PackingSegmentInputs& in);
// The "device" variant (ours, kernels/): the packer knows the lengths on the host before
// upload, so cu_seqlens and the mask are built once per batch by one GPU kernel: no host
// sync and no per-layer rebuild remain. The host issues only the layers' own work and the
// GPU runs one build plus the layers:
//   T_device = max(L (H - w_h), L (D - w_d) + w_d).   Saving = T_uncached - T_device.
PackingTimes packing_segment_device(int layers, const PackingSegmentInputs& in);

// ---- offload reload: single, double, ring-of-k ----------------------------------------
// Published forms (sigma = 0): T_single = L(c + g), T_double = c + (L-1) max(c, g) + g,
// T_saved = (L-1) min(c, g).
double offload_single_ns(int layers, double c_ns, double g_ns);
double offload_double_ns(int layers, double c_ns, double g_ns);
double offload_saving_published_ns(int layers, double c_ns, double g_ns);
// With overlap slowdown sigma: while a copy runs, a kernel progresses at 1/(1+sigma) of
// its rate. A double-buffered stage (compute i beside copy i+1) then takes
//   c                      if c >= g (1 + sigma)  (copy-bound: compute hidden, slowed)
//   g + c sigma/(1+sigma)  otherwise              (compute-bound: copy hidden, compute slowed)
double offload_stage_ns(double c_ns, double g_ns, double sigma);
double offload_double_slowed_ns(int layers, double c_ns, double g_ns, double sigma);
// (L-1)(c + g - stage): equals (L-1) c/(1+sigma) when compute-bound.
double offload_saving_slowed_ns(int layers, double c_ns, double g_ns, double sigma);

// Ring of depth+1 device buffers with prefetch depth `depth` (0: single buffer, 1: double
// buffering, k: copies run up to k layers ahead). Exact event recurrence over per-layer
// c_i and g_i (in backward order), with the slowdown applied to compute while any copy
// runs:
//   copy_i starts at max(copy_{i-1} end, compute_{i-depth-1} end)   (its buffer is free)
//   compute_i starts at max(compute_{i-1} end, copy_i end)
// Returns the end of the last compute (the first copy starts at 0).
struct RingTimeline {
  std::vector<double> copy_start, copy_end, compute_start, compute_end;
  double total_ns = 0;
};
RingTimeline offload_ring(const std::vector<double>& c_ns, const std::vector<double>& g_ns, int depth, double sigma);
double offload_ring_ns(const std::vector<double>& c_ns, const std::vector<double>& g_ns, int depth, double sigma);

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

// The segment a sync closes, as a trace shows it: `blocked` (the host's wait, round trip
// included) and `bubble` (the GPU idle after it: round trip, the host work before the next
// launch, the launch latency). In the segment model the wait is r + max(0, D - H + P) and
// the bubble r + P, so P = bubble - r and D - H + P = blocked - r; the returned segment has
// H = P, D = blocked - r (any H >= P with the same D - H gives the same saving).
// sync_removal_saving_ns of it is r + clamp(blocked - r, 0, bubble - r) = min(blocked,
// bubble) when both exceed r: the host's wait when the host binds, the GPU's idle when the
// GPU binds.
Segment segment_of_sync(double blocked_ns, double bubble_ns, double round_trip_ns);

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

// ---- step level ------------------------------------------------------------------------
// T_base / (T_base - T_saved). Throws InputError when the saving is not smaller than the
// step time (the inputs contradict each other).
double speedup(double step_ns, double saved_ns);

}  // namespace syncscope::model
