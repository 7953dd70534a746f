// The offload fix's model half's private declarations (offload.hpp), over its step half's
// (step_internal.hpp): one file per layer it plugs into.
#pragma once

#include "step_internal.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::offload::detail {

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
