// The kernels layer's loops over the fix registry (fix_spec.hpp): each fix's variant into the
// step options and back into the run plan's job keys, and the layer schedule a fix gives
// the step. The fixes' hooks themselves live in their folders (fixes/<name>/).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"

#include "option_error.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/program/layer_schedule.hpp"
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
    else o.fix_variants[f.id] = v.value_or(0);
  }
}

std::string fix_variants_key(const StepOptions& o) {
  std::string key;
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    std::string value;
    if (f.step_option_name) {
      value = f.step_option_name(o);
    } else {
      const auto v = o.fix_variant(f.id);
      value = v ? f.variant_name(*v) : "off";
    }
    // A fix that says "" is not applied and stays out of the key (a fix added later leaves
    // the keys, and so the run directories, of runs that do not test it as they were).
    if (value.empty()) continue;
    key += fmt::format("{}{}={}", key.empty() ? "" : "/", f.option_name.empty() ? f.name : f.option_name, value);
  }
  return key;
}

namespace {

// The entry of a fix id the options name, or InputError naming `field`.
const fixes::FixSpec& registered(fixes::Fix fix, const std::string& field) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.id == fix) return f;
  detail::bad_option(field, "a registered fix",
                     fmt::format("fix id {}, which nobody registered", static_cast<int>(fix)));
}

}  // namespace

void validate_fix_settings(const StepOptions& o) {
  for (const auto& [fix, v] : o.fix_variants) {
    const fixes::FixSpec& f = registered(fix, "fix_variants");
    if (v >= f.variants.size())
      detail::bad_option(fmt::format("fix_variants[{}]", f.name), fmt::format("one of {}", fmt::join(f.variants, ", ")),
                         std::to_string(v));
  }
  for (const auto& [fix, values] : o.fix_numbers) {
    const fixes::FixSpec& f = registered(fix, "fix_numbers");
    for (const auto& [key_binding, v] : values) {
      const std::string& key = key_binding;  // clang before 16 cannot capture a structured binding (fuzz preset)
      const std::string field = fmt::format("fix_numbers[{}].{}", f.name, key);
      const auto k = std::find_if(f.step_number_keys.begin(), f.step_number_keys.end(),
                                  [&key](const fixes::FixSpec::NumberKey& n) { return n.key == key; });
      if (k == f.step_number_keys.end()) {
        std::vector<std::string> names;
        for (const auto& n : f.step_number_keys) names.push_back(n.key);
        detail::bad_option(field,
                           names.empty() ? std::string("no number (the fix declares none)")
                                         : fmt::format("one of the fix's numbers: {}", fmt::join(names, ", ")),
                           "an undeclared key");
      }
      if (!k->range.contains(v) || (k->integer && v != static_cast<double>(static_cast<long long>(v))))
        detail::bad_option(field,
                           k->integer ? bounds::describe_int(k->range) : bounds::describe_number(k->range, k->unit),
                           fmt::format("{}", v));
    }
  }
  for (const auto& [fix, values] : o.fix_words) {
    const fixes::FixSpec& f = registered(fix, "fix_words");
    for (const auto& [key_binding, v] : values) {
      const std::string& key = key_binding;  // as above
      const std::string field = fmt::format("fix_words[{}].{}", f.name, key);
      const auto k = std::find_if(f.step_word_keys.begin(), f.step_word_keys.end(),
                                  [&key](const fixes::FixSpec::WordKey& w) { return w.key == key; });
      if (k == f.step_word_keys.end()) detail::bad_option(field, "a word the fix declares", "an undeclared key");
      if (std::find(k->values.begin(), k->values.end(), v) == k->values.end())
        detail::bad_option(field, fmt::format("one of {}", fmt::join(k->values, ", ")), "\"" + v + "\"");
    }
  }
}

bool fix_program_schedule(const StepOptions& o, ProgramSchedule& out) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.build_program_schedule && f.build_program_schedule(o, out)) return true;
  return false;
}

// As StepBuilder's constructor and emit (step_program.cpp) walk the step: a fix's schedule
// (offload's checkpointing) or plain autograd; each ForwardLayer runs the layer's attention,
// and so does each BackwardLayer's recompute when the step checkpoints.

}  // namespace syncscope::program
