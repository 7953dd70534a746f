// The offload fix's step half (offload.hpp): its identity and the hooks a step needs, without
// the model's (registry_entry.cpp adds those), so the LibTorch step and its tests link only
// the step program and the scenario.
#include <mutex>

#include "step_internal.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::offload {

namespace {

// fixes.offload.prefetch_depth (prefetch's look-ahead k over a ring of k+1 buffers) and
// prefetch_budget_gib (device memory prefetch's memory-aware plan may use for the ring and
// resident layer inputs, pinned by the scenario so the plan is the same on every GPU).
const FixSpec::NumberKey& kPrefetchDepthKey = detail::kStepPrefetchDepth;  // the same key and bounds
const FixSpec::NumberKey kBudgetKey{"prefetch_budget_gib", {0, 65536, "device memory"}, false, "GiB", 0};

void set_step_option(program::StepOptions& o, const StepOptionContext& c) {
  // Runs of the other fixes reload as Unsloth does by default (double buffering).
  if (!c.scenario.offload) set_variant(o, std::nullopt);
  else set_variant(o, c.variant ? static_cast<Variant>(*c.variant) : kUnslothDefaultReload);
  // Reload schedules are compared with every layer offloaded, measured and simulated alike:
  // left to the device (-1), the memory-aware plan keeps every layer resident on a large GPU
  // and `prefetch` would then measure "no offload" rather than a schedule. The look-ahead is
  // the selection's when offload is under test, else the default (runs of other fixes reload
  // with Unsloth's default, which has none).
  set_budget_bytes(o, 0);
  set_prefetch_depth(o, static_cast<int>(kPrefetchDepthKey.default_value));
  for (const auto& f : c.scenario.fixes) {
    if (f.fix != kFix) continue;
    if (f.has_number(kBudgetKey.key)) set_budget_bytes(o, f.number(kBudgetKey.key) * 1024.0 * 1024.0 * 1024.0);
    if (c.variant) set_prefetch_depth(o, static_cast<int>(f.number(kPrefetchDepthKey.key)));
  }
}

}  // namespace

void register_offload_fix_step() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Checkpoint-activation reload from pinned host memory: one buffer, double buffering
    // (Unsloth's fix), or a ring of k+1 buffers k layers ahead.
    FixSpec f;
    f.id = kFix;
    f.name = "offload";
    f.variants = {"single", "double", "prefetch"};
    f.baseline_meaning = "one reload buffer";
    f.scenario_keys = {kPrefetchDepthKey.key, kBudgetKey.key};
    f.number_keys = {kPrefetchDepthKey, kBudgetKey};
    f.step_number_keys = {detail::kStepPrefetchDepth, detail::kStepBudgetBytes, detail::kStepMinBytes};
    f.predicted_variants = {"double", "prefetch"};
    f.timeline_shows_copies = true;
    // Selecting the fix implies offload (checkpoints in host memory) unless the file says, and
    // a file that turns it off cannot run the fix.
    f.imply_scenario = [](scenario::Scenario& s, const std::function<bool(const std::string&)>& given) {
      if (!given("offload")) s.offload = true;
    };
    f.check_scenario = [](const scenario::Scenario& s) -> std::optional<ScenarioProblem> {
      if (s.offload) return std::nullopt;
      return ScenarioProblem{"offload",
                             "true when fixes.offload is selected (the fix changes how offloaded activations reload)",
                             "false"};
    };
    f.set_step_option = set_step_option;
    f.step_option_name = [](const program::StepOptions& o) {
      const auto v = variant(o);
      return v ? variant_name(*v) : std::string("off");
    };
    f.build_program_schedule = detail::program_schedule;
    register_fix(std::move(f));
  });
}

}  // namespace syncscope::fixes::offload
