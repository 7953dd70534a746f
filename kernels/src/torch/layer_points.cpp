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

// The context of one layer point, nothing set yet.
fixes::TorchLayerContext layer_context(const program::StepOptions& options, int layer, const PackedBatch& batch,
                                       std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx) {
  return {.options = options,
          .layer = layer,
          .device = ctx,
          .batch = batch,
          .fix_states = fix_states,
          .attention_window = 0,
          .attention_mask = {},
          .moe_input = nullptr,
          .expert_ids = nullptr,
          .routing_weights = nullptr,
          .experts = nullptr,
          .expert_output = {}};
}

// Every registered fix's hook at `at`; then, when `out` is still undefined, Error naming what
// no hook did, whose layer hooks are installed and the call that installs them.
void run_hooks(fixes::TorchLayerContext& c, program::ProgramPoint at, const torch::Tensor& out, const char* what) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.torch_layer_point) f.torch_layer_point(c, at);
  if (out.defined()) return;
  std::string installed;
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.torch_layer_point) installed += (installed.empty() ? "" : ", ") + f.name;
  throw Error(
      fmt::format("layer {}: no registered fix {} (LibTorch layer hooks installed: {}); call "
                  "fixes::register_shipped_torch_steps() (fixes/shipped) before building a "
                  "ReferenceStep",
                  c.layer, what, installed.empty() ? "none" : installed));
}

}  // namespace

torch::Tensor fix_attention_mask(const program::StepOptions& options, int layer, int window, const PackedBatch& batch,
                                 std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx) {
  fixes::TorchLayerContext c = layer_context(options, layer, batch, fix_states, ctx);
  c.attention_window = window;
  run_hooks(c, program::ProgramPoint::BeforeAttention, c.attention_mask, "built the packed batch's attention mask");
  return c.attention_mask;
}

torch::Tensor fix_expert_dispatch(const program::StepOptions& options, int layer, const torch::Tensor& x,
                                  const torch::Tensor& expert_ids, const torch::Tensor& weights,
                                  const ExpertWeights& experts, const PackedBatch& batch,
                                  std::map<fixes::Fix, std::any>& fix_states, Ctx& ctx) {
  fixes::TorchLayerContext c = layer_context(options, layer, batch, fix_states, ctx);
  c.moe_input = &x;
  c.expert_ids = &expert_ids;
  c.routing_weights = &weights;
  c.experts = &experts;
  run_hooks(c, program::ProgramPoint::ExpertDispatch, c.expert_output, "ran the MoE block's experts");
  return c.expert_output;
}

}  // namespace syncscope::kernels::detail
