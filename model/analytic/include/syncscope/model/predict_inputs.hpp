// `syncscope predict` from explicit values or a scenario: the inputs every fix's closed-form
// predictor reads (FixSpec::predict, fix_spec.hpp), and the entry point that chooses the
// fixes, derives what a scenario implies (its layers, then each fix's own: experts, reload
// bytes, prefetch depth) and runs their predictors. The CLI only parses options into
// ExplicitPredictInputs, adding each fix's declared options by looping over the registry.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/interval.hpp"
#include "syncscope/model/predict.hpp"

namespace syncscope::model {

// Option values as given on the command line. The options every fix shares are fields; each
// fix's own (FixSpec::predict_options, fix_spec.hpp) are kept as text in `values` by flag,
// checked against their declaration by predict_explicit and read by the fix that declared them,
// so a fix not asked for never rejects an option it does not use.
struct ExplicitPredictInputs {
  std::vector<std::string> fixes;  // --fix values (names, aliases or "all"); empty: by inputs given
  std::string scenario;            // --scenario file ("" : none)
  std::string hf_config;           // --hf-config: the scenario's model from a config.json ("" : none)
  std::optional<GpuProfile> profile;
  int layers = 0;  // --layers L (0: not given; a scenario sets it)
  // --round-trip-us: the host's sync round trip r, as given ("" : the GPU profile's); packing's
  // segment model and logging's deferred variant read it (round_trip()).
  std::string round_trip_us;
  // The fixes' options as given, by flag without dashes ("per-layer-ms" -> "13.7"); a fix's
  // predict_from_scenario may fill one left unset, in the same text.
  std::map<std::string, std::string> values;
  // What a scenario implies beyond the options (packing's "cached-rebuilds"), by a name of the
  // fix's choosing, and how each derived value was found (a fix prints it with its prediction).
  std::map<std::string, double> derived;
  std::map<std::string, std::string> notes;
  std::optional<Interval> step_ns;
  PropagationOptions propagation;

  bool given(const std::string& flag) const { return values.count(flag) != 0; }
  // The text of --flag, "" when not given.
  const std::string& text(const std::string& flag) const;
  // --flag as a time in ns (its text in the option's unit x scale); nullopt when not given.
  std::optional<Interval> interval(const std::string& flag, double scale, double max = -1) const;
  // --flag as an integer or a number; `fallback` when not given. InputError names the flag.
  int integer(const std::string& flag, int fallback) const;
  double number(const std::string& flag, double fallback) const;
  // r in ns: --round-trip-us, else the GPU profile's; nullopt when neither is given.
  std::optional<Interval> round_trip() const;
  // The note for a derived value or option, "" when none.
  const std::string& note(const std::string& flag) const;
};

// "V", "V:LO:HI" or "V+-D" (also "V±D") in the option's unit, returned in ns (x scale), each
// bound within [0, max] after scaling (default: a time of up to an hour, core/bounds.hpp).
// InputError names `option` and the accepted forms.
Interval parse_interval_option(const std::string& text, const std::string& option, double scale, double max = -1);
std::optional<Interval> optional_interval_option(const std::string& text, const std::string& option, double scale);

// Chooses the fixes (--fix by name or alias, "all", else the scenario's, else every fix
// whose inputs are given), applies the scenario, and runs each chosen fix's predictor in
// registry order. InputError when nothing can be predicted or a fix lacks its inputs.
PredictionReport predict_explicit(ExplicitPredictInputs inputs);

// --step-ms with --trace: every prediction's speedup against `step_ns` instead of the
// trace's step time, and a note saying so.
void replace_step_time(PredictionReport& report, const Interval& step_ns, const PropagationOptions& prop);

}  // namespace syncscope::model
