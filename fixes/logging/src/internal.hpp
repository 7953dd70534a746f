// The logging fix's hooks, one file per layer it plugs into (logging.hpp).
#pragma once

#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::fixes::logging::detail {

// program.cpp: the step options and the step program's operators.
void set_step_option(program::StepOptions& o, const StepOptionContext& c);
std::string step_option_name(const program::StepOptions& o);
void program_point(program::ProgramLayerBuilder& b, program::ProgramPoint at);
// predict.cpp: the trace detector and its closed form.
void detect(const model::detail::TraceFacts& facts, model::PredictionReport& report);

}  // namespace syncscope::fixes::logging::detail
