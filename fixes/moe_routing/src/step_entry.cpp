// The MoE routing fix's step half (moe_routing.hpp): its identity and the hooks a step needs,
// without the model's (registry_entry.cpp adds those), so the LibTorch step and its tests link
// only the step program and the scenario.
#include <mutex>

#include "step_internal.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::moe_routing {

void register_moe_routing_fix_step() {
  static std::once_flag once;
  std::call_once(once, [] {
    // MoE routing: one nonzero per expert, sorted (argsort + bincount), or on the device.
    FixSpec f;
    f.id = kFix;
    f.name = "moe_routing";
    f.option_name = "moe";
    f.aliases = {"moe", "moe-routing"};
    f.variants = {"loop", "sorted", "device"};
    f.baseline_meaning = "one nonzero per expert";
    f.predicted_variants = {"sorted", "device"};
    // Routing needs experts to route to.
    f.check_scenario = [](const scenario::Scenario& s) -> std::optional<ScenarioProblem> {
      if (s.model.is_moe()) return std::nullopt;
      return ScenarioProblem{"fixes.moe_routing", "a mixture-of-experts model (model.num_local_experts > 0)",
                             "a dense model"};
    };
    f.set_step_option = [](program::StepOptions& o, const StepOptionContext& c) {
      set_variant(o, static_cast<Variant>(c.variant.value_or(0)));
    };
    f.step_option_name = [](const program::StepOptions& o) { return variant_name(variant(o)); };
    f.step_word_keys = {{detail::kExpertGemmKey, kExpertGemms}};
    f.build_program_layer = detail::program_layer;
    register_fix(std::move(f));
  });
}

}  // namespace syncscope::fixes::moe_routing
