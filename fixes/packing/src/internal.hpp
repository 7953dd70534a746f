// The packing fix's model half's private declarations (packing.hpp), over its step half's
// (step_internal.hpp): one file per layer it plugs into.
#pragma once

#include <string>
#include <vector>

#include "step_internal.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::packing::detail {

// Its list in TracePredictOptions::fix_lists["packing"]: the sliding window of each metadata
// build of a step in issue order, as the run's step ran it (visit_windows; the run pipeline
// gives its step's): the cached variant keeps Unsloth's one-entry mask cache, so it rebuilds at
// each window change (closed_form.hpp: packing_mask_cache_misses). Absent: one window, only
// each step's first build rebuilds.
inline constexpr const char* kVisitWindowsTraceKey = "visit_windows";

// layer_syncs.cpp: each layer's metadata rebuilds, as the detector and the replay edit see
// them. is_rebuild_name: names of metadata / mask builds in packed-sequence training (Unsloth's
// packing.py builds cu_seqlens / max_seqlen and the SDPA / xFormers masks), lower-cased.
bool is_rebuild_name(const std::string& lowered);
struct PackingLayers {
  std::vector<std::vector<const SyncPoint*>> syncs;          // per layer: its rebuild syncs
  std::vector<std::vector<model::detail::Window>> rebuilds;  // per layer: its rebuild ranges
  bool any_rebuild_range = false;                            // any layer has one
  bool has(std::size_t layer) const { return !syncs[layer].empty() || !rebuilds[layer].empty(); }
};
PackingLayers find_packing_layers(const model::detail::TraceFacts& facts);
// detect.cpp: predict --trace's detector (metadata rebuilds and their syncs, layer by layer).
void detect(const model::detail::TraceFacts& facts, model::PredictionReport& report);
// predict.cpp: predict --fix packing from explicit values: its options, what a scenario
// implies for them, and the prediction.
std::vector<PredictOption> predict_options();
void predict_from_scenario(const scenario::Scenario& sc, model::ExplicitPredictInputs& in);
bool has_inputs(const model::ExplicitPredictInputs& in);
void predict_explicit(const model::ExplicitPredictInputs& in, model::PredictionReport& report);
// replay_edit.cpp: packing-cache and packing-device on a replayed trace.
void replay_edit(ReplayEditContext& ctx);

}  // namespace syncscope::fixes::packing::detail
