// Predictions for the three fixes from parameters with intervals, and their JSON/text
// rendering (`syncscope predict`). The formulas are in analytic.hpp; this layer attaches
// intervals, regimes, evidence and the step-level speedup.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/analytic.hpp"
#include "syncscope/model/interval.hpp"

namespace syncscope::model {

inline constexpr int kPredictionSchemaVersion = 1;

struct FixPrediction {
  std::string fix;      // "packing" | "offload" | "moe_routing"
  std::string variant;  // "cached", "double", "prefetch", "sorted", "device"
  bool applicable = true;
  std::string reason;                            // why not applicable, or which inputs are missing
  std::string formula;                           // the form used, e.g. "(L-1)*s"
  Interval saving_ns;                            // per step
  std::optional<Interval> step_time_ns;          // baseline step time when known
  std::optional<Interval> speedup;               // needs a step time
  std::string regime;                            // "host-bound", "gpu-bound", "balanced", "copy-bound", ... or ""
  std::map<std::string, Interval> parameters;    // s_ns, c_ns, g_ns, q_ns, L, ...
  std::map<std::string, Interval> alternatives;  // other forms' savings (e.g. the published form)
  std::vector<std::string> evidence;             // what in a trace supports the parameters
  std::vector<std::string> notes;
};

struct PredictionReport {
  int schema_version = kPredictionSchemaVersion;
  std::string source;       // "explicit values", a scenario file or a trace file
  std::string gpu_profile;  // name or file, "" when none
  std::vector<FixPrediction> fixes;
  std::vector<std::string> notes;
};

// ---- inputs per fix (all times ns, intervals at kIntervalLevel) ----
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

// variant "cached" (the published form, plus the segment model when its inputs are given) or
// "device" (sync-free rebuild: needs the segment inputs, else not applicable).
FixPrediction predict_packing(const PackingParams& p, const std::optional<Interval>& step_ns,
                              const PropagationOptions& prop = {}, const std::string& variant = "cached");
// variant "double" uses prefetch_depth 1; "prefetch" uses p.prefetch_depth (>= 2).
FixPrediction predict_offload(const OffloadParams& p, const std::string& variant,
                              const std::optional<Interval>& step_ns, const PropagationOptions& prop = {});
// variant "sorted" or "device".
FixPrediction predict_moe(const MoeParams& p, const std::string& variant, const std::optional<Interval>& step_ns,
                          const PropagationOptions& prop = {});

// Attaches a step time and computes the speedup interval (T / (T - S)); a no-op without one.
void attach_speedup(FixPrediction& f, const std::optional<Interval>& step_ns, const PropagationOptions& prop = {});

// The report as JSON (the text for people: reports/model_printers.hpp).
std::string prediction_to_json(const PredictionReport& report);

}  // namespace syncscope::model
