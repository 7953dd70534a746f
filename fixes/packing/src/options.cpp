// The packing fix's typed view of its step options (options.hpp).
#include "syncscope/fixes/packing/options.hpp"

#include "internal.hpp"

namespace syncscope::fixes::packing {

const std::string& variant_name(Variant v) { return fix_spec(kFix).variant_name(static_cast<std::uint8_t>(v)); }

Variant to_variant(std::string_view name) { return static_cast<Variant>(parse_variant(kFix, name, "packing variant")); }

Variant variant(const program::StepOptions& o) {
  const auto it = o.fix_variants.find(kFix);
  return it == o.fix_variants.end() ? Variant::Rebuild : static_cast<Variant>(it->second);
}

void set_variant(program::StepOptions& o, Variant v) { o.fix_variants[kFix] = static_cast<std::uint8_t>(v); }

std::string rebuild_form(const program::StepOptions& o) {
  const auto f = o.fix_words.find(kFix);
  if (f == o.fix_words.end()) return detail::kRebuildForms.front();
  const auto w = f->second.find(detail::kRebuildFormKey);
  return w == f->second.end() ? detail::kRebuildForms.front() : w->second;
}

void set_rebuild_form(program::StepOptions& o, const std::string& form) {
  o.fix_words[kFix][detail::kRebuildFormKey] = form;
}

}  // namespace syncscope::fixes::packing
