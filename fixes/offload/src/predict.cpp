// predict --fix offload: the closed form (model/analytic's predict_offload) from explicit values
// (--layers, --compute-ms and --copy-ms or --reload-bytes with --gpu; cli/cmd_predict.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "internal.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/predict_inputs.hpp"

namespace syncscope::fixes::offload::detail {

using namespace syncscope::model;  // the closed form and the report's types

bool has_inputs(const ExplicitPredictInputs& in) {
  return !in.compute_ms.empty() && (!in.copy_ms.empty() || in.reload_bytes > 0);
}

void predict_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
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

}  // namespace syncscope::fixes::offload::detail
