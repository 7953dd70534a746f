// The fixes a scenario selects, checked against the fix registry: each fix once, its variants
// (the baseline among them), its tolerance, its own number and word keys (FixSpec::number_keys,
// word_keys) and the scenarios it cannot run in (FixSpec::check_scenario). Part of
// check_scenario (scenario.cpp), which loads and checks the rest.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "checks.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::scenario::detail {

void check_fix_selections(const Scenario& s, const Locator& where) {
  if (s.fixes.empty()) fail(where, "fixes", "at least one of " + fix_names(", "), "none");
  std::set<fixes::Fix> seen_fixes;
  for (const auto& f : s.fixes) {
    const std::string fp = std::string("fixes.") + fix_name(f.fix);
    if (!seen_fixes.insert(f.fix).second) fail(where, fp, "each fix once", "it twice");
    const auto known = fix_variants(f.fix);
    if (f.variants.empty()) fail(where, fp + ".variants", "a non-empty list of: " + join(known), "an empty list");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < f.variants.size(); ++i) {
      const auto& v = f.variants[i];
      const std::string vp = fmt::format("{}.variants[{}]", fp, i);
      if (std::find(known.begin(), known.end(), v) == known.end())
        fail(where, vp, "one of " + join(known), "\"" + v + "\"");
      if (!seen.insert(v).second) fail(where, vp, "each variant once", "\"" + v + "\" again");
    }
    if (!seen.count(baseline_variant(f.fix)))
      fail(where, fp + ".variants",
           fmt::format("a list that includes the baseline \"{}\" (speedups are relative to it)",
                       baseline_variant(f.fix)),
           "[" + join(f.variants) + "]");
    if (!(f.tolerance > 0 && f.tolerance <= 10))
      fail(where, fp + ".tolerance", "a relative error in (0, 10], e.g. 0.15", fmt::format("{}", f.tolerance));
    for (const auto& nk : fixes::fix_spec(f.fix).number_keys) {
      const auto it = f.numbers.find(nk.key);
      if (it == f.numbers.end()) continue;
      const double v = it->second;
      if (nk.integer && v == std::floor(v) && std::abs(v) < 1e18)
        in_range(where, fp + "." + nk.key, static_cast<long long>(v), nk.range);
      else if (nk.integer) fail(where, fp + "." + nk.key, bounds::describe_int(nk.range), fmt::format("{}", v));
      else if (!nk.range.contains(v))
        fail(where, fp + "." + nk.key, bounds::describe_number(nk.range, nk.unit), fmt::format("{}", v));
    }
    for (const auto& wk : fixes::fix_spec(f.fix).word_keys) {
      const auto it = f.words.find(wk.key);
      if (it != f.words.end() && std::find(wk.values.begin(), wk.values.end(), it->second) == wk.values.end())
        fail(where, fp + "." + wk.key, "one of " + join(wk.values), "\"" + it->second + "\"");
    }
    if (const auto& check = fixes::fix_spec(f.fix).check_scenario)
      if (const auto problem = check(s)) fail(where, problem->field, problem->expected, problem->got);
  }
}

}  // namespace syncscope::scenario::detail
