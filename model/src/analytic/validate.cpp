#include "syncscope/model/validate.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace syncscope::model {

namespace {

using json = nlohmann::ordered_json;

// A difference under this fraction of the slower speedup is a tie, not an order the model
// must reproduce: simulated runs carry no spread (their "intervals" are a few ns of
// rounding wide), and two reload schedules that simulate 1.0258x and 1.0257x are the same
// speed.
constexpr double kTieFraction = 0.005;

// a is measurably faster than b: their measured intervals do not overlap (point values
// compare as degenerate intervals) and a is more than kTieFraction faster.
bool measured_faster(const VariantCheck& a, const VariantCheck& b) {
  const Estimate& x = a.measured;
  const Estimate& y = b.measured;
  return x.lo > y.hi && x.value > y.value * (1.0 + kTieFraction);
}

}  // namespace

ValidationReport validate_results(const RunResults& results, const std::string& source) {
  ValidationReport rep;
  rep.source = source;
  rep.mode = results.mode;
  double sum = 0;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;
  for (const auto& v : results.variants) {
    VariantCheck c;
    c.scenario = v.scenario;
    c.fix = v.fix;
    c.variant = v.variant;
    c.baseline = v.baseline;
    c.predicted = v.predicted_speedup;
    c.measured = v.measured_speedup;
    c.tolerance = v.tolerance;
    c.has_prediction = v.predicted_speedup.value > 0;
    if (c.has_prediction && c.measured.value > 0) {
      c.error = (c.predicted.value - c.measured.value) / c.measured.value;
      c.within = std::fabs(c.error) <= c.tolerance;
      if (!c.baseline) {
        ++rep.compared;
        sum += std::fabs(c.error);
        rep.max_abs_error = std::max(rep.max_abs_error, std::fabs(c.error));
      }
      if (!c.within) ++rep.failures;
    } else if (!c.baseline) {
      rep.notes.push_back(fmt::format("{}/{}/{}: no prediction in the results; not compared", c.scenario, c.fix,
                                      c.variant));
    }
    groups[{c.scenario, c.fix}].push_back(rep.variants.size());
    rep.variants.push_back(c);
  }
  rep.mape = rep.compared ? sum / rep.compared : 0;

  for (const auto& [key, idx] : groups) {
    RankingCheck rk;
    rk.scenario = key.first;
    rk.fix = key.second;
    std::vector<std::size_t> with_pred;
    for (auto i : idx)
      if (rep.variants[i].has_prediction) with_pred.push_back(i);
    if (with_pred.size() < 2) continue;
    auto by = [&](auto get) {
      std::vector<std::size_t> o = with_pred;
      std::stable_sort(o.begin(), o.end(), [&](auto a, auto b) { return get(rep.variants[a]) > get(rep.variants[b]); });
      std::vector<std::string> names;
      for (auto i : o) names.push_back(rep.variants[i].variant);
      return names;
    };
    rk.measured_order = by([](const VariantCheck& c) { return c.measured.value; });
    rk.predicted_order = by([](const VariantCheck& c) { return c.predicted.value; });
    for (std::size_t a = 0; a < with_pred.size(); ++a)
      for (std::size_t b = 0; b < with_pred.size(); ++b) {
        const auto& A = rep.variants[with_pred[a]];
        const auto& B = rep.variants[with_pred[b]];
        if (measured_faster(A, B) && !(A.predicted.value > B.predicted.value)) {
          rk.matches = false;
          rk.discordant.push_back(fmt::format("{} measured faster than {}, predicted not", A.variant, B.variant));
        }
      }
    rep.ranking_matches = rep.ranking_matches && rk.matches;
    rep.rankings.push_back(std::move(rk));
  }
  if (rep.compared == 0) rep.notes.push_back("no non-baseline variant carries a prediction: nothing to compare");
  rep.published = published_checks(results);  // issue 14: forward and step beside the blog's
  return rep;
}

std::string validation_to_json(const ValidationReport& r) {
  auto est = [](const Estimate& e) { return json{{"value", e.value}, {"lo", e.lo}, {"hi", e.hi}, {"n", e.n}}; };
  json j;
  j["schema_version"] = r.schema_version;
  j["kind"] = "syncscope.validation";
  j["source"] = r.source;
  j["mode"] = r.mode;
  j["variants"] = json::array();
  for (const auto& v : r.variants) {
    j["variants"].push_back({{"scenario", v.scenario},
                             {"fix", v.fix},
                             {"variant", v.variant},
                             {"baseline", v.baseline},
                             {"has_prediction", v.has_prediction},
                             {"predicted_speedup", est(v.predicted)},
                             {"measured_speedup", est(v.measured)},
                             {"error", v.error},
                             {"tolerance", v.tolerance},
                             {"within_tolerance", v.within}});
  }
  j["rankings"] = json::array();
  for (const auto& k : r.rankings)
    j["rankings"].push_back({{"scenario", k.scenario},
                             {"fix", k.fix},
                             {"measured_order", k.measured_order},
                             {"predicted_order", k.predicted_order},
                             {"matches", k.matches},
                             {"discordant", k.discordant}});
  j["summary"] = {{"compared", r.compared},
                  {"mape", r.mape},
                  {"max_abs_error", r.max_abs_error},
                  {"ranking_matches", r.ranking_matches},
                  {"failures", r.failures}};
  j["published"] = json::array();
  for (const auto& p : r.published)
    j["published"].push_back({{"scenario", p.scenario}, {"fix", p.fix}, {"variant", p.variant}, {"model", p.model},
                              {"what", p.what}, {"published_speedup", p.published}, {"speedup", p.measured},
                              {"difference", p.difference}, {"training_published", p.training_published},
                              {"training_run", p.training_run}, {"source", p.source}});
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

std::string validation_to_table(const ValidationReport& r) {
  std::string out = fmt::format("syncscope validate: {} ({} results)\n", r.source, r.mode);
  out += fmt::format("{:<24} {:<12} {:<10} {:>26} {:>26} {:>8} {:>6}  {}\n", "scenario", "fix", "variant",
                     "predicted speedup", "measured speedup", "error", "tol", "verdict");
  auto e = [](const Estimate& x) { return fmt::format("{:.4f} [{:.4f},{:.4f}]", x.value, x.lo, x.hi); };
  for (const auto& v : r.variants) {
    std::string verdict = v.baseline ? "baseline" : !v.has_prediction ? "no prediction" : v.within ? "ok" : "FAIL";
    out += fmt::format("{:<24} {:<12} {:<10} {:>26} {:>26} {:>+7.2f}% {:>5.0f}%  {}\n", v.scenario, v.fix, v.variant,
                       v.has_prediction ? e(v.predicted) : "-", e(v.measured), 100 * v.error, 100 * v.tolerance, verdict);
  }
  for (const auto& k : r.rankings) {
    std::string m, p;
    for (const auto& s : k.measured_order) m += (m.empty() ? "" : " > ") + s;
    for (const auto& s : k.predicted_order) p += (p.empty() ? "" : " > ") + s;
    out += fmt::format("ranking {}/{}: measured {} | predicted {} | {}\n", k.scenario, k.fix, m, p,
                       k.matches ? "same order" : "DIFFERENT ORDER");
    for (const auto& d : k.discordant) out += fmt::format("  {}\n", d);
  }
  out += fmt::format("MAPE {:.2f}% over {} variants, max |error| {:.2f}%, ranking {}, {} outside tolerance\n",
                     100 * r.mape, r.compared, 100 * r.max_abs_error, r.ranking_matches ? "matches" : "differs",
                     r.failures);
  for (const auto& p : r.published)
    out += fmt::format("published {}/{}/{} {}: {:.4f} here vs {:.4f} published ({:+.1f}%; {} here, {} there)\n",
                       p.scenario, p.fix, p.variant, p.what, p.measured, p.published, 100 * p.difference,
                       p.training_run, p.training_published.empty() ? "mode not stated" : p.training_published);
  for (const auto& n : r.notes) out += fmt::format("note: {}\n", n);
  return out;
}

}  // namespace syncscope::model
