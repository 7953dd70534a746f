// The step program's layers (step_builder.hpp): attention, the dense MLP and the MoE block
// with its experts, kernel by kernel as the LibTorch reference step (kernels/src/torch)
// issues them. The fixes' operators inside a layer (packing's metadata, MoE's routing) come
// from their hooks at the ProgramPoints (fix_*_program.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "step_builder.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/reference.hpp"

namespace syncscope::program::detail {

void StepBuilder::attention() {
  const double T = T_;
  const double q = static_cast<double>(nh_) * d_, kv = static_cast<double>(nkv_) * d_;
  rmsnorm("input_layernorm", T, H_);
  const scenario::ModelShape& m = o_.model;
  if (m.is_mla()) {
    // Multi-head latent attention (modeling_deepseek_v2.py): q directly or through its
    // rank-q_lora_rank bottleneck; k and v from one latent of kv_lora_rank (plus the shared
    // rotary key), normed and expanded per head by kv_b_proj. Replaces q/k/v_proj.
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      gemm("q_a_proj", T, m.q_lora_rank, H_);
      rmsnorm("q_a_layernorm", T, m.q_lora_rank);
      gemm("q_b_proj", T, nh_ * qk, m.q_lora_rank);
    } else {
      linear("q_proj", "q_proj", T, nh_ * qk, H_);
    }
    gemm("kv_a_proj_with_mqa", T, m.kv_lora_rank + m.qk_rope_head_dim, H_);
    rmsnorm("kv_a_layernorm", T, m.kv_lora_rank);
    gemm("kv_b_proj", T, nh_ * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank);
    ew("k_pe.expand", T * nh_ * m.qk_rope_head_dim);  // the rotary key, shared, broadcast per head
  } else {
    linear("q_proj", "q_proj", T, q, H_);
    linear("k_proj", "k_proj", T, kv, H_);
    linear("v_proj", "v_proj", T, kv, H_);
  }
  if (oss_) {
    ew("q_proj.bias_add", T * q);
    ew("k_proj.bias_add", T * kv);
    ew("v_proj.bias_add", T * kv);
  }
  if (uses_qk_norm(o_.model)) {
    rmsnorm("q_norm", T * nh_, d_);
    rmsnorm("k_norm", T * nkv_, d_);
  }
  rope("q.rope", T * q);
  rope("k.rope", T * kv);
  if (nh_ != nkv_) {
    ew("k.expand_gqa", T * q);
    ew("v.expand_gqa", T * q);
  }
  fix_point(ProgramPoint::BeforeAttention);  // packing's metadata
  if (oss_) {
    // gpt-oss's eager attention with sinks (HF eager_attention_forward): a learned logit
    // per head joins the softmax denominator, so SDPA's fused kernel cannot run it.
    const double s = static_cast<double>(nh_) * T * T;
    fwd(FwdKernel::Kind::Attention, "attention.qk_matmul", 2.0 * s * d_, (2.0 * T * q + s) * b_);
    ew("attention.mask_add", s);
    ew("attention.sinks_cat", s + nh_ * T);
    ew("attention.softmax_fp32", s + nh_ * T, 4);
    ew("attention.drop_sink", s);
    fwd(FwdKernel::Kind::Attention, "attention.pv_matmul", 2.0 * s * d_, (s + 2.0 * T * q) * b_);
  } else {
    // SDPA with a dense additive mask computes every (i, j) block: QK^T over the q.k width
    // (d_) and PV over v's (MLA: v_head_dim, 128 beside a q.k width of 192; else d_).
    const double dv = m.is_mla() ? m.v_head_dim : d_;
    fwd(FwdKernel::Kind::Attention, "scaled_dot_product_attention", 2.0 * nh_ * T * T * (d_ + dv),
        (2.0 * T * q + 2.0 * T * nh_ * dv + T * T) * b_);
  }
  const double attn_out = m.is_mla() ? static_cast<double>(nh_) * m.v_head_dim : q;
  ew("attn_output.contiguous", T * attn_out);
  linear("o_proj", "o_proj", T, H_, attn_out);
  if (oss_) ew("o_proj.bias_add", T * H_);
  ew("residual_add", T * H_);
}

void StepBuilder::mlp() {
  const double T = T_;
  // A dense layer of an MoE model has its own width (intermediate_size beside the experts'
  // moe_intermediate_size; Llama 4's intermediate_size_mlp).
  const double I = o_.model.is_moe() && o_.model.dense_intermediate_size > 0 ? o_.model.dense_intermediate_size : I_;
  rmsnorm("post_attention_layernorm", T, H_);
  linear("gate_proj", "gate_proj", T, I, H_);
  linear("up_proj", "up_proj", T, I, H_);
  ew("silu", T * I);
  ew("mul", T * I);
  linear("down_proj", "down_proj", T, H_, I);
  ew("residual_add", T * H_);
}

void StepBuilder::shared_experts() {
  // Every token through the shared MLP beside the routed experts: their own GEMMs, no
  // routing and no host syncs (modeling_deepseek_v2.py shared_experts,
  // modeling_qwen2_moe.py shared_expert with its sigmoid shared_expert_gate, Llama 4's
  // shared_expert).
  const scenario::ModelShape& m = o_.model;
  const double T = T_, S = m.shared_expert_intermediate_size;
  if (S <= 0) return;
  gemm("shared_experts.gate_proj", T, S, H_);
  gemm("shared_experts.up_proj", T, S, H_);
  ew("shared_experts.silu", T * S);
  ew("shared_experts.mul", T * S);
  gemm("shared_experts.down_proj", T, H_, S);
  if (m.shared_expert_gate) {
    gemm("shared_expert_gate", T, 1, H_);
    ew("shared_expert_gate.sigmoid", T);
    ew("shared_expert.mul_gate", T * H_);
  }
  ew("shared_experts.add", T * H_);
}

void StepBuilder::expert(const std::string& p, double rows) {
  if (oss_) {
    oss_expert(p, rows);
    return;
  }
  gemm(p + ".gate", rows, I_, H_);
  gemm(p + ".up", rows, I_, H_);
  ew(p + ".silu", rows * I_);
  ew(p + ".mul", rows * I_);
  gemm(p + ".down", rows, H_, I_);
}

void StepBuilder::oss_expert(const std::string& p, double rows) {
  gemm(p + ".gate_up", rows, 2.0 * I_, H_);
  ew(p + ".gate_up.bias_add", rows * 2.0 * I_);
  if (o_.model.swiglu_limit > 0) {
    ew(p + ".gate.clamp", rows * I_);
    ew(p + ".up.clamp", rows * I_);
  }
  ew(p + ".gate.mul_alpha", rows * I_);
  ew(p + ".sigmoid", rows * I_);
  ew(p + ".glu.mul", rows * I_);
  ew(p + ".up.add_1", rows * I_);
  ew(p + ".mul", rows * I_);
  ew(p + ".to_fp32", rows * I_, (b_ + 4) / 2.0);
  const double r = rows, h = H_, i = I_;
  Op& op = fwd(FwdKernel::Kind::Gemm, p + ".down_fp32", 2.0 * r * h * i, (r * i + i * h + r * h) * 4.0);
  op.bf16 = false;
  if (recording_) {
    fwd_kernels_.back().fp32 = true;
    fwd_kernels_.back().frozen = adapters_;
  }
  ew(p + ".down.bias_add", rows * H_, 4);
}

void StepBuilder::moe() {
  const double T = T_, E = E_, K = k_;
  const double tk = T * K;
  rmsnorm("post_attention_layernorm", T, H_);
  gemm("router", T, E, H_);
  nograd("topk", T * E, T * E * b_ + tk * (b_ + 8));
  ew("router.to_fp32", tk, (b_ + 4) / 2.0);
  ew("router.softmax", tk, 4);
  fix_point(ProgramPoint::ExpertDispatch);  // the routing fix's dispatch and experts
  if (low_precision_) ew("moe.out.to_dtype", T * H_, (b_ + 4) / 2.0);
  shared_experts();
  ew("residual_add", T * H_);
}

}  // namespace syncscope::program::detail
