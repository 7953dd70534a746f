// The MoE routing fix's model half's private declarations (moe_routing.hpp), over its step
// half's (step_internal.hpp): one file per layer it plugs into.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "step_internal.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::moe_routing::detail {

// layer_syncs.cpp: the routing pattern in a trace, as the detector and the replay edit see it.
// Kernels of an MoE loop's per-expert routing query, which "sorted" and "device" no longer
// launch: the boolean expert mask, the nonzero/where select (CUB's DeviceSelect in
// torch.nonzero) and the token/slot index arithmetic on its result (name lower-cased).
bool is_routing_query_kernel(const std::string& lowered);
// Per layer of facts.layers: its syncs of data-dependent-shape ops, in time order (a run of two
// or more is a routing loop: one count read per expert).
std::vector<std::vector<const SyncPoint*>> routing_syncs(const model::detail::TraceFacts& facts);
// GPU time of the routing-query kernels each host call launched, by correlation id.
std::unordered_map<std::uint64_t, Ns> query_work_by_corr(const Trace& trace);
// detect.cpp: predict --trace's detector (runs of nonzero/where-style syncs in a layer).
void detect(const model::detail::TraceFacts& facts, model::PredictionReport& report);
// predict.cpp: predict --fix moe from explicit values: its options, what a scenario implies
// for them, and the prediction.
std::vector<PredictOption> predict_options();
void predict_from_scenario(const scenario::Scenario& sc, model::ExplicitPredictInputs& in);
bool has_inputs(const model::ExplicitPredictInputs& in);
void predict_explicit(const model::ExplicitPredictInputs& in, model::PredictionReport& report);
// run.cpp: what a run says about routing on an MoE model (FixSpec::run_prediction_setup,
// untested_note).
void run_prediction_setup(RunPredictionContext& c);
std::optional<std::string> untested_note(const scenario::Scenario& s, const program::StepOptions& o);
// replay_edit.cpp: moe-sorted and moe-device on a replayed trace.
void replay_edit(ReplayEditContext& ctx);

}  // namespace syncscope::fixes::moe_routing::detail
