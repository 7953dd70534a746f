// `predict` from explicit values or a scenario (predict_inputs.hpp): which fixes, what a
// scenario implies, and each shipped fix's predictor from option values. The formulas are
// in each fix's folder (closed_form.hpp); each fix turns its options' text into their parameters.
#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::model {

Interval parse_interval_option(const std::string& text, const std::string& option, double scale, double max) {
  if (max < 0) max = bounds::kOptionTimeNs.hi;
  auto num = [&](const std::string& s) {
    try {
      std::size_t pos = 0;
      double v = std::stod(s, &pos);
      if (pos != s.size()) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      throw InputError(
          fmt::format("{} '{}': expected a number, VALUE:LO:HI or VALUE+-DELTA (e.g. 13.7, "
                      "13.7:12.9:14.5, 13.7+-0.8)",
                      option, text));
    }
  };
  auto parse = [&]() -> Interval {
    for (const std::string pm : {"+-", "\xC2\xB1"}) {
      if (auto p = text.find(pm); p != std::string::npos && p > 0) {
        double v = num(text.substr(0, p)), d = num(text.substr(p + pm.size()));
        SYNCSCOPE_INPUT_ERROR_IF(d < 0, fmt::format("{} '{}': the +- half-width must be >= 0", option, text));
        return {v, v - d, v + d};
      }
    }
    if (auto p = text.find(':'); p != std::string::npos) {
      auto q = text.find(':', p + 1);
      SYNCSCOPE_INPUT_ERROR_IF(q == std::string::npos,
                               fmt::format("{} '{}': the interval form is VALUE:LO:HI", option, text));
      return {num(text.substr(0, p)), num(text.substr(p + 1, q - p - 1)), num(text.substr(q + 1))};
    }
    return Interval::exact(num(text));
  };
  Interval x = parse();
  check_interval(x, option);
  SYNCSCOPE_INPUT_ERROR_IF(x.lo < 0, fmt::format("{} '{}': must not be negative", option, text));
  SYNCSCOPE_INPUT_ERROR_IF(!(x.hi * scale <= max),
                           fmt::format("{} '{}': at most {:g} in the option's unit ({})", option, text, max / scale,
                                       max == bounds::kOptionTimeNs.hi ? bounds::kOptionTimeNs.why
                                                                       : bounds::kSlowdown.why));
  return {x.value * scale, x.lo * scale, x.hi * scale};
}

std::optional<Interval> optional_interval_option(const std::string& text, const std::string& option, double scale) {
  if (text.empty()) return std::nullopt;
  return parse_interval_option(text, option, scale);
}

namespace {

// --fix: a registered fix's name or alias, or "all".
std::set<fixes::Fix> chosen_fixes(const std::vector<std::string>& names) {
  std::set<fixes::Fix> want;
  for (const auto& n : names) {
    if (n == "all") {
      for (const fixes::FixSpec& f : fixes::fix_registry()) want.insert(f.id);
      continue;
    }
    const auto f = fixes::find_fix(n);
    if (!f) {
      std::string known;  // the shortest spelling of each ("moe" for moe_routing)
      for (const fixes::FixSpec& s : fixes::fix_registry())
        known += (known.empty() ? "" : ", ") + (s.aliases.empty() ? s.name : s.aliases.front());
      throw InputError(fmt::format("--fix '{}': expected {} or all", n, known));
    }
    want.insert(*f);
  }
  return want;
}

// Each fix's options as given: a flag some registered fix declared, of its declared kind and
// range (the CLI adds only declared flags; a library caller may set anything).
void check_values(const ExplicitPredictInputs& in) {
  for (const auto& [flag, text] : in.values) {
    const fixes::PredictOption* decl = nullptr;
    for (const fixes::FixSpec& f : fixes::fix_registry())
      for (const fixes::PredictOption& o : f.predict_options)
        if (o.flag == flag) decl = &o;
    SYNCSCOPE_INPUT_ERROR_IF(!decl, fmt::format("predict: --{} is no fix's option", flag));
    if (decl->kind == fixes::PredictOption::Kind::Integer) (void)in.integer(flag, 0);
    if (decl->kind == fixes::PredictOption::Kind::Number) (void)in.number(flag, 0);
  }
}

// The declaration of --flag (a registered fix's), for its kind's range.
const fixes::PredictOption& declaration(const std::string& flag) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    for (const fixes::PredictOption& o : f.predict_options)
      if (o.flag == flag) return o;
  throw Error(fmt::format("predict: --{} is no registered fix's option", flag));
}

// What a scenario implies for options left unset: its layers and fixes, then each fix's own
// (FixSpec::predict_from_scenario: experts, the prefetch depth, the bytes one layer's
// checkpoint reloads, the cached variant's mask rebuilds).
void apply_scenario(ExplicitPredictInputs& in, std::set<fixes::Fix>& want, PredictionReport& rep) {
  scenario::Scenario sc = scenario::load_scenario(in.scenario);
  rep.source = "scenario " + in.scenario;
  if (!in.hf_config.empty()) {
    scenario::replace_model(sc, scenario::load_hf_config(in.hf_config), in.hf_config);
    scenario::validate_scenario(sc);
    rep.source += " with the model of " + in.hf_config;
  }
  if (in.layers == 0) in.layers = sc.layers();
  for (const auto& f : sc.fixes)
    if (in.fixes.empty()) want.insert(f.fix);
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.predict_from_scenario) f.predict_from_scenario(sc, in);
}

}  // namespace

const std::string& ExplicitPredictInputs::text(const std::string& flag) const {
  static const std::string none;
  auto it = values.find(flag);
  return it == values.end() ? none : it->second;
}

const std::string& ExplicitPredictInputs::note(const std::string& flag) const {
  static const std::string none;
  auto it = notes.find(flag);
  return it == notes.end() ? none : it->second;
}

std::optional<Interval> ExplicitPredictInputs::interval(const std::string& flag, double scale, double max) const {
  if (!given(flag)) return std::nullopt;
  return parse_interval_option(text(flag), "--" + flag, scale, max);
}

std::optional<Interval> ExplicitPredictInputs::round_trip() const {
  if (!round_trip_us.empty()) return parse_interval_option(round_trip_us, "--round-trip-us", 1e3);
  if (profile) return Interval::exact(profile->sync_round_trip_ns);
  return std::nullopt;
}

int ExplicitPredictInputs::integer(const std::string& flag, int fallback) const {
  if (!given(flag)) return fallback;
  const bounds::Range& r = declaration(flag).range;
  const auto v = bounds::parse_int_in(text(flag), r);
  SYNCSCOPE_INPUT_ERROR_IF(!v, fmt::format("--{} '{}': expected {}", flag, text(flag), bounds::describe_int(r)));
  return static_cast<int>(*v);
}

double ExplicitPredictInputs::number(const std::string& flag, double fallback) const {
  if (!given(flag)) return fallback;
  const bounds::Range& r = declaration(flag).range;
  const auto v = bounds::parse_number_in(text(flag), r);
  SYNCSCOPE_INPUT_ERROR_IF(!v, fmt::format("--{} '{}': expected {}", flag, text(flag), bounds::describe_number(r)));
  return *v;
}

PredictionReport predict_explicit(ExplicitPredictInputs in) {
  PredictionReport rep;
  std::set<fixes::Fix> want = chosen_fixes(in.fixes);
  check_values(in);
  rep.source = "explicit values";
  if (!in.scenario.empty()) apply_scenario(in, want, rep);
  if (in.profile) rep.gpu_profile = in.profile->name;
  if (want.empty())
    for (const fixes::FixSpec& f : fixes::fix_registry())
      if (f.has_inputs && f.has_inputs(in)) want.insert(f.id);
  SYNCSCOPE_INPUT_ERROR_IF(want.empty(),
                           "predict: nothing to predict: give a fix and its inputs (e.g. --fix packing --layers 16 "
                           "--per-layer-ms 13.7), --scenario, or --trace");
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    if (!want.count(f.id)) continue;
    SYNCSCOPE_INPUT_ERROR_IF(!f.predict, fmt::format("--fix {}: this fix has no closed-form predictor", f.name));
    f.predict(in, rep);
  }
  if (!in.step_ns) rep.notes.push_back("no --step-ms: savings only; a speedup needs the baseline step time");
  return rep;
}

void replace_step_time(PredictionReport& report, const Interval& step_ns, const PropagationOptions& prop) {
  for (auto& f : report.fixes) attach_speedup(f, step_ns, prop);
  report.notes.push_back("--step-ms replaces the trace's step time");
}

}  // namespace syncscope::model
