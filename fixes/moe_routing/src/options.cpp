// The MoE routing fix's typed view of its step options (options.hpp).
#include "syncscope/fixes/moe_routing/options.hpp"

#include "internal.hpp"

namespace syncscope::fixes::moe_routing {

MoeVariant variant(const program::StepOptions& o) {
  const auto it = o.fix_variants.find(Fix::MoeRouting);
  return it == o.fix_variants.end() ? MoeVariant::Loop : static_cast<MoeVariant>(it->second);
}

void set_variant(program::StepOptions& o, MoeVariant v) {
  o.fix_variants[Fix::MoeRouting] = static_cast<std::uint8_t>(v);
}

std::string expert_gemm(const program::StepOptions& o) {
  const auto f = o.fix_words.find(Fix::MoeRouting);
  if (f == o.fix_words.end()) return kExpertGemms.front();
  const auto w = f->second.find(detail::kExpertGemmKey);
  return w == f->second.end() ? kExpertGemms.front() : w->second;
}

void set_expert_gemm(program::StepOptions& o, const std::string& gemm) {
  o.fix_words[Fix::MoeRouting][detail::kExpertGemmKey] = gemm;
}

}  // namespace syncscope::fixes::moe_routing
