// The MoE routing fix's typed view of its step options (options.hpp).
#include "syncscope/fixes/moe_routing/options.hpp"

#include "step_internal.hpp"

namespace syncscope::fixes::moe_routing {

const std::string& variant_name(Variant v) { return fix_spec(kFix).variant_name(static_cast<std::uint8_t>(v)); }

Variant to_variant(std::string_view name) { return static_cast<Variant>(parse_variant(kFix, name, "moe variant")); }

Variant variant(const program::StepOptions& o) {
  return static_cast<Variant>(o.fix_variant(kFix).value_or(static_cast<std::uint8_t>(Variant::Loop)));
}

void set_variant(program::StepOptions& o, Variant v) { o.fix_variants[kFix] = static_cast<std::uint8_t>(v); }

std::string expert_gemm(const program::StepOptions& o) {
  return o.fix_word(kFix, detail::kExpertGemmKey, kExpertGemms.front());
}

void set_expert_gemm(program::StepOptions& o, const std::string& gemm) {
  o.fix_words[kFix][detail::kExpertGemmKey] = gemm;
}

}  // namespace syncscope::fixes::moe_routing
