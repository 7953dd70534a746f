// The offload fix's hooks, one file per layer it plugs into (offload.hpp).
#pragma once

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::offload::detail {

// program.cpp: the checkpoint offload and reload choreography, when the options offload
// (false otherwise).
bool program_schedule(const program::StepOptions& o, program::ProgramSchedule& out);
// detect.cpp: predict --trace's detector (host-to-device reloads before each layer's backward).
void detect(const model::detail::TraceFacts& facts, model::PredictionReport& report);
// predict.cpp: predict --fix offload from explicit values: its options, what a scenario
// implies for them, and the prediction.
std::vector<PredictOption> predict_options();
void predict_from_scenario(const scenario::Scenario& sc, model::ExplicitPredictInputs& in);
bool has_inputs(const model::ExplicitPredictInputs& in);
void predict_explicit(const model::ExplicitPredictInputs& in, model::PredictionReport& report);
// replay_edit.cpp: double-buffer and prefetch[:K] on a replayed trace; K from prefetch:K
// (InputError naming `text` outside 2..1024).
void replay_edit(ReplayEditContext& ctx);
int prefetch_depth_argument(const std::string& text, const std::string& k);

}  // namespace syncscope::fixes::offload::detail
