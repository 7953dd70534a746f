// The kernels layer's loops over the fix registry (fix_spec.hpp): each fix's variant into the
// step options and back into the run plan's job keys, and the layer schedule a fix gives
// the step. The fixes' hooks themselves live in their folders (fixes/<name>/).
#include <fmt/format.h>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/program/offload_schedule.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::program {

void apply_fix_variants(StepOptions& o, const scenario::Scenario& s, fixes::Fix under_test,
                        const std::string& variant) {
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    std::optional<std::uint8_t> v;
    if (f.id == under_test) v = fixes::parse_variant(f.id, variant, fmt::format("fixes.{} variant", f.name));
    const fixes::StepOptionContext ctx{s, v};
    if (f.set_step_option) f.set_step_option(o, ctx);
    else o.other_fixes[f.id] = v.value_or(0);
  }
}

std::string fix_variants_key(const StepOptions& o) {
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

bool fix_program_schedule(const StepOptions& o, ProgramSchedule& out) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.build_program_schedule && f.build_program_schedule(o, out)) return true;
  return false;
}

// As StepBuilder's constructor and emit (step_program.cpp) walk the step: a fix's schedule
// (offload's checkpointing) or plain autograd; each ForwardLayer runs the layer's attention,
// and so does each BackwardLayer's recompute when the step checkpoints.
std::vector<int> packing_visit_windows(const StepOptions& o) {
  validate(o);
  const int L = effective_layers(o);
  ProgramSchedule schedule;
  const bool checkpointing = fix_program_schedule(o, schedule);
  const Choreography choreo = checkpointing ? std::move(schedule.choreography) : build_plain_choreography(L);
  std::vector<int> out;
  for (const ChoreoStep& s : choreo.steps)
    if (s.kind == ChoreoKind::ForwardLayer ||
        (recomputes_layers(o, checkpointing) && s.kind == ChoreoKind::BackwardLayer))
      out.push_back(layer_sliding_window(o.model, s.layer));
  return out;
}

}  // namespace syncscope::program
