// The logging fix's registry entry (its identity) and the hooks it installs (logging.hpp).
#include <mutex>

#include "internal.hpp"
#include "syncscope/fixes/logging/logging.hpp"

namespace syncscope::fixes::logging {

void register_logging_fix() {
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
    f.detect = detail::detect;
    f.has_inputs = detail::has_inputs;
    f.predict = detail::predict_explicit;
    f.predict_options = detail::predict_options();
    f.predict_from_scenario = detail::predict_from_scenario;
    // {edit, variant, what :ARG means ("": none), its parse-time check (none)}
    f.what_if_edits = {{"logging-every", "every", "N", {}}, {"logging-deferred", "deferred", "", {}}};
    f.replay_edit = detail::replay_edit;
    register_fix(std::move(f));
  });
}

}  // namespace syncscope::fixes::logging
