// predict --fix packing: the closed form (model/analytic's predict_packing) from explicit values
// (--layers, --per-layer-ms and the segment options; cli/cmd_predict.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "internal.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/predict_inputs.hpp"

namespace syncscope::fixes::packing::detail {

using namespace syncscope::model;  // the closed form and the report's types

bool has_inputs(const ExplicitPredictInputs& in) { return !in.per_layer_ms.empty(); }

void predict_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(in.layers < 1 || !has_inputs(in),
                           "--fix packing needs --layers L and --per-layer-ms S (e.g. --layers 16 "
                           "--per-layer-ms 13.7)");
  PackingParams p;
  p.layers = in.layers;
  p.s_ns = parse_interval_option(in.per_layer_ms, "--per-layer-ms", 1e6);
  p.host_ns = optional_interval_option(in.host_ms, "--host-ms", 1e6);
  p.gpu_ns = optional_interval_option(in.gpu_ms, "--gpu-ms", 1e6);
  p.rebuild_host_ns = optional_interval_option(in.rebuild_host_ms, "--rebuild-host-ms", 1e6);
  p.rebuild_gpu_ns = optional_interval_option(in.rebuild_gpu_ms, "--rebuild-gpu-ms", 1e6);
  p.round_trip_ns = optional_interval_option(in.round_trip_us, "--round-trip-us", 1e3);
  if (!p.round_trip_ns && in.profile) p.round_trip_ns = Interval::exact(in.profile->sync_round_trip_ns);
  p.syncs_per_layer = in.syncs_per_layer;
  if (in.cached_rebuilds > 0) {
    p.cached_rebuilds = std::min(in.cached_rebuilds, in.layers);
    p.cached_rebuilds_why = in.cached_rebuilds_why;
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
