// The packing fix's hooks, one file per layer it plugs into (packing.hpp).
#pragma once

#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::packing::detail {

// fixes.packing.rebuild_form's words, the default first (registry_entry.cpp says what each is).
inline const std::vector<std::string> kRebuildForms = {"reference", "unsloth_sdpa_mask"};
// Its key, in the scenario and in the step options (StepOptions::fix_words).
inline constexpr const char* kRebuildFormKey = "rebuild_form";

// Its list in TracePredictOptions::fix_lists["packing"]: the sliding window of each metadata
// build of a step in issue order, as the run's step ran it (visit_windows; the run pipeline
// gives its step's): the cached variant keeps Unsloth's one-entry mask cache, so it rebuilds at
// each window change (closed_form.hpp: packing_mask_cache_misses). Absent: one window, only
// each step's first build rebuilds.
inline constexpr const char* kVisitWindowsTraceKey = "visit_windows";

// program.cpp: the packed-sequence metadata before each layer's attention.
void program_layer(program::ProgramLayerBuilder& b, program::ProgramPoint at);
// unsloth_rebuild.cpp: fixes.packing.rebuild_form unsloth_sdpa_mask, Unsloth's pre-cache
// metadata and/or SDPA mask build, op by op, each op charged an eager-PyTorch host cost.
void unsloth_precache_rebuild(program::ProgramLayerBuilder& b, int window, bool metadata, bool mask);
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
