// The fix registry: the list every layer loops over, and the lookups by id, name and variant.
// It names no fix: each fix registers its identity and hooks from its own folder
// (fixes/<name>/src/registry_entry.cpp), and fixes/shipped registers them all.
#include "syncscope/fixes/fix_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "syncscope/core/error.hpp"

namespace syncscope::fixes {

namespace {

// Every registered fix, in id order (fix_registry()'s order). Empty until the fixes register:
// each fix's identity and hooks live in its own folder (fixes/<name>/), and
// fixes::register_shipped_fixes() adds them all.
std::deque<FixSpec>& registry() {
  static std::deque<FixSpec> r;
  return r;
}

// The registry for a layer that loops over it or looks a fix up. An empty one means nobody
// called register_shipped_fixes(): said here, rather than as a fix unknown to a scenario or
// a step built without the fixes' operators.
std::deque<FixSpec>& registered() {
  auto& r = registry();
  SYNCSCOPE_THROW_IF(r.empty(),
                     "no fix is registered: call fixes::register_shipped_fixes() (syncscope/fixes/shipped.hpp, "
                     "library syncscope_fixes_shipped) before reading a scenario, building a step or predicting");
  return r;
}

}  // namespace

std::optional<std::uint8_t> FixSpec::variant_index(std::string_view n) const {
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (variants[i] == n) return static_cast<std::uint8_t>(i);
  return std::nullopt;
}

const std::string& FixSpec::variant_name(std::uint8_t index) const { return variants.at(index); }

const std::deque<FixSpec>& fix_registry() { return registered(); }

FixSpec& mutable_fix_spec(Fix fix) {
  for (auto& f : registered())
    if (f.id == fix) return f;
  throw std::out_of_range(fmt::format("no fix registered with id {}", static_cast<int>(fix)));
}

const FixSpec& fix_spec(Fix fix) { return mutable_fix_spec(fix); }

std::optional<Fix> find_fix(std::string_view n) {
  for (const auto& f : registered()) {
    if (f.name == n) return f.id;
    if (std::find(f.aliases.begin(), f.aliases.end(), n) != f.aliases.end()) return f.id;
  }
  return std::nullopt;
}

namespace {

// What register_fix and extend_fix hold a fix's entry to: its id, names, aliases and predict
// options against every other registered fix (`self`: the entry being extended, skipped),
// and its own declarations.
void check_spec(const FixSpec& spec, const FixSpec* self) {
  auto spelled = [](const FixSpec& f, const std::string& n) {
    return f.name == n || std::find(f.aliases.begin(), f.aliases.end(), n) != f.aliases.end();
  };
  for (const auto& f : registry()) {
    if (&f == self) continue;
    if (f.id == spec.id)
      throw std::invalid_argument(fmt::format("fix id {} is taken by {}", static_cast<int>(spec.id), f.name));
    if (spelled(f, spec.name)) throw std::invalid_argument(fmt::format("fix name {} is taken", spec.name));
    for (const auto& a : spec.aliases)
      if (spelled(f, a)) throw std::invalid_argument(fmt::format("fix alias {} is taken by {}", a, f.name));
    // One --flag names one fix's value: `predict` adds each once (cli/cmd_predict.cpp).
    for (const auto& o : spec.predict_options)
      for (const auto& mine : f.predict_options)
        if (o.flag == mine.flag)
          throw std::invalid_argument(fmt::format("predict option --{} is taken by {}", o.flag, f.name));
  }
  for (std::size_t i = 0; i < spec.predict_options.size(); ++i) {
    const PredictOption& o = spec.predict_options[i];
    if (o.flag.empty() || o.flag.front() == '-' || o.help.empty())
      throw std::invalid_argument(
          fmt::format("{}: a predict option needs a flag without dashes and a help text", spec.name));
    if (o.kind != PredictOption::Kind::Time && !(o.range.lo <= o.range.hi && o.range.why && *o.range.why))
      throw std::invalid_argument(
          fmt::format("{}: predict option --{} needs a range and its reason", spec.name, o.flag));
    for (std::size_t j = 0; j < i; ++j)
      if (spec.predict_options[j].flag == o.flag)
        throw std::invalid_argument(fmt::format("{}: predict option --{} is declared twice", spec.name, o.flag));
  }
  if (spec.name.empty() || spec.variants.size() < 2)
    throw std::invalid_argument("a fix needs a name and at least a baseline and one other variant");
}

}  // namespace

const FixSpec& register_fix(FixSpec spec) {
  check_spec(spec, nullptr);
  // In id order whatever order the folders register in: outputs list fixes in this order.
  auto& r = registry();
  auto at = std::find_if(r.begin(), r.end(), [&](const FixSpec& f) { return f.id > spec.id; });
  return *r.insert(at, std::move(spec));
}

const FixSpec& extend_fix(Fix fix, const std::function<void(FixSpec&)>& add) {
  FixSpec& stored = mutable_fix_spec(fix);
  FixSpec grown = stored;
  add(grown);
  if (grown.id != stored.id || grown.name != stored.name)
    throw std::invalid_argument(fmt::format("extend_fix: {} may not change its id or name", stored.name));
  check_spec(grown, &stored);
  stored = std::move(grown);
  return stored;
}

void unregister_fix(Fix fix) {
  if (static_cast<std::uint8_t>(fix) < kFirstAddedFix) return;  // a shipped fix stays (fix_spec.hpp)
  auto& r = registry();
  r.erase(std::remove_if(r.begin(), r.end(), [&](const FixSpec& f) { return f.id == fix; }), r.end());
}

std::uint8_t parse_variant(Fix fix, std::string_view name, std::string_view what) {
  const FixSpec& f = fix_spec(fix);
  if (auto i = f.variant_index(name)) return *i;
  std::string known;
  for (const auto& n : f.variants) known += (known.empty() ? "" : ", ") + n;
  throw InputError(fmt::format("{}: expected one of {}, got \"{}\"", what, known, name));
}

}  // namespace syncscope::fixes
