// The logging fix's model half (logging.hpp): the hooks the model and the replay call, added
// to its step half's entry (step_entry.cpp).
#include <mutex>

#include "internal.hpp"
#include "syncscope/fixes/logging/logging.hpp"

namespace syncscope::fixes::logging {

void register_logging_fix() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_logging_fix_step();
    extend_fix(kLogging, [](FixSpec& f) {
      f.detect = detail::detect;
      f.has_inputs = detail::has_inputs;
      f.predict = detail::predict_explicit;
      f.predict_options = detail::predict_options();
      f.predict_from_scenario = detail::predict_from_scenario;
      // {edit, variant, what :ARG means ("": none), its parse-time check (none)}
      f.what_if_edits = {{"logging-every", "every", "N", {}}, {"logging-deferred", "deferred", "", {}}};
      f.replay_edit = detail::replay_edit;
    });
  });
}

}  // namespace syncscope::fixes::logging
