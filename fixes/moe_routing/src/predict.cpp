// predict --fix moe: its options (--experts, --moe-layers, --per-expert-us, --passes,
// --kernel-delta-ms), what a scenario implies for them, and the closed form (closed_form.hpp's
// predict_moe) from their values.
#include <fmt/format.h>

#include <algorithm>

#include "internal.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/closed_form.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::moe_routing::detail {

using namespace syncscope::model;  // the closed form and the report's types

namespace {
// Bounds of --passes (the reason the refusal gives).
constexpr bounds::Range kPasses{1, 16, "a step routes once forward, once more per recompute"};
}  // namespace

std::vector<PredictOption> predict_options() {
  using K = PredictOption::Kind;
  return {
      {"experts", K::Integer, "moe: E, experts per MoE layer", bounds::kExpertsGiven, "", ""},
      {"moe-layers", K::Integer, "moe: N, MoE layers", bounds::kLayers, "", ""},
      {"per-expert-us", K::Time, "moe: q, per-expert dynamic-query cost (us)", {0, 0, ""}, "", ""},
      {"passes", K::Integer, "moe: routing passes per step (2 with checkpoint recompute)", kPasses, "1", ""},
      {"kernel-delta-ms",
       K::Time,
       "moe: measured kernel-time difference per step, baseline minus fix (ms)",
       {0, 0, ""},
       "",
       ""},
      {"top-k", K::Integer,
       "moe with --trace: k, experts per token; charges the device variant's capacity padding (E/k times the "
       "expert GEMMs), for where it pads (no at::_grouped_mm: LibTorch < 2.8 or below sm90)",
       bounds::kExpertsGiven, "", kTopKTraceKey},
  };
}

// An MoE scenario's experts, and its routed layers: dense-first (first_k_dense_replace) and
// interleaved dense layers have no router, so the fix saves nothing there.
void predict_from_scenario(const scenario::Scenario& sc, ExplicitPredictInputs& in) {
  if (!sc.model.is_moe()) return;
  if (!in.given("experts")) in.values["experts"] = std::to_string(sc.model.num_local_experts);
  if (in.given("moe-layers")) return;
  int routed = 0;
  for (int l = 0; l < in.layers; ++l) routed += sc.model.moe_layer(l) ? 1 : 0;
  in.values["moe-layers"] = std::to_string(routed);
  if (routed < in.layers)
    in.notes["moe-layers"] =
        fmt::format("moe: {} of the {} layers route (the others are dense MLPs): N = {}", routed, in.layers, routed);
}

bool has_inputs(const ExplicitPredictInputs& in) { return in.given("per-expert-us"); }

void predict_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  MoeParams p;
  p.experts = in.integer("experts", 0);
  p.moe_layers = in.integer("moe-layers", 0);
  SYNCSCOPE_INPUT_ERROR_IF(p.experts < 1 || p.moe_layers < 1 || !has_inputs(in),
                           "--fix moe needs --experts E, --moe-layers N and --per-expert-us Q");
  if (!in.note("moe-layers").empty()) rep.notes.push_back(in.note("moe-layers"));
  p.passes = in.integer("passes", 1);
  p.per_expert_ns = *in.interval("per-expert-us", 1e3);
  if (auto d = in.interval("kernel-delta-ms", 1e6)) p.kernel_delta_ns = *d;
  rep.fixes.push_back(predict_moe(p, "sorted", in.step_ns, in.propagation));
  rep.fixes.push_back(predict_moe(p, "device", in.step_ns, in.propagation));
}

}  // namespace syncscope::fixes::moe_routing::detail
