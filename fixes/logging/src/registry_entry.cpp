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
    f.predicted_variants = {"every", "deferred"};
    f.set_step_option = detail::set_step_option;
    f.step_option_name = detail::step_option_name;
    f.build_program_layer = detail::program_point;
    f.detect = detail::detect;
    // {edit, variant, what :ARG means ("": none), its parse-time check (none)}
    f.what_if_edits = {{"logging-every", "every", "N", {}}, {"logging-deferred", "deferred", "", {}}};
    f.replay_edit = detail::replay_edit;
    register_fix(std::move(f));
  });
}

}  // namespace syncscope::fixes::logging
