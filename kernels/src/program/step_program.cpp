// The step program: the LibTorch reference step (kernels/src/torch) operator by operator,
// as the host issues it. Keep the two in step: every host read, copy, event, stream wait
// and NVTX range here has its twin there (the test ProgramMatchesStep compares the counts).
#include "syncscope/kernels/step_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "syncscope/core/error.hpp"
#include "syncscope/kernels/network.hpp"
#include "syncscope/kernels/offload_schedule.hpp"
#include "syncscope/kernels/reference.hpp"

namespace syncscope::kernels {

using program::Access;
using program::BufferUse;
using program::Op;
using program::OpKind;
using program::Program;

namespace {

constexpr int kMain = 0;
constexpr int kCopy = 1;

// One kernel of a forward pass, remembered so backward can be modelled from it.
struct FwdKernel {
  enum class Kind { Gemm, Attention, Elementwise } kind;
  std::string name;
  double flops = 0;
  double bytes = 0;
  bool frozen = false;         // Gemm of a frozen weight: backward computes the input gradient only
  double dequant_elems = 0;    // NF4 weight: dequantized again before the input-gradient GEMM
  bool fp32 = false;           // runs at the fp32 rate (gpt-oss down-projection as Unsloth runs it)
};

class StepBuilder {
 public:
  explicit StepBuilder(const StepOptions& o) : o_(o) {
    validate(o_);
    const ModelShape& m = o_.model;
    L_ = effective_layers(o_);
    b_ = dtype_bytes(o_.dtype);
    low_precision_ = o_.dtype != "fp32";
    T_ = o_.batch.packed_tokens;
    lengths_ = batch_lengths(o_, 0);
    H_ = m.hidden_size;
    nh_ = m.num_attention_heads;
    nkv_ = m.num_key_value_heads;
    d_ = m.head_dim;
    I_ = m.intermediate_size;
    V_ = m.vocab_size;
    E_ = m.num_local_experts;
    k_ = m.num_experts_per_tok;
    offload_ = !o_.offload.empty();
    adapters_ = o_.training.adapters();
    lora_scale_rank_ = o_.training.lora_rank;
    oss_ = is_gpt_oss(m) && o_.gpt_oss_unsloth_form;
    const double act = static_cast<double>(T_) * H_ * b_;
    choreo_ = offload_ ? build_choreography(plan_offload(o_.offload, L_, act, std::max(0.0, o_.offload_budget_bytes),
                                                         o_.prefetch_depth, o_.offload_first_pass, o_.offload_min_bytes))
                       : build_plain_choreography(L_);
    p_.name = fmt::format("{}/L={}/{}/packing={}/offload={}{}", m.name, L_, o_.training.mode, o_.packing,
                          offload_ ? o_.offload : "off", m.is_moe() ? "/moe=" + o_.moe : "");
    p_.streams = {{"main", false}};
    if (offload_) p_.streams.push_back({"copy", true});
    p_.num_events = choreo_.events.num_events;
    p_.event_names.resize(static_cast<std::size_t>(p_.num_events));
    if (offload_) {
      const auto& ev = choreo_.events;
      p_.event_names[static_cast<std::size_t>(ev.produced)] = "layer input produced";
      if (ev.main_all >= 0) p_.event_names[static_cast<std::size_t>(ev.main_all)] = "main stream so far";
      for (std::size_t l = 0; l < ev.offloaded.size(); ++l) p_.event_names[static_cast<std::size_t>(ev.offloaded[l])] = fmt::format("offloaded layer_{:02}", l);
      for (std::size_t b = 0; b < ev.loaded.size(); ++b) p_.event_names[static_cast<std::size_t>(ev.loaded[b])] = fmt::format("loaded ring {}", b);
      for (std::size_t b = 0; b < ev.freed.size(); ++b) p_.event_names[static_cast<std::size_t>(ev.freed[b])] = fmt::format("freed ring {}", b);
    }
    // Buffers: act_l (layer l's input on the device, act_L the last hidden state),
    // host_l (its pinned host copy), ring_b (reload buffers).
    for (int l = 0; l <= L_; ++l) act_.push_back(new_buffer(fmt::format("act_{:02} (layer_{:02} input, device)", l, l)));
    for (int l = 0; l < choreo_.plan.offloaded(); ++l) host_.push_back(new_buffer(fmt::format("host_{:02} (pinned)", l)));
    for (int b = 0; b < choreo_.plan.ring_buffers; ++b) ring_.push_back(new_buffer(fmt::format("ring_{} (device)", b)));
  }

  Program build() {
    push("step");
    upload_batch();
    push("forward");
    forward_open_ = true;
    embedding_forward();
    rope_tables();
    bool in_choreo_range = false;
    for (const ChoreoStep& s : choreo_.steps) {
      const bool choreo = s.kind != ChoreoKind::ForwardLayer && s.kind != ChoreoKind::BackwardLayer && s.kind != ChoreoKind::Head;
      if (choreo && !in_choreo_range) push("offload_reload");
      if (!choreo && in_choreo_range) pop();
      in_choreo_range = choreo;
      step(s);
    }
    if (in_choreo_range) pop();
    embedding_backward();
    pop();  // backward
    optimizer();
    loss_item();
    pop();  // step
    p_.num_buffers = static_cast<int>(p_.buffer_names.size());
    return std::move(p_);
  }

 private:
  int new_buffer(std::string name) {
    p_.buffer_names.push_back(std::move(name));
    return static_cast<int>(p_.buffer_names.size()) - 1;
  }

  Op& emit(Op op) {
    if (op.layer < 0) op.layer = layer_;
    p_.ops.push_back(std::move(op));
    return p_.ops.back();
  }
  void push(const std::string& name) {
    Op op;
    op.kind = OpKind::RangePush;
    op.name = name;
    emit(op);
  }
  void pop() {
    Op op;
    op.kind = OpKind::RangePop;
    emit(op);
  }

  Op& kernel(const std::string& name, double flops, double bytes, bool tensor_core = false) {
    Op op;
    op.kind = OpKind::Kernel;
    op.name = name;
    op.stream = kMain;
    op.flops = flops;
    op.bytes = bytes;
    // bf16/fp16 GEMMs run at the tensor-core rate; elementwise kernels are bandwidth-bound.
    op.bf16 = low_precision_ && tensor_core;
    return emit(op);
  }
  // A kernel that autograd differentiates: remembered for the backward model.
  Op& fwd(FwdKernel::Kind kind, const std::string& name, double flops, double bytes) {
    if (recording_) fwd_kernels_.push_back({kind, name, flops, bytes});
    return kernel(name, flops, bytes, kind != FwdKernel::Kind::Elementwise);
  }
  // A GEMM against a weight: trainable in full fine-tuning, frozen under lora/qlora.
  Op& gemm(const std::string& name, double m, double n, double k) {
    Op& op = fwd(FwdKernel::Kind::Gemm, name, 2.0 * m * n * k, (m * k + k * n + m * n) * b_);
    if (adapters_ && recording_) fwd_kernels_.back().frozen = true;
    return op;
  }
  // A GEMM whose weight trains whatever the mode (LoRA adapters).
  Op& trainable_gemm(const std::string& name, double m, double n, double k) {
    return fwd(FwdKernel::Kind::Gemm, name, 2.0 * m * n * k, (m * k + k * n + m * n) * b_);
  }
  // bitsandbytes' dequantize_4bit of a [out, in] NF4 weight into the compute dtype (our
  // kernel, kernels/src/cuda/nf4_dequant.cu); with double quantization the absmax first.
  void dequantize(const std::string& name, double elems) {
    const auto n = static_cast<std::int64_t>(elems);
    if (o_.training.double_quant) {
      const double blocks = std::ceil(elems / kNf4BlockSize);
      nograd("syncscope::nf4_absmax " + name, blocks, blocks * 9);
    }
    nograd("syncscope::nf4_dequantize " + name, elems, nf4_storage_bytes(n, o_.training.double_quant) + elems * b_);
  }
  // A projection `module` of [out, in] over T rows: the base (NF4-dequantized under qlora),
  // plus the LoRA path x A^T B^T * alpha/r where adapted (as the LibTorch step computes it).
  void linear(const std::string& module, const std::string& name, double T, double out, double in) {
    if (!adapters_) {
      gemm(name, T, out, in);
      return;
    }
    const bool nf4 = nf4_quantized(o_, module);
    if (nf4) dequantize(name, out * in);
    gemm(name, T, out, in);
    if (nf4 && recording_) fwd_kernels_.back().dequant_elems = out * in;
    if (lora_adapted(o_, module)) {
      const double r = lora_scale_rank_;
      trainable_gemm(name + ".lora_A", T, r, in);
      trainable_gemm(name + ".lora_B", T, out, r);
      ew(name + ".lora_scale", T * out);
      ew(name + ".lora_add", T * out);
    }
  }
  // Elementwise over `elems` elements of `bytes_per` bytes, one input and one output.
  Op& ew(const std::string& name, double elems, double bytes_per = -1) {
    const double bp = bytes_per < 0 ? b_ : bytes_per;
    return fwd(FwdKernel::Kind::Elementwise, name, elems, 2.0 * elems * bp);
  }
  // Bookkeeping kernels autograd does not differentiate (metadata, routing indices).
  Op& nograd(const std::string& name, double elems, double bytes) { return kernel(name, elems, bytes); }

  Op& copy(const std::string& name, int stream, CopyKind kind, MemoryKind host, double bytes) {
    Op op;
    op.kind = OpKind::Copy;
    op.name = name;
    op.stream = stream;
    op.copy = kind;
    op.host_memory = host;
    op.bytes = bytes;
    return emit(op);
  }
  // A host read the way ATen does it on CUDA: D2H into pageable memory, then
  // cudaStreamSynchronize (aten::item -> _local_scalar_dense; .tolist()/.cpu() -> _to_copy).
  void host_read(const std::string& aten_op, double bytes) {
    copy(aten_op, kMain, CopyKind::DtoH, MemoryKind::Pageable, bytes);
    Op s;
    s.kind = OpKind::StreamSync;
    s.name = "cudaStreamSynchronize";
    s.stream = kMain;
    emit(s);
  }
  void event(OpKind kind, int stream, int ev, const std::string& name) {
    Op op;
    op.kind = kind;
    op.stream = stream;
    op.event = ev;
    op.name = name;
    emit(op);
  }

  void rmsnorm(const std::string& what, double rows, double cols) {
    const double n = rows * cols;
    if (low_precision_) ew(what + ".to_fp32", n, (b_ + 4) / 2.0);
    ew(what + ".pow", n, 4);
    ew(what + ".mean", n, 2);  // reads n fp32, writes rows
    ew(what + ".add_eps", rows, 4);
    ew(what + ".rsqrt", rows, 4);
    ew(what + ".mul", n, 4);
    if (low_precision_) ew(what + ".to_dtype", n, (b_ + 4) / 2.0);
    ew(what + ".mul_weight", n);
  }

  void rope(const std::string& what, double elems) {
    ew(what + ".mul_cos", elems);
    ew(what + ".neg", elems / 2);
    ew(what + ".cat", elems);
    ew(what + ".mul_sin", elems);
    ew(what + ".add", elems);
  }

  void upload_batch() {
    const double T = T_;
    // The packer's tensors: pinned host staging, copied non_blocking on the main stream.
    const char* name = "Memcpy HtoD (Pinned -> Device)";
    copy(std::string(name) + " input_ids", kMain, CopyKind::HtoD, MemoryKind::Pinned, T * 8);
    copy(std::string(name) + " labels", kMain, CopyKind::HtoD, MemoryKind::Pinned, T * 8);
    copy(std::string(name) + " position_ids", kMain, CopyKind::HtoD, MemoryKind::Pinned, T * 8);
    copy(std::string(name) + " seq_lengths", kMain, CopyKind::HtoD, MemoryKind::Pinned,
         static_cast<double>(lengths_.size()) * 4);
  }

  void embedding_forward() {
    Op& op = kernel("embedding", 0, 2.0 * T_ * H_ * b_);
    op.buffer = act_[0];
    op.access = Access::Write;
  }
  void rope_tables() {
    const double n = static_cast<double>(T_) * d_;
    kernel("rope.inv_freq.arange", d_ / 2.0, d_ * 2.0);
    kernel("rope.inv_freq.div", d_ / 2.0, d_ * 4.0);
    kernel("rope.inv_freq.pow", d_ / 2.0, d_ * 4.0);
    kernel("rope.inv_freq.reciprocal", d_ / 2.0, d_ * 4.0);
    kernel("rope.positions_to_float", T_, T_ * 12.0);
    kernel("rope.outer_inv_freq", n / 2, n * 2 + d_ * 2.0);
    kernel("rope.cat", n, n * 8);
    kernel("rope.cos", n, n * 8);
    kernel("rope.sin", n, n * 8);
    if (low_precision_) {
      kernel("rope.cos.to_dtype", n, n * (4.0 + b_));
      kernel("rope.sin.to_dtype", n, n * (4.0 + b_));
    }
  }

  // Unsloth's build_sdpa_packed_attention_mask, kernel by kernel (one window).
  void unsloth_mask(int window) {
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

  void packing_metadata(int layer) {
    const int window = layer_sliding_window(o_.model, layer);
    const double N = static_cast<double>(lengths_.size());
    push("packing_metadata");
    if (o_.packing == "rebuild" || o_.packing == "cached") {
      const bool meta_hit = o_.packing == "cached" && meta_cached_;
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
      const bool mask_hit = o_.packing == "cached" && cached_mask_window_ == window;
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

  void attention(int layer) {
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

  void mlp() {
    const double T = T_;
    rmsnorm("post_attention_layernorm", T, H_);
    linear("gate_proj", "gate_proj", T, I_, H_);
    linear("up_proj", "up_proj", T, I_, H_);
    ew("silu", T * I_);
    ew("mul", T * I_);
    linear("down_proj", "down_proj", T, H_, I_);
    ew("residual_add", T * H_);
  }

  void expert(const std::string& p, double rows) {
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

  // gpt-oss's experts as Unsloth runs them (unsloth_zoo temporary_patches/gpt_oss.py, HF
  // GptOssExperts): gate_up with bias, gate clamped above at the limit, up clamped to
  // [-limit, limit], glu = gate * sigmoid(1.702 gate), (up + 1) * glu, then the down
  // projection with bias in fp32 with autocast off (the weighting follows in fp32).
  void oss_expert(const std::string& p, double rows) {
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

  // moe.cpp's accumulate(): weights gathered, rows to fp32, weighted, index_add_ into fp32.
  void accumulate(double rows) {
    ew("weights.index_select", rows, 4);
    if (low_precision_) ew("y.to_fp32", rows * H_, (b_ + 4) / 2.0);
    ew("y.mul_weight", rows * H_, 4);
    ew("out.index_add_", rows * H_, 4);
  }

  void moe() {
    const double T = T_, E = E_, K = k_;
    const double tk = T * K;
    const double per_expert = tk / E;  // balanced-routing assumption (see header)
    rmsnorm("post_attention_layernorm", T, H_);
    gemm("router", T, E, H_);
    nograd("topk", T * E, T * E * b_ + tk * (b_ + 8));
    ew("router.to_fp32", tk, (b_ + 4) / 2.0);
    ew("router.softmax", tk, 4);
    push("moe_routing");
    if (o_.moe == "loop") {
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
    } else if (o_.moe == "sorted") {
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

  // One layer's forward kernels; the first reads `input`, the last writes `output`.
  void layer_forward(int layer, int input, int output) {
    const std::size_t first = p_.ops.size();
    attention(layer);
    if (o_.model.is_moe()) {
      moe();
    } else {
      mlp();
    }
    mark_first_kernel(first, input, Access::Read);
    if (output >= 0) mark_last_kernel(output, Access::Write);
  }

  void mark_first_kernel(std::size_t from, int buffer, Access access) {
    for (std::size_t i = from; i < p_.ops.size(); ++i)
      if (p_.ops[i].kind == OpKind::Kernel) {
        p_.ops[i].more_buffers.push_back({buffer, access});
        return;
      }
  }
  void mark_last_kernel(int buffer, Access access) {
    for (std::size_t i = p_.ops.size(); i-- > 0;)
      if (p_.ops[i].kind == OpKind::Kernel) {
        p_.ops[i].more_buffers.push_back({buffer, access});
        return;
      }
  }

  // Backward of the kernels recorded for one forward, in reverse order.
  void backward_of(const std::vector<FwdKernel>& ks) {
    for (auto it = ks.rbegin(); it != ks.rend(); ++it) {
      switch (it->kind) {
        case FwdKernel::Kind::Gemm:
          if (it->dequant_elems > 0) dequantize(it->name, it->dequant_elems);  // MatMul4Bit.backward
          kernel(it->name + ".backward_dgrad", it->flops, it->bytes, !it->fp32);
          if (!it->frozen) kernel(it->name + ".backward_wgrad", it->flops, it->bytes, !it->fp32);
          break;
        case FwdKernel::Kind::Attention:
          kernel(it->name + ".backward", 2 * it->flops, 2 * it->bytes, true);
          break;
        case FwdKernel::Kind::Elementwise: kernel(it->name + ".backward", it->flops, 1.5 * it->bytes); break;
      }
    }
  }

  void step(const ChoreoStep& s) {
    switch (s.kind) {
      case ChoreoKind::RecordMain: event(OpKind::EventRecord, kMain, s.event, "cudaEventRecord"); break;
      case ChoreoKind::RecordCopy: event(OpKind::EventRecord, kCopy, s.event, "cudaEventRecord"); break;
      case ChoreoKind::CopyWaits: event(OpKind::StreamWait, kCopy, s.event, "cudaStreamWaitEvent"); break;
      case ChoreoKind::MainWaits: event(OpKind::StreamWait, kMain, s.event, "cudaStreamWaitEvent"); break;
      case ChoreoKind::OffloadCopy: {
        layer_ = s.layer;
        Op& op = copy("Memcpy DtoH (Device -> Pinned) checkpoint offload", kCopy, CopyKind::DtoH, MemoryKind::Pinned,
                      static_cast<double>(T_) * H_ * b_);
        op.buffer = act_[static_cast<std::size_t>(s.layer)];
        op.access = Access::Read;
        op.more_buffers.push_back({host_[static_cast<std::size_t>(s.layer)], Access::Write});
        layer_ = -1;
        break;
      }
      case ChoreoKind::ReloadCopy: {
        layer_ = s.layer;
        Op& op = copy("Memcpy HtoD (Pinned -> Device) checkpoint reload", kCopy, CopyKind::HtoD, MemoryKind::Pinned,
                      static_cast<double>(T_) * H_ * b_);
        op.buffer = host_[static_cast<std::size_t>(s.layer)];
        op.access = Access::Read;
        op.more_buffers.push_back({ring_[static_cast<std::size_t>(s.buffer)], Access::Write});
        layer_ = -1;
        break;
      }
      case ChoreoKind::ReleaseInput: {
        Op op;
        op.kind = OpKind::HostWork;
        op.name = fmt::format("release layer_{:02} input to the caching allocator", s.layer);
        op.stream = kMain;
        op.layer = s.layer;
        op.buffer = act_[static_cast<std::size_t>(s.layer)];
        op.access = Access::Write;
        emit(op);
        break;
      }
      case ChoreoKind::ForwardLayer: {
        layer_ = s.layer;
        push(fmt::format("layer_{:02}", s.layer));
        recording_ = true;
        fwd_kernels_.clear();
        layer_forward(s.layer, act_[static_cast<std::size_t>(s.layer)], act_[static_cast<std::size_t>(s.layer) + 1]);
        recording_ = false;
        layer_fwd_[s.layer] = fwd_kernels_;
        pop();
        layer_ = -1;
        break;
      }
      case ChoreoKind::Head: head(); break;
      case ChoreoKind::BackwardLayer: {
        layer_ = s.layer;
        push(fmt::format("layer_{:02}", s.layer));
        const int input = s.buffer >= 0 ? ring_[static_cast<std::size_t>(s.buffer)] : act_[static_cast<std::size_t>(s.layer)];
        std::vector<FwdKernel> ks = layer_fwd_[s.layer];
        if (offload_) {
          // Checkpointing: recompute the layer with grad from its (reloaded) input.
          recording_ = true;
          fwd_kernels_.clear();
          layer_forward(s.layer, input, -1);
          recording_ = false;
          ks = fwd_kernels_;
        }
        const std::size_t first = p_.ops.size();
        backward_of(ks);
        // The input layernorm's backward reads the layer input last.
        if (p_.ops.size() > first) mark_last_kernel(input, Access::Read);
        pop();
        layer_ = -1;
        break;
      }
    }
  }

  void head() {
    const double T = T_;
    recording_ = true;
    fwd_kernels_.clear();
    const std::size_t first = p_.ops.size();
    rmsnorm("norm", T, H_);
    mark_first_kernel(first, act_[static_cast<std::size_t>(L_)], Access::Read);
    gemm("lm_head", T, V_, H_);  // the embedding matrix itself when tied: its gradient adds into it
    ew("cross_entropy.log_softmax", T * V_);
    ew("cross_entropy.nll_loss", T, 8 + b_);
    recording_ = false;
    std::vector<FwdKernel> ks = fwd_kernels_;
    pop();  // forward
    forward_open_ = false;
    push("backward");
    backward_of(ks);
  }

  void embedding_backward() {
    if (adapters_) return;  // frozen embedding: autograd stops at the first layer's input
    const double T = T_;
    kernel("embedding_backward.zeros", 0, static_cast<double>(V_) * H_ * b_);
    kernel("embedding_backward.sort_indices", T, T * 32);
    kernel("embedding_backward", T * H_, 2.0 * T * H_ * b_);
  }

  void optimizer() {
    push("optimizer");
    // What trains (network.hpp: everything in full fine-tuning, the adapters under lora/qlora;
    // a tied LM head is the embedding, updated once).
    std::vector<double> params;
    for (const auto& p : network_parameters(o_))
      if (p.trainable) params.push_back(static_cast<double>(p.numel));
    // LibTorch's AdamW (torch/csrc/api/src/optim/adamw.cpp), per parameter: exp_avg
    // mul_/add_, exp_avg_sq mul_/addcmul_, sqrt, div, add_ eps, addcdiv_ (+ mul_ decay).
    static constexpr const char* names[] = {"exp_avg.mul_", "exp_avg.add_", "exp_avg_sq.mul_", "exp_avg_sq.addcmul_",
                                            "denom.sqrt", "denom.div", "denom.add_", "param.addcdiv_"};
    for (double n : params) {
      if (o_.weight_decay != 0) kernel("adamw.param.mul_", n, 2 * n * b_);
      for (const char* k : names) kernel(std::string("adamw.") + k, n, 3 * n * b_);
    }
    pop();
  }

  void loss_item() { host_read("aten::item loss", b_); }

  StepOptions o_;
  Program p_;
  Choreography choreo_;
  int L_ = 0, b_ = 4, T_ = 0, H_ = 0, nh_ = 0, nkv_ = 0, d_ = 0, I_ = 0, V_ = 0, E_ = 0, k_ = 0;
  bool low_precision_ = false, offload_ = false, forward_open_ = false;
  std::vector<int> lengths_;
  std::vector<int> act_, host_, ring_;
  int layer_ = -1;
  bool recording_ = false;
  std::vector<FwdKernel> fwd_kernels_;
  std::map<int, std::vector<FwdKernel>> layer_fwd_;
  bool meta_cached_ = false;
  int cached_mask_window_ = -1;       // "cached": the one (dtype, window) entry Unsloth keeps
  std::map<int, bool> masks_cached_;  // "device": ours keeps one mask per window
  bool adapters_ = false, oss_ = false;
  int lora_scale_rank_ = 16;
};

}  // namespace

program::Program build_step_program(const StepOptions& options) { return StepBuilder(options).build(); }

}  // namespace syncscope::kernels
