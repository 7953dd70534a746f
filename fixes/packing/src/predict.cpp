// predict --fix packing: its options (--per-layer-ms and the segment model's), what a scenario
// implies for them, and the closed form (closed_form.hpp's predict_packing) from their values.
#include <fmt/format.h>

#include <algorithm>

#include "internal.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/packing/closed_form.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/scenario/model_traits.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::packing::detail {

using namespace syncscope::model;  // the closed form and the report's types

namespace {
// Bounds of --syncs-per-layer (a reason the refusal gives).
constexpr bounds::Range kSyncsPerLayer{1, 1000, "a layer's metadata rebuild syncs a handful of times"};
}  // namespace

std::vector<PredictOption> predict_options() {
  using K = PredictOption::Kind;
  return {
      {"per-layer-ms", K::Time, "packing: s, the per-layer cost the cache removes (ms)", {0, 0, ""}, "", ""},
      {"host-ms", K::Time, "packing segment model: host time per layer, rebuild included (ms)", {0, 0, ""}, "", ""},
      {"gpu-ms",
       K::Time,
       "packing segment model: GPU time per layer, rebuild kernels included (ms)",
       {0, 0, ""},
       "",
       ""},
      {"rebuild-host-ms", K::Time, "packing segment model: host rebuild work per layer (ms)", {0, 0, ""}, "", ""},
      {"rebuild-gpu-ms", K::Time, "packing segment model: rebuild kernel time per layer (ms)", {0, 0, ""}, "", ""},
      {"syncs-per-layer", K::Integer, "packing segment model: syncs per layer rebuild", kSyncsPerLayer, "1", ""},
  };
}

// Unsloth's mask cache holds one (dtype, window) entry: over the forward's layers in order, the
// cached variant rebuilds at each window change (the packing program's layer windows).
void predict_from_scenario(const scenario::Scenario& sc, ExplicitPredictInputs& in) {
  if (in.derived.count("cached-rebuilds")) return;
  const scenario::ModelTraits traits = scenario::model_traits(sc.model);
  std::vector<int> windows;
  for (int l = 0; l < in.layers; ++l) windows.push_back(scenario::layer_window(traits, l));
  const std::vector<bool> misses = packing_mask_cache_misses(windows);
  in.derived["cached-rebuilds"] = std::max(1, static_cast<int>(std::count(misses.begin(), misses.end(), true)));
  in.notes["cached-rebuilds"] =
      fmt::format("over the forward's {} layers in order, windows from the model's layer types", in.layers);
}

bool has_inputs(const ExplicitPredictInputs& in) { return in.given("per-layer-ms"); }

void predict_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(in.layers < 1 || !has_inputs(in),
                           "--fix packing needs --layers L and --per-layer-ms S (e.g. --layers 16 "
                           "--per-layer-ms 13.7)");
  PackingParams p;
  p.layers = in.layers;
  p.s_ns = *in.interval("per-layer-ms", 1e6);
  p.host_ns = in.interval("host-ms", 1e6);
  p.gpu_ns = in.interval("gpu-ms", 1e6);
  p.rebuild_host_ns = in.interval("rebuild-host-ms", 1e6);
  p.rebuild_gpu_ns = in.interval("rebuild-gpu-ms", 1e6);
  p.round_trip_ns = in.round_trip();
  p.syncs_per_layer = in.integer("syncs-per-layer", 1);
  if (auto it = in.derived.find("cached-rebuilds"); it != in.derived.end() && it->second > 0) {
    p.cached_rebuilds = std::min(static_cast<int>(it->second), in.layers);
    p.cached_rebuilds_why = in.note("cached-rebuilds");
  }
  const bool any_segment = p.host_ns || p.gpu_ns || p.rebuild_host_ns || p.rebuild_gpu_ns;
  const bool all_segment = p.host_ns && p.gpu_ns && p.rebuild_host_ns && p.rebuild_gpu_ns && p.round_trip_ns;
  SYNCSCOPE_INPUT_ERROR_IF(any_segment && !all_segment,
                           "packing segment model: give all of --host-ms, --gpu-ms, --rebuild-host-ms, "
                           "--rebuild-gpu-ms and a round trip (--round-trip-us or --gpu)");
  rep.fixes.push_back(predict_packing(p, in.step_ns, in.propagation, "cached"));
  rep.fixes.push_back(predict_packing(p, in.step_ns, in.propagation, "device"));
}

}  // namespace syncscope::fixes::packing::detail
