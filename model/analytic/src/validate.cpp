#include "syncscope/model/validate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope::model {

namespace {

using json = nlohmann::ordered_json;

std::string observed_by(const std::string& mode) {
  if (mode == "simulated")
    return "the simulator: a consistency check of the model against our own simulator, not accuracy on a GPU";
  if (mode == "measured") return "measured runs on a GPU";
  return "unknown";
}

constexpr double kTieFraction = kRankingTieFraction;

// a is measurably faster than b: their measured intervals do not overlap (point values
// compare as degenerate intervals) and a is more than kTieFraction faster.
bool measured_faster(const VariantCheck& a, const VariantCheck& b) {
  const Estimate& x = a.measured;
  const Estimate& y = b.measured;
  return x.lo > y.hi && x.value > y.value * (1.0 + kTieFraction);
}

// Groups up to this size list every discordant pair (at most 4096 comparisons); larger
// ones use discordant_partners() below, O(n log n), and list the first kDiscordantListed.
constexpr std::size_t kPairwiseMax = 64;
constexpr std::size_t kDiscordantListed = 20;

// For each variant B of the group (indices into `v`), the position in `idx` of a variant A
// that is measured faster than B (measured_faster) but not predicted faster, or -1. A sweep
// over the measured intervals: variants A enter in decreasing `lo`, each B is asked once
// every A with A.lo > B.hi has entered; among those, the A with A.value above B's tie
// threshold and the lowest prediction is found in a Fenwick tree of prefix minima over
// value ranks (reversed, so a prefix is "value above the threshold"). O(n log n).
std::vector<long> discordant_partners(const std::vector<VariantCheck>& v, const std::vector<std::size_t>& idx) {
  const std::size_t n = idx.size();
  std::vector<double> values;
  values.reserve(n);
  for (auto i : idx) values.push_back(v[i].measured.value);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const std::size_t m = values.size();
  struct Best {
    double pred;
    long pos;
  };
  const Best none{std::numeric_limits<double>::infinity(), -1};
  std::vector<Best> tree(m + 1, none);  // 1-based Fenwick tree over reversed ranks
  auto better = [](const Best& a, const Best& b) {
    return a.pred < b.pred || (a.pred == b.pred && a.pos >= 0 && (b.pos < 0 || a.pos < b.pos));
  };
  auto insert = [&](std::size_t reversed_rank, Best b) {
    for (std::size_t k = reversed_rank + 1; k <= m; k += k & (~k + 1))
      if (better(b, tree[k])) tree[k] = b;
  };
  auto prefix_min = [&](std::size_t count) {  // over reversed ranks [0, count)
    Best out = none;
    for (std::size_t k = count; k > 0; k -= k & (~k + 1))
      if (better(tree[k], out)) out = tree[k];
    return out;
  };
  std::vector<std::size_t> by_lo(n), by_hi(n);
  for (std::size_t k = 0; k < n; ++k) by_lo[k] = by_hi[k] = k;
  std::sort(by_lo.begin(), by_lo.end(), [&](auto a, auto b) { return v[idx[a]].measured.lo > v[idx[b]].measured.lo; });
  std::sort(by_hi.begin(), by_hi.end(), [&](auto a, auto b) { return v[idx[a]].measured.hi > v[idx[b]].measured.hi; });
  std::vector<long> out(n, -1);
  std::size_t next = 0;
  for (std::size_t b : by_hi) {
    const VariantCheck& B = v[idx[b]];
    while (next < n && v[idx[by_lo[next]]].measured.lo > B.measured.hi) {
      const std::size_t a = by_lo[next++];
      const VariantCheck& A = v[idx[a]];
      const auto rank =
          static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), A.measured.value) - values.begin());
      insert(m - 1 - rank, Best{A.predicted.value, static_cast<long>(a)});
    }
    // Values strictly above B's tie threshold: ranks [r0, m), reversed ranks [0, m - r0).
    const double threshold = B.measured.value * (1.0 + kTieFraction);
    const auto r0 =
        static_cast<std::size_t>(std::upper_bound(values.begin(), values.end(), threshold) - values.begin());
    const Best best = prefix_min(m - r0);
    if (best.pos >= 0 && !(best.pred > B.predicted.value)) out[b] = best.pos;
  }
  return out;
}

}  // namespace

namespace {
constexpr double kMaxTolerance = 10.0;
}  // namespace

ValidationReport validate_results(const RunResults& results, const std::string& source) {
  ValidationReport rep;
  rep.source = source;
  rep.mode = results.mode;
  double sum = 0;
  std::map<std::tuple<std::string, std::string, int>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < results.variants.size(); ++i) {
    const auto& v = results.variants[i];
    // A tolerance is a fraction of the measured speedup: above 10 (1000%) every prediction
    // passes, and the verdict means nothing (1e300 was accepted).
    if (!(v.tolerance > 0 && v.tolerance <= kMaxTolerance))
      throw InputError(
          fmt::format("{}: $.variants[{}].tolerance: {} is outside (0, {}] (a fraction of the measured "
                      "speedup, e.g. 0.10)",
                      source, i, v.tolerance, kMaxTolerance));
    VariantCheck c;
    c.scenario = v.scenario;
    c.fix = v.fix;
    c.variant = v.variant;
    c.layers = v.layers;
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
      rep.notes.push_back(
          fmt::format("{}/{}/{}: no prediction in the results; not compared", c.scenario, c.fix, c.variant));
    }
    groups[{c.scenario, c.fix, c.layers}].push_back(rep.variants.size());
    rep.variants.push_back(c);
  }
  rep.mape = rep.compared ? sum / rep.compared : 0;

  for (const auto& [key, idx] : groups) {
    RankingCheck rk;
    rk.scenario = std::get<0>(key);
    rk.fix = std::get<1>(key);
    rk.layers = std::get<2>(key);
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
    if (with_pred.size() <= kPairwiseMax) {
      for (std::size_t a = 0; a < with_pred.size(); ++a)
        for (std::size_t b = 0; b < with_pred.size(); ++b) {
          const auto& A = rep.variants[with_pred[a]];
          const auto& B = rep.variants[with_pred[b]];
          if (measured_faster(A, B) && !(A.predicted.value > B.predicted.value)) {
            rk.matches = false;
            rk.discordant.push_back(
                fmt::format("{} {} faster than {}, predicted not", A.variant, observed_word(results.mode), B.variant));
          }
        }
    } else {
      const auto found = discordant_partners(rep.variants, with_pred);
      std::size_t listed = 0, more = 0;
      for (std::size_t b = 0; b < with_pred.size(); ++b) {
        if (found[b] < 0) continue;
        rk.matches = false;
        if (listed < kDiscordantListed) {
          ++listed;
          rk.discordant.push_back(fmt::format("{} {} faster than {}, predicted not",
                                              rep.variants[with_pred[static_cast<std::size_t>(found[b])]].variant,
                                              observed_word(results.mode), rep.variants[with_pred[b]].variant));
        } else {
          ++more;
        }
      }
      if (more > 0)
        rk.discordant.push_back(
            fmt::format("... and {} more variants the model does not place below one measured "
                        "faster",
                        more));
    }
    rep.ranking_matches = rep.ranking_matches && rk.matches;
    rep.rankings.push_back(std::move(rk));
  }
  if (rep.compared == 0) rep.notes.push_back("no non-baseline variant carries a prediction: nothing to compare");
  rep.published = published_checks(results);  // Forward and step beside the blog's
  return rep;
}

std::string validation_to_json(const ValidationReport& r) {
  auto est = [](const Estimate& e) { return json{{"value", e.value}, {"lo", e.lo}, {"hi", e.hi}, {"n", e.n}}; };
  json j;
  j["schema_version"] = r.schema_version;
  j["kind"] = "syncscope.validation";
  j["source"] = r.source;
  j["mode"] = r.mode;
  // What the observed speedups are (schema 2: "observed_speedup", named by the mode, was
  // "measured_speedup" in every mode).
  j["observed_by"] = observed_by(r.mode);
  j["variants"] = json::array();
  for (const auto& v : r.variants) {
    j["variants"].push_back({{"scenario", v.scenario},
                             {"fix", v.fix},
                             {"variant", v.variant},
                             {"baseline", v.baseline},
                             {"has_prediction", v.has_prediction},
                             {"predicted_speedup", est(v.predicted)},
                             {"observed_speedup", est(v.measured)},
                             {"error", v.error},
                             {"tolerance", v.tolerance},
                             {"within_tolerance", v.within}});
  }
  j["rankings"] = json::array();
  for (const auto& k : r.rankings)
    j["rankings"].push_back({{"scenario", k.scenario},
                             {"fix", k.fix},
                             {"layers", k.layers},
                             {"observed_order", k.measured_order},
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
    j["published"].push_back({{"scenario", p.scenario},
                              {"fix", p.fix},
                              {"variant", p.variant},
                              {"model", p.model},
                              {"what", p.what},
                              {"published_speedup", p.published},
                              {"speedup", p.measured},
                              {"difference", p.difference},
                              {"training_published", p.training_published},
                              {"training_run", p.training_run},
                              {"source", p.source}});
  j["notes"] = r.notes;
  // Names from a results file we did not check may hold invalid UTF-8: replaced, not fatal.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string observed_word(const std::string& mode) {
  return mode == "simulated" ? "simulated" : mode == "measured" ? "measured" : "observed";
}

}  // namespace syncscope::model
