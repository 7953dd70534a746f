// The offload fix's typed view of its step options (options.hpp).
#include "syncscope/fixes/offload/options.hpp"

#include "step_internal.hpp"

namespace syncscope::fixes::offload {

const std::string& variant_name(Variant v) { return fix_spec(kFix).variant_name(static_cast<std::uint8_t>(v)); }

Variant to_variant(std::string_view name) { return static_cast<Variant>(parse_variant(kFix, name, "offload variant")); }

std::optional<Variant> variant(const program::StepOptions& o) {
  const auto v = o.fix_variant(kFix);
  return v ? std::optional<Variant>(static_cast<Variant>(*v)) : std::nullopt;
}

void set_variant(program::StepOptions& o, std::optional<Variant> v) {
  if (v) o.fix_variants[kFix] = static_cast<std::uint8_t>(*v);
  else o.fix_variants.erase(kFix);
}

int prefetch_depth(const program::StepOptions& o) {
  return static_cast<int>(o.fix_number(kFix, detail::kStepPrefetchDepth.key, detail::kStepPrefetchDepth.default_value));
}
void set_prefetch_depth(program::StepOptions& o, int k) { o.fix_numbers[kFix][detail::kStepPrefetchDepth.key] = k; }

double budget_bytes(const program::StepOptions& o) { return o.fix_number(kFix, detail::kStepBudgetBytes.key, -1.0); }
void set_budget_bytes(program::StepOptions& o, double bytes) {
  if (bytes < 0) {
    const auto f = o.fix_numbers.find(kFix);
    if (f != o.fix_numbers.end()) f->second.erase(detail::kStepBudgetBytes.key);
  } else {
    o.fix_numbers[kFix][detail::kStepBudgetBytes.key] = bytes;
  }
}

double min_bytes(const program::StepOptions& o) {
  return o.fix_number(kFix, detail::kStepMinBytes.key, detail::kStepMinBytes.default_value);
}
void set_min_bytes(program::StepOptions& o, double bytes) { o.fix_numbers[kFix][detail::kStepMinBytes.key] = bytes; }

}  // namespace syncscope::fixes::offload
