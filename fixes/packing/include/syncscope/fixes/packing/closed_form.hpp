// The packing fix's closed forms (docs/model-analytic.md derives them): the published
// (L-1) s, the cached variant's mask rebuilds at each window change, the host/GPU segment
// model of the rebuild and the device variant, and predict_packing, which turns parameters
// with intervals into the fix's predictions (predict from values, predict --trace). Built on
// the segments of syncscope/model/analytic.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/analytic.hpp"
#include "syncscope/model/interval.hpp"
#include "syncscope/model/predict.hpp"

namespace syncscope::fixes::packing {

using model::FixPrediction;
using model::Interval;
using model::PropagationOptions;
using model::Regime;
using model::Segment;

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
// step's metadata builds in issue order (visit_windows.hpp), true where the
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

// ---- predictions with intervals ----------------------------------------------------------
struct PackingParams {
  int layers = 0;
  Interval s_ns;  // per-layer cost the cache removes
  // Segment model inputs (per layer); when absent only the published form is given.
  std::optional<Interval> host_ns, gpu_ns, rebuild_host_ns, rebuild_gpu_ns, round_trip_ns;
  int syncs_per_layer = 1;
  // m: of the L layers, those the cached variant still rebuilds in (the mask at each window
  // change: packing_mask_cache_misses); 1 with one window. `cached_rebuilds_why` says how.
  int cached_rebuilds = 1;
  std::string cached_rebuilds_why;
};

// variant "cached" (the published form, plus the segment model when its inputs are given) or
// "device" (sync-free rebuild: needs the segment inputs, else not applicable).
FixPrediction predict_packing(const PackingParams& p, const std::optional<Interval>& step_ns,
                              const PropagationOptions& prop = {}, const std::string& variant = "cached");

}  // namespace syncscope::fixes::packing
