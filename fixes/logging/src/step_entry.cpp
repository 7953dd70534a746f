// The logging fix's step half (logging.hpp): its identity and the hooks a step needs, without
// the model's (registry_entry.cpp adds those), so the LibTorch step and its tests link only
// the step program and the scenario.
#include <mutex>

#include "step_internal.hpp"
#include "syncscope/fixes/logging/logging.hpp"

namespace syncscope::fixes::logging {

void register_logging_fix_step() {
  static std::once_flag once;
  std::call_once(once, [] {
    FixSpec f;
    f.id = kLogging;
    f.name = "logging";
    f.aliases = {"logging-syncs", "logging_syncs"};
    f.variants = {"item", "every", "deferred"};
    f.baseline_meaning = "the loss and the gradient norm read with .item() every step";
    f.scenario_keys = {"logging_steps"};
    f.number_keys = {{"logging_steps", detail::kLoggingSteps, true, "", kDefaultLoggingSteps}};
    f.step_number_keys = f.number_keys;  // the same key in the step options
    f.predicted_variants = {"every", "deferred"};
    f.set_step_option = detail::set_step_option;
    f.step_option_name = detail::step_option_name;
    f.build_program_layer = detail::program_point;
    register_fix(std::move(f));
  });
}

}  // namespace syncscope::fixes::logging
