// The step program's layers (step_builder.hpp): packed-sequence metadata and Unsloth's mask,
// attention, the dense MLP and the MoE block with its experts, kernel by kernel as the
// LibTorch reference step (kernels/src/torch) issues them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "step_builder.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/kernels/network.hpp"
#include "syncscope/kernels/reference.hpp"

namespace syncscope::kernels::detail {

void StepBuilder::unsloth_mask(int window) {
  const double T = T_;
  host_read("aten::item seq_lengths.sum()", 8);  // preceded by its reduction
  nograd("mask.full", T * T, T * T * b_);
  host_read("aten::tolist seq_lengths", static_cast<double>(lengths_.size()) * 4);
  for (int len : lengths_) {
    const double n = static_cast<double>(len) * len;
    nograd("block.zeros", n, n * b_);
    nograd("block.ones", n, n * 4);
    nograd("block.triu", n, n * 8);
    nograd("block.to_bool", n, n * 5);
    nograd("block.clone", n, n * 2 * b_);
    nograd("block.masked_fill_", n, n * (b_ + 1));
    if (window > 0 && len > window) {
      nograd("window.arange", len, len * 8.0);
      nograd("window.dist", n, n * 8 + len * 16.0);
      nograd("window.ge", n, n * 9);
      nograd("window.clone", n, n * 2 * b_);
      nograd("window.masked_fill_", n, n * (b_ + 1));
    }
    nograd("mask.copy_block", n, n * 2 * b_);
  }
}

void StepBuilder::packing_metadata(int layer) {
  const int window = layer_sliding_window(o_.model, layer);
  const double N = static_cast<double>(lengths_.size());
  push("packing_metadata");
  if ((o_.packing == PackingVariant::Rebuild || o_.packing == PackingVariant::Cached) &&
      o_.packing_rebuild_form == "unsloth_sdpa_mask") {
    // Unsloth's pre-cache code, op by op (packing_unsloth.cpp); the same cache keys below.
    const bool meta_miss = !(o_.packing == PackingVariant::Cached && meta_cached_);
    const bool mask_miss = !(o_.packing == PackingVariant::Cached && cached_mask_window_ == window);
    unsloth_precache_rebuild(window, meta_miss, mask_miss);
    meta_cached_ = true;
    cached_mask_window_ = window;
  } else if (o_.packing == PackingVariant::Rebuild || o_.packing == PackingVariant::Cached) {
    const bool meta_hit = o_.packing == PackingVariant::Cached && meta_cached_;
    if (!meta_hit) {
      // get_packed_info_from_kwargs: cu_seqlens and max_seqlen (lengths.max().item()).
      nograd("cu_seqlens.zeros", N + 1, (N + 1) * 4);
      nograd("cu_seqlens.cumsum", N, N * 8);
      nograd("lengths.max", N, N * 4);
      host_read("aten::item lengths.max()", 4);
      meta_cached_ = true;
    }
    // Unsloth's _SDPA_MASK_CACHE: one entry per device keyed by (dtype, sliding window), so
    // alternating windows (gpt-oss) rebuild the mask in every layer.
    const bool mask_hit = o_.packing == PackingVariant::Cached && cached_mask_window_ == window;
    if (!mask_hit) {
      nograd("seq_lengths.sum", N, N * 4);
      unsloth_mask(window);
      cached_mask_window_ = window;
    }
  } else {
    // Ours: lengths (and max_seqlen) known on the host from the packer; one kernel builds
    // cu_seqlens and the mask on the device. No host read.
    if (masks_cached_.count(window) == 0) {
      nograd("syncscope::packed_mask_kernel", static_cast<double>(T_) * T_,
             static_cast<double>(T_) * T_ * b_ + (2 * N + 1) * 4);
      masks_cached_[window] = true;
    }
  }
  pop();
}

void StepBuilder::attention(int layer) {
  const double T = T_;
  const double q = static_cast<double>(nh_) * d_, kv = static_cast<double>(nkv_) * d_;
  rmsnorm("input_layernorm", T, H_);
  linear("q_proj", "q_proj", T, q, H_);
  linear("k_proj", "k_proj", T, kv, H_);
  linear("v_proj", "v_proj", T, kv, H_);
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
  packing_metadata(layer);
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
    // SDPA with a dense additive mask computes every (i, j) block: QK^T and PV.
    fwd(FwdKernel::Kind::Attention, "scaled_dot_product_attention", 4.0 * nh_ * T * T * d_,
        (4.0 * T * q + T * T) * b_);
  }
  ew("attn_output.contiguous", T * q);
  linear("o_proj", "o_proj", T, H_, q);
  if (oss_) ew("o_proj.bias_add", T * H_);
  ew("residual_add", T * H_);
}

void StepBuilder::mlp() {
  const double T = T_;
  rmsnorm("post_attention_layernorm", T, H_);
  linear("gate_proj", "gate_proj", T, I_, H_);
  linear("up_proj", "up_proj", T, I_, H_);
  ew("silu", T * I_);
  ew("mul", T * I_);
  linear("down_proj", "down_proj", T, H_, I_);
  ew("residual_add", T * H_);
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

void StepBuilder::accumulate(double rows) {
  ew("weights.index_select", rows, 4);
  if (low_precision_) ew("y.to_fp32", rows * H_, (b_ + 4) / 2.0);
  ew("y.mul_weight", rows * H_, 4);
  ew("out.index_add_", rows * H_, 4);
}

void StepBuilder::moe() {
  const double T = T_, E = E_, K = k_;
  const double tk = T * K;
  const double per_expert = tk / E;  // balanced-routing assumption (see header)
  rmsnorm("post_attention_layernorm", T, H_);
  gemm("router", T, E, H_);
  nograd("topk", T * E, T * E * b_ + tk * (b_ + 8));
  ew("router.to_fp32", tk, (b_ + 4) / 2.0);
  ew("router.softmax", tk, 4);
  push("moe_routing");
  if (o_.moe == MoeVariant::Loop) {
    ew("moe.out.zeros", T * H_, 2);
    for (int e = 0; e < E_; ++e) {
      nograd("expert_mask.eq", tk, tk * 9);
      nograd("nonzero", tk, tk * 17);
      host_read("aten::nonzero (count)", 8);
      nograd("token_slot.mul_topk", per_expert, per_expert * 16);
      nograd("token_slot.add_slot", per_expert, per_expert * 24);
      ew("x.index_select", per_expert * H_);
      expert(fmt::format("expert_{:02}", e), per_expert);
      accumulate(per_expert);
    }
  } else if (o_.moe == MoeVariant::Sorted) {
    nograd("argsort_stable", tk, tk * 32);
    // torch.bincount on CUDA reads min and max back before counting (SummaryOps.cu).
    nograd("bincount.min", tk, tk * 8);
    host_read("aten::_to_copy bincount min().cpu()", 8);
    nograd("bincount.max", tk, tk * 8);
    host_read("aten::item bincount max()", 8);
    nograd("bincount.zeros", E, E * 8);
    nograd("bincount.histogram", tk, tk * 8 + E * 8);
    host_read("aten::tolist counts", E * 8);
    ew("moe.out.zeros", T * H_, 2);
    for (int e = 0; e < E_; ++e) {
      nograd("sel.div_topk", per_expert, per_expert * 16);
      ew("x.index_select", per_expert * H_);
      expert(fmt::format("expert_{:02}", e), per_expert);
      accumulate(per_expert);
    }
  } else if (o_.moe_expert_gemm != "padded") {
    // Ours, grouped: counts and offsets on the device; the T*k rows sorted by expert go
    // through one grouped GEMM per projection that reads the group ends from device
    // memory (at::_grouped_mm). The expert FLOPs are the baseline's.
    nograd("syncscope::moe_histogram_kernel", tk, tk * 8 + 2 * (E + 1) * 8);
    nograd("sort_stable", tk, tk * 32);
    nograd("token.div_topk", tk, tk * 16);
    ew("x.index_select", tk * H_);
    nograd("offs.to_int32", E, E * 12);
    gemm("experts.grouped_mm.gate", tk, I_, H_);
    gemm("experts.grouped_mm.up", tk, I_, H_);
    ew("experts.silu", tk * I_);
    ew("experts.mul", tk * I_);
    gemm("experts.grouped_mm.down", tk, H_, I_);
    ew("moe.out.zeros", T * H_, 2);
    accumulate(tk);
  } else {
    // Ours, padded: counts and offsets on the device, capacity-padded batched GEMM with C = T.
    const double C = T;
    nograd("syncscope::moe_histogram_kernel", tk, tk * 8 + 2 * (E + 1) * 8);
    nograd("sort_stable", tk, tk * 32);
    nograd("token.div_topk", tk, tk * 16);
    ew("x.index_select", tk * H_);
    nograd("rank.arange", tk, tk * 8);
    nograd("rank.offsets_gather", tk, tk * 24);
    nograd("rank.sub", tk, tk * 24);
    nograd("dest.mul_capacity", tk, tk * 16);
    nograd("dest.add_rank", tk, tk * 24);
    ew("xpad.zeros", E * C * H_, b_ / 2.0);
    ew("xpad.clone", E * C * H_);  // out-of-place index_copy: clone, then index_copy_
    ew("xpad.index_copy_", tk * H_);
    gemm("experts.bmm_gate", E * C, I_, H_);
    gemm("experts.bmm_up", E * C, I_, H_);
    ew("experts.silu", E * C * I_);
    ew("experts.mul", E * C * I_);
    gemm("experts.bmm_down", E * C, H_, I_);
    ew("ypad.index_select", tk * H_);
    ew("moe.out.zeros", T * H_, 2);
    accumulate(tk);
  }
  pop();
  if (low_precision_) ew("moe.out.to_dtype", T * H_, (b_ + 4) / 2.0);
  ew("residual_add", T * H_);
}

}  // namespace syncscope::kernels::detail
