// The logging fix's model half's private declarations (logging.hpp), over its step half's
// (step_internal.hpp): one file per layer it plugs into.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "step_internal.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

namespace syncscope::fixes::logging::detail {

// predict.cpp: the trace detector and its closed form.
void detect(const model::detail::TraceFacts& facts, model::PredictionReport& report);
// The logging reads of iteration `w`: .item() syncs on its thread after its last optimizer range.
std::vector<const SyncPoint*> reads_in(const model::detail::TraceFacts& facts, const model::detail::Window& w);
// What one read costs the step: min(its bubble, its blocked time + the round trip).
double read_saving_ns(const SyncPoint& read, double round_trip_ns);
// N, the trainer's logging_steps: the scenario's (TracePredictOptions::fix_numbers), else
// kDefaultLoggingSteps.
double logging_steps_of(const model::TracePredictOptions& o);
// The closed form of one variant ("every": S (N - 1) / N; "deferred": max(S - r, 0)) from S,
// N (and where N came from, for the note) and r; no speedup attached.
model::FixPrediction variant_prediction(const model::FixPrediction& base, const std::string& variant,
                                        const model::Interval& s, double n, const std::string& n_source,
                                        double round_trip_ns);
// predict --fix logging from explicit values: its options, the scenario's logging_steps, and
// the closed form above.
std::vector<PredictOption> predict_options();
void predict_from_scenario(const scenario::Scenario& sc, model::ExplicitPredictInputs& in);
bool has_inputs(const model::ExplicitPredictInputs& in);
void predict_explicit(const model::ExplicitPredictInputs& in, model::PredictionReport& report);
// The reads repeat per step: found in at least 3 of 4 iterations.
bool per_step_pattern(std::size_t iterations_with_reads, std::size_t iterations);
// replay_edit.cpp: logging-every[:N] and logging-deferred on a replayed trace.
void replay_edit(ReplayEditContext& ctx);

}  // namespace syncscope::fixes::logging::detail
