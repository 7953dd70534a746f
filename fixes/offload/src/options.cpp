// The offload fix's typed view of its step options (options.hpp).
#include "syncscope/fixes/offload/options.hpp"

#include "internal.hpp"

namespace syncscope::fixes::offload {

namespace {

double number_or(const program::StepOptions& o, const char* key, double otherwise) {
  const auto f = o.fix_numbers.find(Fix::Offload);
  if (f == o.fix_numbers.end()) return otherwise;
  const auto v = f->second.find(key);
  return v == f->second.end() ? otherwise : v->second;
}

}  // namespace

std::optional<OffloadVariant> variant(const program::StepOptions& o) {
  const auto it = o.fix_variants.find(Fix::Offload);
  if (it == o.fix_variants.end()) return std::nullopt;
  return static_cast<OffloadVariant>(it->second);
}

void set_variant(program::StepOptions& o, std::optional<OffloadVariant> v) {
  if (v) o.fix_variants[Fix::Offload] = static_cast<std::uint8_t>(*v);
  else o.fix_variants.erase(Fix::Offload);
}

int prefetch_depth(const program::StepOptions& o) {
  return static_cast<int>(
      number_or(o, detail::kStepPrefetchDepth.key.c_str(), detail::kStepPrefetchDepth.default_value));
}
void set_prefetch_depth(program::StepOptions& o, int k) {
  o.fix_numbers[Fix::Offload][detail::kStepPrefetchDepth.key] = k;
}

double budget_bytes(const program::StepOptions& o) { return number_or(o, detail::kStepBudgetBytes.key.c_str(), -1.0); }
void set_budget_bytes(program::StepOptions& o, double bytes) {
  if (bytes < 0) {
    const auto f = o.fix_numbers.find(Fix::Offload);
    if (f != o.fix_numbers.end()) f->second.erase(detail::kStepBudgetBytes.key);
  } else {
    o.fix_numbers[Fix::Offload][detail::kStepBudgetBytes.key] = bytes;
  }
}

double min_bytes(const program::StepOptions& o) {
  return number_or(o, detail::kStepMinBytes.key.c_str(), detail::kStepMinBytes.default_value);
}
void set_min_bytes(program::StepOptions& o, double bytes) {
  o.fix_numbers[Fix::Offload][detail::kStepMinBytes.key] = bytes;
}

}  // namespace syncscope::fixes::offload
