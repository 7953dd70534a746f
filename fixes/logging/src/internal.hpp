// The logging fix's hooks, one file per layer it plugs into (logging.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

namespace syncscope::fixes::logging::detail {

// program.cpp: the step options and the step program's operators.
void set_step_option(program::StepOptions& o, const StepOptionContext& c);
std::string step_option_name(const program::StepOptions& o);
void program_point(program::ProgramLayerBuilder& b, program::ProgramPoint at);
// predict.cpp: the trace detector and its closed form.
void detect(const model::detail::TraceFacts& facts, model::PredictionReport& report);
// The logging reads of iteration `w`: .item() syncs on its thread after its last optimizer range.
std::vector<const SyncPoint*> reads_in(const model::detail::TraceFacts& facts, const model::detail::Window& w);
// What one read costs the step: min(its bubble, its blocked time + the round trip).
double read_saving_ns(const SyncPoint& read, double round_trip_ns);
// N, the trainer's logging_steps: the scenario's (TracePredictOptions::fix_numbers), else
// kDefaultLoggingSteps.
double logging_steps_of(const model::TracePredictOptions& o);
// The reads repeat per step: found in at least 3 of 4 iterations.
bool per_step_pattern(std::size_t iterations_with_reads, std::size_t iterations);
// replay_edit.cpp: logging-every[:N] and logging-deferred on a replayed trace.
void replay_edit(ReplayEditContext& ctx);

}  // namespace syncscope::fixes::logging::detail
