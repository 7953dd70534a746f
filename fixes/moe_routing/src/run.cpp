// What a run says about MoE routing on an MoE model, tested or not (FixSpec::run_prediction_setup
// and untested_note, called by pipeline/): which expert GEMM the device variant runs (the
// simulator models the grouped GEMM unless the options say "padded"; a measured run asks the
// measured backend's LibTorch) and its padding price for predict --trace, and, where the
// scenario does not test routing, the loop baseline's syncs that stay in the step.
#include <fmt/format.h>

#include "internal.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::moe_routing::detail {

void run_prediction_setup(RunPredictionContext& c) {
  if (!c.scenario.model.is_moe()) return;
  bool padded = expert_gemm(c.options) == "padded";
  if (c.mode == "measured") {
    program::StepOptions device = c.options;
    set_variant(device, Variant::Device);
    device.device = "cuda";
    std::string why;
    padded = c.device_choice(device, &why) != "grouped";  // "" : a backend without LibTorch pads
    c.environment["moe_device_expert_gemm"] = padded ? "padded: " + why : "grouped (at::_grouped_mm)";
  }
  if (c.mode == "simulated")
    c.environment["moe_device_expert_gemm"] =
        padded ? "padded (modelled)" : "grouped (modelled: at::_grouped_mm, LibTorch >= 2.8 on sm90+)";
  // The padding price applies only where the device variant pads (capacity-padded bmm).
  if (padded) c.predict.fix_numbers[fix_spec(kFix).name][kTopKTraceKey] = c.scenario.model.num_experts_per_tok;
}

std::optional<std::string> untested_note(const scenario::Scenario& s, const program::StepOptions& o) {
  if (!s.model.is_moe()) return std::nullopt;
  program::StepOptions device = o;
  set_variant(device, Variant::Device);
  const int all = program::program_stats(program::build_step_program(o)).host_syncs;
  const int routing = all - program::program_stats(program::build_step_program(device)).host_syncs;
  return fmt::format(
      "{}: {} is MoE ({} experts, top-{}) but this scenario does not test moe_routing: routing stays at the `{}` "
      "baseline, {} of its {} syncs per step (by the step program)",
      s.name, s.model.name, s.model.num_local_experts, s.model.num_experts_per_tok, variant_name(variant(o)), routing,
      all);
}

}  // namespace syncscope::fixes::moe_routing::detail
