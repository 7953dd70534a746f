// The model's results as text for people: `predict`'s report, `validate`'s table and a
// trace calibration's table (model/predict.hpp, validate.hpp, trace_calibration.hpp hold the
// structs). Their JSON stays in model/: it is the data contract, and the model's replay
// embeds the prediction's JSON in its own.
#include "syncscope/reports/model_printers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "syncscope/core/text.hpp"
#include "text_cells.hpp"

namespace syncscope {

namespace {

using reports_detail::ms_text;
std::string ms_interval(const model::Interval& x) {
  if (x.is_exact()) return ms_text(x.value);
  return fmt::format("{} [{:.3f}, {:.3f}]", ms_text(x.value), x.lo / 1e6, x.hi / 1e6);
}

// A calibration field's display scale and unit.
struct Shown {
  double scale;
  const char* unit;
};
Shown shown(const std::string& field) {
  if (field.ends_with("_bytes_per_s")) return {1e9, "GB/s"};
  if (field.ends_with("_ns")) return {1e3, "us"};
  if (field == "memory_bytes") return {1e9, "GB"};
  return {1, ""};
}

// One side's order as the table prints it: neighbours within model::kRankingTieFraction of
// each other are a tie ("a = b"), not an order the numbers do not have; `group` numbers the
// tie groups (equal number: tied) and `rank` each variant's place.
struct PrintedOrder {
  std::string text;
  std::map<std::string, int> group, rank;
};

PrintedOrder printed_order(const model::ValidationReport& r, const model::RankingCheck& k, bool predicted) {
  auto value_of = [&](const std::string& variant) -> std::optional<double> {
    for (const auto& v : r.variants)
      if (v.scenario == k.scenario && v.fix == k.fix && v.layers == k.layers && v.variant == variant)
        return predicted ? v.predicted.value : v.measured.value;
    return std::nullopt;
  };
  const auto& order = predicted ? k.predicted_order : k.measured_order;
  PrintedOrder p;
  int group = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0) {
      const auto a = value_of(order[i - 1]), b = value_of(order[i]);
      const bool tie =
          a && b && std::fabs(*a - *b) <= model::kRankingTieFraction * std::min(std::fabs(*a), std::fabs(*b));
      p.text += tie ? " = " : " > ";
      if (!tie) ++group;
    }
    p.text += order[i];
    p.group[order[i]] = group;
    p.rank[order[i]] = static_cast<int>(i);
  }
  return p;
}

// The verdict beside a ranking: "DIFFERENT ORDER" when validate found a discordant pair;
// otherwise "same order", said precisely where the two sides tie differently ("predicted ties
// a = b; simulated orders them") or where a pair is printed in opposite orders that
// validate accepts because the observed intervals overlap.
std::string ranking_verdict(const model::RankingCheck& k, const PrintedOrder& m, const PrintedOrder& p,
                            const std::string& seen) {
  if (!k.matches) return "DIFFERENT ORDER";
  std::vector<std::string> both, predicted_only, observed_only, overlap;
  const auto& names = k.measured_order;
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size(); ++j) {
      const std::string &a = names[i], &b = names[j];
      if (!m.group.count(a) || !m.group.count(b) || !p.group.count(a) || !p.group.count(b)) continue;
      const bool tm = m.group.at(a) == m.group.at(b), tp = p.group.at(a) == p.group.at(b);
      // Each pair named in the order of the side that prints it.
      const std::string in_p = p.rank.at(a) < p.rank.at(b) ? a + " = " + b : b + " = " + a;
      if (tm && tp) both.push_back(a + " = " + b);
      else if (tp) predicted_only.push_back(in_p);
      else if (tm) observed_only.push_back(a + " = " + b);
      else if (p.rank.at(a) > p.rank.at(b)) overlap.push_back(a + " and " + b);
    }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  std::vector<std::string> why;
  if (!predicted_only.empty())
    why.push_back(fmt::format("predicted ties {}; {} orders them", list(predicted_only), seen));
  if (!observed_only.empty())
    why.push_back(fmt::format("{} ties {}; predicted orders them", seen, list(observed_only)));
  if (!overlap.empty())
    why.push_back(fmt::format("{} printed in opposite orders, within the {} intervals' overlap", list(overlap), seen));
  if (why.empty() && !both.empty()) why.push_back(fmt::format("both tie {}", list(both)));
  std::string out = "same order";
  for (std::size_t i = 0; i < why.size(); ++i) out += (i == 0 ? " (" : "; ") + why[i];
  return why.empty() ? out : out + ")";
}

std::string ranking_line(const model::ValidationReport& r, const model::RankingCheck& k, const std::string& seen,
                         bool sweep) {
  const PrintedOrder m = printed_order(r, k, false), p = printed_order(r, k, true);
  return fmt::format("ranking {}/{}{}: {} {} | predicted {} | {}\n", printable(k.scenario), printable(k.fix),
                     sweep ? fmt::format(" (L={})", k.layers) : "", seen, printable(m.text), printable(p.text),
                     printable(ranking_verdict(k, m, p, seen)));
}

}  // namespace

std::string prediction_to_text(const model::PredictionReport& r) {
  std::string out = fmt::format("syncscope predict: {}{}\n", printable(r.source),
                                r.gpu_profile.empty() ? "" : " (GPU profile " + printable(r.gpu_profile) + ")");
  out += "intervals are 90% (parameter intervals propagated by seeded Monte Carlo; bootstrap where fitted)\n";
  for (const auto& f : r.fixes) {
    out += fmt::format("\n{} / {}\n", f.fix, f.variant);
    if (!f.applicable) {
      out += fmt::format("  not applicable: {}\n", printable(f.reason));
      for (const auto& e : f.evidence) out += fmt::format("  evidence: {}\n", printable(e));
      for (const auto& n : f.notes) out += fmt::format("  note: {}\n", printable(n));
      continue;
    }
    out += fmt::format("  predicted saving: {} per step   ({})\n", ms_interval(f.saving_ns), f.formula);
    if (f.speedup) {
      std::string sp = f.speedup->is_exact()
                           ? fmt::format("{:.4f}x", f.speedup->value)
                           : fmt::format("{:.4f}x [{:.4f}, {:.4f}]", f.speedup->value, f.speedup->lo, f.speedup->hi);
      out += fmt::format("  predicted speedup: {} on a {} step\n", sp, ms_interval(*f.step_time_ns));
    } else {
      out += "  predicted speedup: needs a step time (--step-ms, or a trace with steps)\n";
    }
    if (!f.regime.empty()) out += fmt::format("  regime: {}\n", f.regime);
    for (const auto& [k, v] : f.alternatives) out += fmt::format("  {}: {}\n", k, ms_interval(v));
    std::string params;
    for (const auto& [k, v] : f.parameters) {
      bool is_time = k.find("_ns") != std::string::npos;
      std::string val = is_time ? ms_interval(v)
                                : (v.is_exact() ? fmt::format("{:.4g}", v.value)
                                                : fmt::format("{:.4g} [{:.4g}, {:.4g}]", v.value, v.lo, v.hi));
      params += fmt::format("{}{}={}", params.empty() ? "" : ", ", k, val);
    }
    out += fmt::format("  parameters: {}\n", params);
    for (const auto& e : f.evidence) out += fmt::format("  evidence: {}\n", printable(e));
    for (const auto& n : f.notes) out += fmt::format("  note: {}\n", printable(n));
  }
  for (const auto& n : r.notes) out += fmt::format("\nnote: {}\n", printable(n));
  return out;
}

std::string validation_to_table(const model::ValidationReport& r) {
  const std::string seen = model::observed_word(r.mode);
  std::string out = fmt::format("syncscope validate: {} ({} results)\n", printable(r.source), printable(r.mode));
  if (r.mode == "simulated")
    out += "a consistency check of the model against our own simulator (mode simulated), not accuracy on a GPU\n";
  out += fmt::format("{:<24} {:<12} {:<10} {:>26} {:>26} {:>8} {:>6}  {}\n", "scenario", "fix", "variant",
                     "predicted speedup", seen + " speedup", "error", "tol", "verdict");
  auto e = [](const model::Estimate& x) { return fmt::format("{:.4f} [{:.4f},{:.4f}]", x.value, x.lo, x.hi); };
  for (const auto& v : r.variants) {
    std::string verdict = v.baseline ? "baseline" : !v.has_prediction ? "no prediction" : v.within ? "ok" : "FAIL";
    out += fmt::format("{:<24} {:<12} {:<10} {:>26} {:>26} {:>+7.2f}% {:>5.0f}%  {}\n", printable(v.scenario),
                       printable(v.fix), printable(v.variant), v.has_prediction ? e(v.predicted) : "-", e(v.measured),
                       100 * v.error, 100 * v.tolerance, verdict);
  }
  std::map<std::pair<std::string, std::string>, int> depths;  // rankings per scenario and fix
  for (const auto& k : r.rankings) ++depths[{k.scenario, k.fix}];
  for (const auto& k : r.rankings) {
    out += ranking_line(r, k, seen, depths[{k.scenario, k.fix}] > 1);
    for (const auto& d : k.discordant) out += fmt::format("  {}\n", printable(d));
  }
  out += fmt::format("MAPE {:.2f}% over {} variants, max |error| {:.2f}%, ranking {}, {} outside tolerance\n",
                     100 * r.mape, r.compared, 100 * r.max_abs_error, r.ranking_matches ? "matches" : "differs",
                     r.failures);
  for (const auto& p : r.published)
    out += fmt::format("published {}/{}/{} {}: {:.4f} here vs {:.4f} published ({:+.1f}%; {} here, {} there)\n",
                       printable(p.scenario), printable(p.fix), printable(p.variant), p.what, p.measured, p.published,
                       100 * p.difference, p.training_run,
                       p.training_published.empty() ? "mode not stated" : p.training_published);
  for (const auto& n : r.notes) out += fmt::format("note: {}\n", printable(n));
  return out;
}

std::string calibration_to_text(const calibrate::TraceCalibration& c) {
  std::string out = fmt::format("GPU profile '{}': {}\n", printable(c.profile.name), printable(c.profile.description));
  out += fmt::format("{:<26} {:>12} {:>25} {:>8}  {}\n", "field", "value", "90% interval", "events", "from");
  for (const auto& e : c.estimates) {
    const Shown s = shown(e.field);
    out += fmt::format("{:<26} {:>9.4g} {:<4} {:>12.4g}..{:<12.4g} {:>8}  trace\n", e.field, e.value.value / s.scale,
                       s.unit, e.value.lo / s.scale, e.value.hi / s.scale, e.events);
  }
  for (const auto& f : c.from_base) out += fmt::format("{:<26} {:>12} {:>25} {:>8}  base\n", f, "", "", "");
  if (!c.kernel_classes.empty()) {
    out += "kernel time per class at the trace's shapes:\n";
    out += fmt::format("  {:<12} {:>10} {:>23} {:>10} {:>10} {:>8} {:>6}\n", "class", "median us", "90% interval",
                       "p10 us", "p90 us", "events", "names");
    for (const auto& k : c.kernel_classes)
      out += fmt::format("  {:<12} {:>10.2f} {:>10.2f}..{:<10.2f} {:>10.2f} {:>10.2f} {:>8} {:>6}\n", k.kernel_class,
                         k.median_ns.value / 1e3, k.median_ns.lo / 1e3, k.median_ns.hi / 1e3, k.p10_ns / 1e3,
                         k.p90_ns / 1e3, k.events, k.names);
  }
  for (const auto& n : c.notes) out += "note: " + printable(n) + "\n";
  for (const auto& w : c.warnings) out += "warning: " + printable(w) + "\n";
  return out;
}

}  // namespace syncscope
