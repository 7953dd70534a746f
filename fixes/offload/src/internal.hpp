// The offload fix's hooks, one file per layer it plugs into (offload.hpp).
#pragma once

#include "syncscope/core/bounds.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::offload::detail {

// Its settings in the step options (FixSpec::step_number_keys; options.hpp reads them):
// prefetch's look-ahead (the scenario key's range and default), the plan's device budget
// in bytes (no default: absent leaves it to the device) and Unsloth's minimum offloaded size.
inline const FixSpec::NumberKey kStepPrefetchDepth{"prefetch_depth", bounds::kPrefetchDepth, true, "", 2};
inline const FixSpec::NumberKey kStepBudgetBytes{
    "budget_bytes", {0, 1e15, "more device memory than any GPU has (1 PB)"}, false, "bytes", 0};
inline const FixSpec::NumberKey kStepMinBytes{"min_bytes",
                                              {0, 1e15, "a layer input larger than any GPU's memory (1 PB)"},
                                              false,
                                              "bytes",
                                              kUnslothMinOffloadBytes};

// predict's --prefetch-depth (explicit values and --trace): the prefetch variant's look-ahead k
// (a ring of k + 1 buffers), its bounds and default, and its key in
// TracePredictOptions::fix_numbers["offload"].
inline constexpr bounds::Range kPrefetchDepthOption{2, 1024,
                                                    "the prefetch variant looks k >= 2 layers ahead; 1 is double "
                                                    "buffering; more than the layers a model has buys nothing"};
inline constexpr int kDefaultPrefetchDepth = 2;
inline constexpr const char* kPrefetchDepthTraceKey = "prefetch_depth";
// The look-ahead predict --trace predicts and replays the prefetch variant with.
int trace_prefetch_depth(const model::TracePredictOptions& o);

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
