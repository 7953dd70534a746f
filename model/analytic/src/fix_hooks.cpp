// The model's hooks of the shipped fixes (fix_spec.hpp): the trace detectors
// (trace_predict_*.cpp), the closed-form predictors from option values, and the published
// figures (published.cpp). bind_model_fix_hooks() installs them into the registry.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/model/published.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

namespace syncscope::model {

namespace detail {
// published.cpp: the blog's figures of each fix.
std::vector<fixes::PublishedFigure> packing_published_figures();
std::vector<fixes::PublishedFigure> offload_published_figures();
}  // namespace detail

namespace {

bool packing_has_inputs(const ExplicitPredictInputs& in) { return !in.per_layer_ms.empty(); }

void predict_packing_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(in.layers < 1 || !packing_has_inputs(in),
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

bool offload_has_inputs(const ExplicitPredictInputs& in) {
  return !in.compute_ms.empty() && (!in.copy_ms.empty() || in.reload_bytes > 0);
}

void predict_offload_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(in.layers < 1 || in.compute_ms.empty() || (in.copy_ms.empty() && in.reload_bytes <= 0),
                           "--fix offload needs --layers L, --compute-ms G and --copy-ms C (or --reload-bytes B "
                           "with --gpu, or a --scenario with --gpu)");
  OffloadParams p;
  p.layers = in.layers;
  p.compute_ns = parse_interval_option(in.compute_ms, "--compute-ms", 1e6);
  if (!in.reload_note.empty() && in.copy_ms.empty()) rep.notes.push_back(in.reload_note);
  if (!in.copy_ms.empty()) {
    p.copy_ns = parse_interval_option(in.copy_ms, "--copy-ms", 1e6);
  } else {
    SYNCSCOPE_INPUT_ERROR_IF(!in.profile, "offload: --reload-bytes needs --gpu for the pinned H2D rate");
    // c = bytes / the profile's pinned host-to-device rate (bytes/s), in ns.
    p.copy_ns = Interval::exact(in.reload_bytes / in.profile->h2d_pinned_bytes_per_s * 1e9);
    rep.notes.push_back(fmt::format("offload: c = {:.0f} B / {:.1f} GB/s pinned H2D ({}) = {:.3f} ms", in.reload_bytes,
                                    in.profile->h2d_pinned_bytes_per_s / 1e9, in.profile->name, p.copy_ns.value / 1e6));
  }
  if (!in.slowdown.empty()) p.slowdown = parse_interval_option(in.slowdown, "--slowdown", 1.0, bounds::kSlowdown.hi);
  else if (in.profile) p.slowdown = Interval::exact(in.profile->copy_compute_slowdown);
  p.unified_memory = in.profile && in.profile->unified_memory;
  // The prefetch variant looks k >= 2 layers ahead; a scenario's depth 1 (double
  // buffering) is predicted as k = 2, and the report says so.
  p.prefetch_depth = std::max(2, in.prefetch_depth);
  if (in.prefetch_depth < 2)
    rep.notes.push_back(
        fmt::format("offload: the scenario's prefetch_depth {} is double buffering; the prefetch "
                    "variant is predicted with k = 2",
                    in.prefetch_depth));
  rep.fixes.push_back(predict_offload(p, "double", in.step_ns, in.propagation));
  rep.fixes.push_back(predict_offload(p, "prefetch", in.step_ns, in.propagation));
}

bool moe_has_inputs(const ExplicitPredictInputs& in) { return !in.per_expert_us.empty(); }

void predict_moe_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(in.experts < 1 || in.moe_layers < 1 || !moe_has_inputs(in),
                           "--fix moe needs --experts E, --moe-layers N and --per-expert-us Q");
  if (!in.moe_layers_note.empty()) rep.notes.push_back(in.moe_layers_note);
  MoeParams p;
  p.experts = in.experts;
  p.moe_layers = in.moe_layers;
  p.passes = in.passes;
  p.per_expert_ns = parse_interval_option(in.per_expert_us, "--per-expert-us", 1e3);
  if (auto d = optional_interval_option(in.kernel_delta_ms, "--kernel-delta-ms", 1e6)) p.kernel_delta_ns = *d;
  rep.fixes.push_back(predict_moe(p, "sorted", in.step_ns, in.propagation));
  rep.fixes.push_back(predict_moe(p, "device", in.step_ns, in.propagation));
}

}  // namespace

void bind_model_fix_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    fixes::FixSpec& packing = fixes::mutable_fix_spec(fixes::Fix::Packing);
    packing.detect = detail::detect_packing;
    packing.has_inputs = packing_has_inputs;
    packing.predict = predict_packing_explicit;
    packing.published = detail::packing_published_figures;
    fixes::FixSpec& offload = fixes::mutable_fix_spec(fixes::Fix::Offload);
    offload.detect = detail::detect_offload;
    offload.has_inputs = offload_has_inputs;
    offload.predict = predict_offload_explicit;
    offload.published = detail::offload_published_figures;
    fixes::FixSpec& moe = fixes::mutable_fix_spec(fixes::Fix::MoeRouting);
    moe.detect = detail::detect_moe;
    moe.has_inputs = moe_has_inputs;
    moe.predict = predict_moe_explicit;
  });
}

}  // namespace syncscope::model
