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

// program.cpp: the packed-sequence metadata before each layer's attention.
void program_layer(program::ProgramLayerBuilder& b, program::ProgramPoint at);
// unsloth_rebuild.cpp: fixes.packing.rebuild_form unsloth_sdpa_mask, Unsloth's pre-cache
// metadata and/or SDPA mask build, op by op, each op charged an eager-PyTorch host cost.
void unsloth_precache_rebuild(program::ProgramLayerBuilder& b, int window, bool metadata, bool mask);
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
