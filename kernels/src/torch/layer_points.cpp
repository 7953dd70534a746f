// The registered fixes' LibTorch hooks inside a layer (FixSpec::torch_layer_point,
// torch_step_point.hpp): at BeforeAttention they build the packed batch's attention mask
// (fixes/packing), at ExpertDispatch they route the tokens and run the experts
// (fixes/moe_routing), in registry order, as the step program's builder calls
// build_program_layer at the same points (kernels/src/program/step_layers.cpp).
#include <fmt/format.h>

#include "syncscope/core/error.hpp"
#include "torch/internal.hpp"

namespace syncscope::kernels::detail {

namespace {

void run_hooks(fixes::TorchLayerContext& c, program::ProgramPoint at) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.torch_layer_point) f.torch_layer_point(c, at);
}

// Whose hooks are installed, for the message when none answered.
std::string torch_layer_hooks() {
  std::string names;
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.torch_layer_point) names += (names.empty() ? "" : ", ") + f.name;
  return names.empty() ? "none" : names;
}

}  // namespace

torch::Tensor fix_attention_mask(const program::StepOptions& options, int layer, int window, const PackedBatch& batch,
                                 std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx) {
  fixes::TorchLayerContext c{.options = options,
                             .layer = layer,
                             .device = ctx,
                             .batch = batch,
                             .fix_states = fix_states,
                             .attention_window = window,
                             .attention_mask = {},
                             .moe_input = nullptr,
                             .expert_ids = nullptr,
                             .routing_weights = nullptr,
                             .experts = nullptr,
                             .expert_output = {}};
  run_hooks(c, program::ProgramPoint::BeforeAttention);
  SYNCSCOPE_THROW_IF(!c.attention_mask.defined(),
                     fmt::format("layer {}: no registered fix built the packed batch's attention mask (LibTorch hooks "
                                 "installed: {}); call fixes::register_shipped_torch_steps() (fixes/shipped) before "
                                 "building a ReferenceStep",
                                 layer, torch_layer_hooks()));
  return c.attention_mask;
}

torch::Tensor fix_expert_dispatch(const program::StepOptions& options, int layer, const torch::Tensor& x,
                                  const torch::Tensor& expert_ids, const torch::Tensor& weights,
                                  const ExpertWeights& experts, const PackedBatch& batch,
                                  std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx) {
  fixes::TorchLayerContext c{.options = options,
                             .layer = layer,
                             .device = ctx,
                             .batch = batch,
                             .fix_states = fix_states,
                             .attention_window = 0,
                             .attention_mask = {},
                             .moe_input = &x,
                             .expert_ids = &expert_ids,
                             .routing_weights = &weights,
                             .experts = &experts,
                             .expert_output = {}};
  run_hooks(c, program::ProgramPoint::ExpertDispatch);
  SYNCSCOPE_THROW_IF(!c.expert_output.defined(),
                     fmt::format("layer {}: no registered fix ran the MoE block's experts (LibTorch hooks installed: "
                                 "{}); call fixes::register_shipped_torch_steps() (fixes/shipped) before building a "
                                 "ReferenceStep",
                                 layer, torch_layer_hooks()));
  return c.expert_output;
}

}  // namespace syncscope::kernels::detail
