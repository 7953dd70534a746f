// predict --fix moe: the closed form (model/analytic's predict_moe) from explicit values
// (--experts, --moe-layers and --per-expert-us; cli/cmd_predict.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "internal.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/predict_inputs.hpp"

namespace syncscope::fixes::moe_routing::detail {

using namespace syncscope::model;  // the closed form and the report's types

bool has_inputs(const ExplicitPredictInputs& in) { return !in.per_expert_us.empty(); }

void predict_explicit(const ExplicitPredictInputs& in, PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(in.experts < 1 || in.moe_layers < 1 || !has_inputs(in),
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

}  // namespace syncscope::fixes::moe_routing::detail
