// The logging fix's step half's private declarations (logging.hpp): what the step's hooks
// share, without the model's (internal.hpp adds those for the model half).
#pragma once

#include <string>

#include "syncscope/core/bounds.hpp"
#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::fixes::logging::detail {

// program.cpp: the step options and the step program's operators.
void set_step_option(program::StepOptions& o, const StepOptionContext& c);
std::string step_option_name(const program::StepOptions& o);
void program_point(program::ProgramLayerBuilder& b, program::ProgramPoint at);
// fixes.logging.logging_steps and predict --logging-steps: a window longer than a run's
// steps would never log.
inline constexpr bounds::Range kLoggingSteps{1, 100000, "a logging window longer than 100000 steps never logs"};

}  // namespace syncscope::fixes::logging::detail
