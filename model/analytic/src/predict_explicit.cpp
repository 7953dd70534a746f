// `predict` from explicit values or a scenario (predict_inputs.hpp): which fixes, what a
// scenario implies, and each shipped fix's predictor from option values. The formulas are
// analytic.cpp's and predict.cpp's; this file turns option text into their parameters.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/model/analytic.hpp"
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

// What a scenario implies for options left unset: its layers, experts, prefetch depth and
// the bytes one layer's checkpoint reloads.
void apply_scenario(ExplicitPredictInputs& in, std::set<fixes::Fix>& want, PredictionReport& rep) {
  scenario::Scenario sc = scenario::load_scenario(in.scenario);
  rep.source = "scenario " + in.scenario;
  if (!in.hf_config.empty()) {
    scenario::replace_model(sc, scenario::load_hf_config(in.hf_config), in.hf_config);
    scenario::validate_scenario(sc);
    rep.source += " with the model of " + in.hf_config;
  }
  if (in.layers == 0) in.layers = sc.layers();
  if (sc.model.is_moe()) {
    if (in.experts == 0) in.experts = sc.model.num_local_experts;
    if (in.moe_layers == 0) {
      // Only the routed layers sync on routing: dense-first (first_k_dense_replace) and
      // interleaved dense layers have no router, so the fix saves nothing there.
      for (int l = 0; l < in.layers; ++l) in.moe_layers += sc.model.moe_layer(l) ? 1 : 0;
      if (in.moe_layers < in.layers)
        in.moe_layers_note = fmt::format("moe: {} of the {} layers route (the others are dense MLPs): N = {}",
                                         in.moe_layers, in.layers, in.moe_layers);
    }
  }
  // Unsloth's mask cache holds one (dtype, window) entry: over the forward's layers in order,
  // the cached variant rebuilds at each window change (the packing program's layer windows).
  if (in.cached_rebuilds == 0) {
    const scenario::ModelTraits traits = scenario::model_traits(sc.model);
    std::vector<int> windows;
    for (int l = 0; l < in.layers; ++l) windows.push_back(scenario::layer_window(traits, l));
    const std::vector<bool> misses = packing_mask_cache_misses(windows);
    in.cached_rebuilds = std::max(1, static_cast<int>(std::count(misses.begin(), misses.end(), true)));
    in.cached_rebuilds_why =
        fmt::format("over the forward's {} layers in order, windows from the model's layer types", in.layers);
  }
  for (const auto& f : sc.fixes) {
    if (in.fixes.empty()) want.insert(f.fix);
    if (f.fix == fixes::Fix::Offload) in.prefetch_depth = f.prefetch_depth;
  }
  if (in.reload_bytes == 0 && in.copy_ms.empty() && sc.model.hidden_size > 0) {
    // The checkpointed activation of a layer is its input hidden state [T, hidden].
    const double elem = sc.dtype == "fp32" ? 4 : 2;
    in.reload_bytes = static_cast<double>(sc.batch.packed_tokens) * sc.model.hidden_size * elem;
    in.reload_note = fmt::format(
        "reload per layer = packed tokens {} x hidden {} x {} B = {:.1f} MiB (the layer's "
        "input hidden state)",
        sc.batch.packed_tokens, sc.model.hidden_size, elem, in.reload_bytes / (1 << 20));
  }
}

}  // namespace

PredictionReport predict_explicit(ExplicitPredictInputs in) {
  PredictionReport rep;
  std::set<fixes::Fix> want = chosen_fixes(in.fixes);
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
