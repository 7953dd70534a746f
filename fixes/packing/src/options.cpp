// The packing fix's typed view of its step options (options.hpp).
#include "syncscope/fixes/packing/options.hpp"

#include "internal.hpp"

namespace syncscope::fixes::packing {

PackingVariant variant(const program::StepOptions& o) {
  const auto it = o.fix_variants.find(Fix::Packing);
  return it == o.fix_variants.end() ? PackingVariant::Rebuild : static_cast<PackingVariant>(it->second);
}

void set_variant(program::StepOptions& o, PackingVariant v) {
  o.fix_variants[Fix::Packing] = static_cast<std::uint8_t>(v);
}

std::string rebuild_form(const program::StepOptions& o) {
  const auto f = o.fix_words.find(Fix::Packing);
  if (f == o.fix_words.end()) return detail::kRebuildForms.front();
  const auto w = f->second.find(detail::kRebuildFormKey);
  return w == f->second.end() ? detail::kRebuildForms.front() : w->second;
}

void set_rebuild_form(program::StepOptions& o, const std::string& form) {
  o.fix_words[Fix::Packing][detail::kRebuildFormKey] = form;
}

}  // namespace syncscope::fixes::packing
