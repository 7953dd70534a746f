// The kernels layer's hooks of the shipped fixes (fix_spec.hpp): how each sets its field of
// the step options and names it back, and its step-program operators and schedule
// (fix_*_program.cpp); and the loops the run plan uses over every registered fix.
#include <fmt/format.h>

#include <mutex>

#include "fix_program_hooks.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::program {

namespace {

void set_packing(StepOptions& o, const fixes::StepOptionContext& c) {
  o.packing = static_cast<fixes::PackingVariant>(c.variant.value_or(0));
  for (const auto& f : c.scenario.fixes)
    if (f.fix == fixes::Fix::Packing) o.packing_rebuild_form = f.rebuild_form;
}

void set_offload(StepOptions& o, const fixes::StepOptionContext& c) {
  // Runs of the other fixes reload as Unsloth does by default (double buffering).
  if (!c.scenario.offload) o.offload.reset();
  else o.offload = c.variant ? static_cast<fixes::OffloadVariant>(*c.variant) : kUnslothDefaultReload;
  // Reload schedules are compared with every layer offloaded, measured and simulated alike:
  // left to the device (-1), the memory-aware plan keeps every layer resident on a large GPU
  // and `prefetch` would then measure "no offload" rather than a schedule.
  o.offload_budget_bytes = 0;
  for (const auto& f : c.scenario.fixes)
    if (f.fix == fixes::Fix::Offload && f.prefetch_budget_bytes) o.offload_budget_bytes = *f.prefetch_budget_bytes;
}

void set_moe(StepOptions& o, const fixes::StepOptionContext& c) {
  o.moe = static_cast<fixes::MoeVariant>(c.variant.value_or(0));
}

}  // namespace

void bind_program_fix_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    fixes::FixSpec& packing = fixes::mutable_fix_spec(fixes::Fix::Packing);
    packing.set_step_option = set_packing;
    packing.step_option_name = [](const StepOptions& o) { return fixes::variant_name(o.packing); };
    packing.build_program_layer = detail::packing_program_layer;
    fixes::FixSpec& offload = fixes::mutable_fix_spec(fixes::Fix::Offload);
    offload.set_step_option = set_offload;
    offload.step_option_name = [](const StepOptions& o) { return o.offload ? fixes::variant_name(*o.offload) : "off"; };
    offload.build_program_schedule = detail::offload_program_schedule;
    fixes::FixSpec& moe = fixes::mutable_fix_spec(fixes::Fix::MoeRouting);
    moe.set_step_option = set_moe;
    moe.step_option_name = [](const StepOptions& o) { return fixes::variant_name(o.moe); };
    moe.build_program_layer = detail::moe_program_layer;
  });
}

void apply_fix_variants(StepOptions& o, const scenario::Scenario& s, fixes::Fix under_test, const std::string& variant,
                        int prefetch_depth) {
  bind_program_fix_hooks();
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    std::optional<std::uint8_t> v;
    if (f.id == under_test) v = fixes::parse_variant(f.id, variant, fmt::format("fixes.{} variant", f.name));
    const fixes::StepOptionContext ctx{s, v, prefetch_depth};
    if (f.set_step_option) f.set_step_option(o, ctx);
    else o.other_fixes[f.id] = v.value_or(0);
  }
  o.prefetch_depth = prefetch_depth;
}

std::string fix_variants_key(const StepOptions& o) {
  bind_program_fix_hooks();
  std::string key;
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    std::string value;
    if (f.step_option_name) {
      value = f.step_option_name(o);
    } else {
      auto it = o.other_fixes.find(f.id);
      value = it == o.other_fixes.end() ? "off" : f.variant_name(it->second);
    }
    // A fix that says "" is not applied and stays out of the key (a fix added later leaves
    // the keys, and so the run directories, of runs that do not test it as they were).
    if (value.empty()) continue;
    key += fmt::format("{}{}={}", key.empty() ? "" : "/", f.option_name.empty() ? f.name : f.option_name, value);
  }
  return key;
}

}  // namespace syncscope::program
