// The packing fix's typed view of its step options (options.hpp).
#include "syncscope/fixes/packing/options.hpp"

#include "step_internal.hpp"

namespace syncscope::fixes::packing {

const std::string& variant_name(Variant v) { return fix_spec(kFix).variant_name(static_cast<std::uint8_t>(v)); }

Variant to_variant(std::string_view name) { return static_cast<Variant>(parse_variant(kFix, name, "packing variant")); }

Variant variant(const program::StepOptions& o) {
  return static_cast<Variant>(o.fix_variant(kFix).value_or(static_cast<std::uint8_t>(Variant::Rebuild)));
}

void set_variant(program::StepOptions& o, Variant v) { o.fix_variants[kFix] = static_cast<std::uint8_t>(v); }

std::string rebuild_form(const program::StepOptions& o) {
  return o.fix_word(kFix, detail::kRebuildFormKey, detail::kRebuildForms.front());
}

void set_rebuild_form(program::StepOptions& o, const std::string& form) {
  o.fix_words[kFix][detail::kRebuildFormKey] = form;
}

}  // namespace syncscope::fixes::packing
