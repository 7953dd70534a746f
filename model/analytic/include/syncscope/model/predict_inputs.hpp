// `syncscope predict` from explicit values or a scenario: the inputs every fix's closed-form
// predictor reads (FixSpec::predict, fix_spec.hpp), and the entry point that chooses the
// fixes, derives what a scenario implies (layers, experts, reload bytes, prefetch depth) and
// runs their predictors. The CLI only parses options into ExplicitPredictInputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/interval.hpp"
#include "syncscope/model/predict.hpp"

namespace syncscope::model {

// Option values as given on the command line: times are text in the option's unit ("13.7",
// "13.7:12.9:14.5", "13.7+-0.8"), parsed by the fix that reads them, so a fix not asked for
// never rejects an option it does not use. "" : not given.
struct ExplicitPredictInputs {
  std::vector<std::string> fixes;  // --fix values (names, aliases or "all"); empty: by inputs given
  std::string scenario;            // --scenario file ("" : none)
  std::string hf_config;           // --hf-config: the scenario's model from a config.json ("" : none)
  std::optional<GpuProfile> profile;
  int layers = 0;
  // packing
  std::string per_layer_ms, host_ms, gpu_ms, rebuild_host_ms, rebuild_gpu_ms, round_trip_us;
  int syncs_per_layer = 1;
  // Set from the scenario: of the L layers, those the cached variant still rebuilds the mask
  // in (each window change: packing_mask_cache_misses); 0: not derived (1 is used).
  int cached_rebuilds = 0;
  std::string cached_rebuilds_why;
  // offload
  std::string copy_ms, compute_ms, slowdown;
  double reload_bytes = 0;
  int prefetch_depth = 2;
  // MoE routing
  int experts = 0, moe_layers = 0, passes = 1;
  std::string per_expert_us, kernel_delta_ms;
  // every fix
  std::optional<Interval> step_ns;
  PropagationOptions propagation;
  // Set by predict_explicit from the scenario: how reload_bytes was derived ("" : given),
  // and which layers route (an MoE model's dense layers have no routing).
  std::string reload_note, moe_layers_note;
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
