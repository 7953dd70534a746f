// The MoE routing fix's operators in the step program (FixSpec::build_program_layer):
// routing the T*k (token, expert) pairs to the experts and summing their weighted outputs,
// kernel by kernel as the LibTorch reference step (src/torch_step.cpp) issues them
// for each variant. The router, its softmax and the residual around the block are the
// model's and stay in the builder (step_layers.cpp).
#include <fmt/format.h>

#include "step_internal.hpp"

namespace syncscope::fixes::moe_routing::detail {

using namespace syncscope::program;  // the builder and the step options

namespace {

// torch_step.cpp's accumulate(): weights gathered, rows to fp32, weighted, index_add_ into fp32.
void accumulate(ProgramLayerBuilder& b, double rows) {
  const double H = b.options().model.hidden_size;
  const double eb = b.element_bytes();
  b.elementwise("weights.index_select", rows, 4);
  if (b.options().dtype != "fp32") b.elementwise("y.to_fp32", rows * H, (eb + 4) / 2.0);
  b.elementwise("y.mul_weight", rows * H, 4);
  b.elementwise("out.index_add_", rows * H, 4);
}

}  // namespace

void program_layer(ProgramLayerBuilder& b, ProgramPoint at) {
  if (at != ProgramPoint::ExpertDispatch) return;
  const StepOptions& o = b.options();
  const int experts = o.model.num_local_experts;
  const double T = b.tokens(), E = experts, K = o.model.num_experts_per_tok;
  const double H = o.model.hidden_size, I = o.model.intermediate_size;
  const double eb = b.element_bytes();
  const double tk = T * K;
  const double per_expert = tk / E;  // balanced-routing assumption (step_program.hpp)
  b.push_range("moe_routing");
  if (variant(o) == fixes::moe_routing::Variant::Loop) {
    b.elementwise("moe.out.zeros", T * H, 2);
    for (int e = 0; e < experts; ++e) {
      b.bookkeeping("expert_mask.eq", tk, tk * 9);
      b.bookkeeping("nonzero", tk, tk * 17);
      b.host_read("aten::nonzero (count)", 8);
      b.bookkeeping("token_slot.mul_topk", per_expert, per_expert * 16);
      b.bookkeeping("token_slot.add_slot", per_expert, per_expert * 24);
      b.elementwise("x.index_select", per_expert * H, eb);
      b.expert(fmt::format("expert_{:02}", e), per_expert);
      accumulate(b, per_expert);
    }
  } else if (variant(o) == fixes::moe_routing::Variant::Sorted) {
    b.bookkeeping("argsort_stable", tk, tk * 32);
    // torch.bincount on CUDA reads min and max back before counting (SummaryOps.cu).
    b.bookkeeping("bincount.min", tk, tk * 8);
    b.host_read("aten::_to_copy bincount min().cpu()", 8);
    b.bookkeeping("bincount.max", tk, tk * 8);
    b.host_read("aten::item bincount max()", 8);
    b.bookkeeping("bincount.zeros", E, E * 8);
    b.bookkeeping("bincount.histogram", tk, tk * 8 + E * 8);
    b.host_read("aten::tolist counts", E * 8);
    b.elementwise("moe.out.zeros", T * H, 2);
    for (int e = 0; e < experts; ++e) {
      b.bookkeeping("sel.div_topk", per_expert, per_expert * 16);
      b.elementwise("x.index_select", per_expert * H, eb);
      b.expert(fmt::format("expert_{:02}", e), per_expert);
      accumulate(b, per_expert);
    }
  } else if (expert_gemm(o) != "padded") {
    // Ours, grouped: counts and offsets on the device; the T*k rows sorted by expert go
    // through one grouped GEMM per projection that reads the group ends from device
    // memory (at::_grouped_mm). The expert FLOPs are the baseline's.
    b.bookkeeping("syncscope::moe_histogram_kernel", tk, tk * 8 + 2 * (E + 1) * 8);
    b.bookkeeping("sort_stable", tk, tk * 32);
    b.bookkeeping("token.div_topk", tk, tk * 16);
    b.elementwise("x.index_select", tk * H, eb);
    b.bookkeeping("offs.to_int32", E, E * 12);
    b.gemm("experts.grouped_mm.gate", tk, I, H);
    b.gemm("experts.grouped_mm.up", tk, I, H);
    b.elementwise("experts.silu", tk * I, eb);
    b.elementwise("experts.mul", tk * I, eb);
    b.gemm("experts.grouped_mm.down", tk, H, I);
    b.elementwise("moe.out.zeros", T * H, 2);
    accumulate(b, tk);
  } else {
    // Ours, padded: counts and offsets on the device, capacity-padded batched GEMM with C = T.
    const double C = T;
    b.bookkeeping("syncscope::moe_histogram_kernel", tk, tk * 8 + 2 * (E + 1) * 8);
    b.bookkeeping("sort_stable", tk, tk * 32);
    b.bookkeeping("token.div_topk", tk, tk * 16);
    b.elementwise("x.index_select", tk * H, eb);
    b.bookkeeping("rank.arange", tk, tk * 8);
    b.bookkeeping("rank.offsets_gather", tk, tk * 24);
    b.bookkeeping("rank.sub", tk, tk * 24);
    b.bookkeeping("dest.mul_capacity", tk, tk * 16);
    b.bookkeeping("dest.add_rank", tk, tk * 24);
    b.elementwise("xpad.zeros", E * C * H, eb / 2.0);
    b.elementwise("xpad.clone", E * C * H, eb);  // out-of-place index_copy: clone, then index_copy_
    b.elementwise("xpad.index_copy_", tk * H, eb);
    b.gemm("experts.bmm_gate", E * C, I, H);
    b.gemm("experts.bmm_up", E * C, I, H);
    b.elementwise("experts.silu", E * C * I, eb);
    b.elementwise("experts.mul", E * C * I, eb);
    b.gemm("experts.bmm_down", E * C, H, I);
    b.elementwise("ypad.index_select", tk * H, eb);
    b.elementwise("moe.out.zeros", T * H, 2);
    accumulate(b, tk);
  }
  b.pop_range();
}

}  // namespace syncscope::fixes::moe_routing::detail
