// The MoE routing fix's model half (moe_routing.hpp): the hooks the model, the replay, the run
// and validate call, added to its step half's entry (step_entry.cpp).
#include <mutex>

#include "internal.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::moe_routing {

void register_moe_routing_fix() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_moe_routing_fix_step();
    extend_fix(kFix, [](FixSpec& f) {
      f.detect = detail::detect;
      f.run_prediction_setup = detail::run_prediction_setup;
      f.untested_note = detail::untested_note;
      f.has_inputs = detail::has_inputs;
      f.predict = detail::predict_explicit;
      f.predict_options = detail::predict_options();
      f.predict_from_scenario = detail::predict_from_scenario;
      f.what_if_edits = {{"moe-sorted", "sorted", "", {}}, {"moe-device", "device", "", {}}};
      f.replay_edit = detail::replay_edit;
      // docs/sources.md#moe-routing: gpt-oss-20b step 10-15% faster with the sorted dispatch.
      f.published_scenarios = {
          {"gpt-oss-20b sorted routing, step (10-15%)", "published-gpt-oss-20b-moe", "sorted", "step", 0.125, 0.10,
           0.15, true,
           "Unsloth defaults as for packing; LoRA on q, k, v, o (mode not published); our reference expert form, "
           "which overstates sorted's gain by ~9% against Unsloth's (model/README.md)",
           "docs/sources.md#moe-routing"}};
    });
  });
}

}  // namespace syncscope::fixes::moe_routing
