// predict --fix offload: its options (--compute-ms, --copy-ms or --reload-bytes with --gpu,
// --slowdown), what a scenario implies for them, and the closed form (closed_form.hpp's
// predict_offload) from their values.
#include <fmt/format.h>

#include <algorithm>

#include "internal.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/offload/closed_form.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::offload::detail {

using namespace syncscope::model;  // the closed form and the report's types

namespace {
// Bounds of --reload-bytes (the reason the refusal gives).
constexpr bounds::Range kReloadBytes{1, 1e13, "one layer's checkpoint cannot exceed the largest GPU's memory"};
}  // namespace

std::vector<PredictOption> predict_options() {
  using K = PredictOption::Kind;
  return {
      {"prefetch-depth", K::Integer,
       "offload prefetch variant: look-ahead k (ring of k+1); k >= 2 (k = 1 is double buffering); --trace takes "
       "it too",
       kPrefetchDepthOption, std::to_string(kDefaultPrefetchDepth), kPrefetchDepthTraceKey},
      {"copy-ms", K::Time, "offload: c, one layer's checkpoint reload copy (ms)", {0, 0, ""}, "", ""},
      {"reload-bytes", K::Number,
       "offload: bytes reloaded per layer; c = bytes / the profile's pinned H2D rate (instead of --copy-ms)",
       kReloadBytes, "", ""},
      {"compute-ms", K::Time, "offload: g, backward (recompute + gradient) time per layer (ms)", {0, 0, ""}, "", ""},
      {"slowdown",
       K::Time,
       "offload: sigma, fractional slowdown of kernels beside a copy (default: the profile's, else 0)",
       {0, 0, ""},
       "",
       ""},
  };
}

int trace_prefetch_depth(const model::TracePredictOptions& o) {
  return static_cast<int>(o.fix_number("offload", kPrefetchDepthTraceKey).value_or(kDefaultPrefetchDepth));
}

// The scenario's prefetch depth (it replaces --prefetch-depth, and may be 1: double
// buffering, which the option does not take), and the bytes one layer's checkpoint reloads when neither
// --copy-ms nor --reload-bytes is given.
void predict_from_scenario(const scenario::Scenario& sc, ExplicitPredictInputs& in) {
  for (const auto& f : sc.fixes)
    if (f.fix == kFix) in.derived["prefetch_depth"] = f.number("prefetch_depth");
  if (in.given("reload-bytes") || in.given("copy-ms") || sc.model.hidden_size <= 0) return;
  // The checkpointed activation of a layer is its input hidden state [T, hidden].
  const double elem = sc.dtype == "fp32" ? 4 : 2;
  const double bytes = static_cast<double>(sc.batch.packed_tokens) * sc.model.hidden_size * elem;
  in.values["reload-bytes"] = fmt::format("{:.17g}", bytes);
  in.notes["reload-bytes"] = fmt::format(
      "reload per layer = packed tokens {} x hidden {} x {} B = {:.1f} MiB (the layer's "
      "input hidden state)",
      sc.batch.packed_tokens, sc.model.hidden_size, elem, bytes / (1 << 20));
}

bool has_inputs(const ExplicitPredictInputs& in) {
  return in.given("compute-ms") && (in.given("copy-ms") || in.given("reload-bytes"));
}

void predict_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(in.layers < 1 || !has_inputs(in),
                           "--fix offload needs --layers L, --compute-ms G and --copy-ms C (or --reload-bytes B "
                           "with --gpu, or a --scenario with --gpu)");
  OffloadParams p;
  p.layers = in.layers;
  p.compute_ns = *in.interval("compute-ms", 1e6);
  if (!in.note("reload-bytes").empty() && !in.given("copy-ms")) rep.notes.push_back(in.note("reload-bytes"));
  if (auto c = in.interval("copy-ms", 1e6)) {
    p.copy_ns = *c;
  } else {
    const double reload_bytes = in.number("reload-bytes", 0);
    SYNCSCOPE_INPUT_ERROR_IF(!in.profile, "offload: --reload-bytes needs --gpu for the pinned H2D rate");
    // c = bytes / the profile's pinned host-to-device rate (bytes/s), in ns.
    p.copy_ns = Interval::exact(reload_bytes / in.profile->h2d_pinned_bytes_per_s * 1e9);
    rep.notes.push_back(fmt::format("offload: c = {:.0f} B / {:.1f} GB/s pinned H2D ({}) = {:.3f} ms", reload_bytes,
                                    in.profile->h2d_pinned_bytes_per_s / 1e9, in.profile->name, p.copy_ns.value / 1e6));
  }
  if (auto sigma = in.interval("slowdown", 1.0, bounds::kSlowdown.hi)) p.slowdown = *sigma;
  else if (in.profile) p.slowdown = Interval::exact(in.profile->copy_compute_slowdown);
  p.unified_memory = in.profile && in.profile->unified_memory;
  // The prefetch variant looks k >= 2 layers ahead; a scenario's depth 1 (double
  // buffering) is predicted as k = 2, and the report says so.
  const auto scenario_depth = in.derived.find("prefetch_depth");
  const int depth = scenario_depth != in.derived.end() ? static_cast<int>(scenario_depth->second)
                                                       : in.integer("prefetch-depth", kDefaultPrefetchDepth);
  p.prefetch_depth = std::max(2, depth);
  if (depth < 2)
    rep.notes.push_back(
        fmt::format("offload: the scenario's prefetch_depth {} is double buffering; the prefetch "
                    "variant is predicted with k = 2",
                    depth));
  rep.fixes.push_back(predict_offload(p, "double", in.step_ns, in.propagation));
  rep.fixes.push_back(predict_offload(p, "prefetch", in.step_ns, in.propagation));
}

}  // namespace syncscope::fixes::offload::detail
