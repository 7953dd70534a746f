// The fix registry's entries: each fix's identity (names, aliases, variants with the baseline
// first, the scenario keys it takes). Hooks are installed by the layers that implement them
// (fix_spec.hpp); this is the one file a new fix adds an entry to.
#include "syncscope/fixes/fix_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes {

namespace {

std::deque<FixSpec> shipped_fixes() {
  std::deque<FixSpec> v;
  {
    // Packed-sequence metadata (cu_seqlens, max_seqlen, the [T,T] mask): rebuilt every layer
    // (Unsloth's baseline), cached once per batch (Unsloth's fix), or built on the device.
    FixSpec f;
    f.id = Fix::Packing;
    f.name = "packing";
    f.variants = {"rebuild", "cached", "device"};
    f.baseline_meaning = "metadata rebuilt in every layer";
    f.scenario_keys = {"rebuild_form"};  // how the step program builds the baseline (scenario.hpp)
    f.predicted_variants = {"cached", "device"};
    v.push_back(std::move(f));
  }
  {
    // Checkpoint-activation reload from pinned host memory: one buffer, double buffering
    // (Unsloth's fix), or a ring of k+1 buffers k layers ahead.
    FixSpec f;
    f.id = Fix::Offload;
    f.name = "offload";
    f.variants = {"single", "double", "prefetch"};
    f.baseline_meaning = "one reload buffer";
    f.scenario_keys = {"prefetch_depth", "prefetch_budget_gib"};
    f.predicted_variants = {"double", "prefetch"};
    f.timeline_shows_copies = true;
    v.push_back(std::move(f));
  }
  {
    // MoE routing: one nonzero per expert, sorted (argsort + bincount), or on the device.
    FixSpec f;
    f.id = Fix::MoeRouting;
    f.name = "moe_routing";
    f.option_name = "moe";
    f.aliases = {"moe", "moe-routing"};
    f.variants = {"loop", "sorted", "device"};
    f.baseline_meaning = "one nonzero per expert";
    f.predicted_variants = {"sorted", "device"};
    v.push_back(std::move(f));
  }
  return v;
}

std::deque<FixSpec>& registry() {
  static std::deque<FixSpec> r = shipped_fixes();
  return r;
}

constexpr std::size_t kShipped = 3;

}  // namespace

std::optional<std::uint8_t> FixSpec::variant_index(std::string_view n) const {
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (variants[i] == n) return static_cast<std::uint8_t>(i);
  return std::nullopt;
}

const std::string& FixSpec::variant_name(std::uint8_t index) const { return variants.at(index); }

const std::deque<FixSpec>& fix_registry() { return registry(); }

FixSpec& mutable_fix_spec(Fix fix) {
  for (auto& f : registry())
    if (f.id == fix) return f;
  throw std::out_of_range(fmt::format("no fix registered with id {}", static_cast<int>(fix)));
}

const FixSpec& fix_spec(Fix fix) { return mutable_fix_spec(fix); }

std::optional<Fix> find_fix(std::string_view n) {
  for (const auto& f : registry()) {
    if (f.name == n) return f.id;
    if (std::find(f.aliases.begin(), f.aliases.end(), n) != f.aliases.end()) return f.id;
  }
  return std::nullopt;
}

const FixSpec& register_fix(FixSpec spec) {
  for (const auto& f : registry()) {
    if (f.id == spec.id)
      throw std::invalid_argument(fmt::format("fix id {} is taken by {}", static_cast<int>(spec.id), f.name));
    if (f.name == spec.name || find_fix(spec.name))
      throw std::invalid_argument(fmt::format("fix name {} is taken", spec.name));
  }
  if (spec.name.empty() || spec.variants.size() < 2)
    throw std::invalid_argument("a fix needs a name and at least a baseline and one other variant");
  registry().push_back(std::move(spec));
  return registry().back();
}

void unregister_fix(Fix fix) {
  auto& r = registry();
  for (std::size_t i = kShipped; i < r.size(); ++i)
    if (r[i].id == fix) {
      r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

const std::string& variant_name(PackingVariant v) {
  return fix_spec(Fix::Packing).variant_name(static_cast<std::uint8_t>(v));
}
const std::string& variant_name(OffloadVariant v) {
  return fix_spec(Fix::Offload).variant_name(static_cast<std::uint8_t>(v));
}
const std::string& variant_name(MoeVariant v) {
  return fix_spec(Fix::MoeRouting).variant_name(static_cast<std::uint8_t>(v));
}

std::uint8_t parse_variant(Fix fix, std::string_view name, std::string_view what) {
  const FixSpec& f = fix_spec(fix);
  if (auto i = f.variant_index(name)) return *i;
  std::string known;
  for (const auto& n : f.variants) known += (known.empty() ? "" : ", ") + n;
  throw InputError(fmt::format("{}: expected one of {}, got \"{}\"", what, known, name));
}

PackingVariant packing_variant(std::string_view name) {
  return static_cast<PackingVariant>(parse_variant(Fix::Packing, name, "packing variant"));
}
OffloadVariant offload_variant(std::string_view name) {
  return static_cast<OffloadVariant>(parse_variant(Fix::Offload, name, "offload variant"));
}
MoeVariant moe_variant(std::string_view name) {
  return static_cast<MoeVariant>(parse_variant(Fix::MoeRouting, name, "moe variant"));
}

}  // namespace syncscope::fixes
