// The offload fix's closed forms (docs/model-analytic.md derives them): single and double
// buffering's published forms, the overlap slowdown sigma, the ring of k+1 buffers as an
// event recurrence, and predict_offload, which turns parameters with intervals into the
// fix's predictions (predict from values, predict --trace).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/analytic.hpp"
#include "syncscope/model/interval.hpp"
#include "syncscope/model/predict.hpp"

namespace syncscope::fixes::offload {

using model::FixPrediction;
using model::Interval;
using model::PropagationOptions;
using model::Regime;
using model::Segment;

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

// ---- predictions with intervals ----------------------------------------------------------
struct OffloadParams {
  int layers = 0;
  Interval copy_ns;                        // c
  Interval compute_ns;                     // g
  Interval slowdown = Interval::exact(0);  // sigma
  int prefetch_depth = 1;                  // 1: double buffering; k >= 2: ring of k+1 ("prefetch")
  // Per-layer times (backward order) when they vary; used by the ring recurrence.
  std::vector<double> copy_per_layer_ns, compute_per_layer_ns;
  bool unified_memory = false;  // GB10 / APUs: host and device share memory
  // Host issue time per reloaded layer in backward (the host's own time there, sync waits
  // excluded), when known: each layer takes at least this long whatever the buffers do, so
  // a variant's step is max(L * h, its ring time) (predict.cpp, predict_offload).
  std::optional<Interval> host_ns;
};

// variant "double" uses prefetch_depth 1; "prefetch" uses p.prefetch_depth (>= 2).
FixPrediction predict_offload(const OffloadParams& p, const std::string& variant,
                              const std::optional<Interval>& step_ns, const PropagationOptions& prop = {});

}  // namespace syncscope::fixes::offload
