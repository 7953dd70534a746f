// The decoder stack of the reference step: embedding, RMSNorm, grouped-query attention over
// the packed batch (q/k norms for Qwen3, RoPE restarting per sequence, head_dim from the
// shape), SwiGLU MLP or the MoE block, final norm, LM head and cross-entropy. Shapes are the
// model's; the architecture is the common Llama/Qwen3 form (gpt-oss's attention sinks,
// biases and clamped SwiGLU are left out: they do not change the fixes' choreography).
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <random>

#include "syncscope/core/error.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/reference.hpp"
#include "torch/internal.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "cuda/cuda_api.h"
#endif

namespace syncscope::kernels::detail {

namespace {

constexpr double kInitStd = 0.02;  // HF initializer_range of Llama/Qwen3

torch::Tensor rotate_half(const torch::Tensor& x) {
  const std::int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

torch::Tensor apply_rope(const torch::Tensor& x, const Rope& rope) { return x * rope.cos + rotate_half(x) * rope.sin; }

torch::Tensor attention_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& mask, int head_dim) {
#if TORCH_VERSION_MAJOR >= 2
  (void)head_dim;
  return at::scaled_dot_product_attention(q, k, v, mask);
#else
  // LibTorch 1.x has no SDPA: the math it stands for, softmax in fp32.
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  const torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale + mask;
  const torch::Tensor p = torch::softmax(scores.to(torch::kFloat32), -1).to(q.scalar_type());
  return torch::matmul(p, v);
#endif
}

}  // namespace

ModelWeights make_weights(const program::StepOptions& o, int layers, const Ctx& ctx) {
  const scenario::ModelShape& m = o.model;
  program::StepOptions at_depth = o;
  at_depth.layers = layers;
  const std::vector<program::ParamInfo> params = program::network_parameters(at_depth);
  torch::manual_seed(o.seed);  // seeds the CPU and every CUDA generator
  const auto gen_opts = torch::TensorOptions().device(ctx.device).dtype(torch::kFloat32);
  ModelWeights w;
  // Pass 1: the base network in network_parameters() order, so full, lora and qlora draw the
  // same base weights from the seed. Norms start at one; the rest ~ N(0, 0.02).
  std::map<std::string, torch::Tensor> dense;
  std::map<std::string, Nf4Weight> nf4;
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const program::ParamInfo& p : params) {
    if (p.name.find(".lora_") != std::string::npos) continue;
    shapes[p.name] = p.shape;
    const bool norm = p.name.find("norm") != std::string::npos;
    torch::Tensor t = norm ? torch::ones(p.shape, gen_opts) : torch::randn(p.shape, gen_opts) * kInitStd;
    if (p.storage == program::ParamStorage::Nf4) {
      nf4[p.name] = quantize_nf4(t, o.training.double_quant);
      w.frozen_elements += p.numel;
      continue;
    }
    t = t.to(ctx.device, ctx.dtype).detach();
    if (p.trainable) {
      t.requires_grad_(true);
      w.named.emplace_back(p.name, t);
    } else {
      w.frozen_elements += p.numel;
    }
    dense[p.name] = t;
  }
  // Pass 2: adapters as PEFT initializes them: A ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming
  // uniform with a = sqrt(5)), B = 0, so the first forward equals the base network's.
  std::map<std::string, torch::Tensor> adapters;
  for (const program::ParamInfo& p : params) {
    if (p.name.find(".lora_") == std::string::npos) continue;
    torch::Tensor t;
    if (p.name.find(".lora_A") != std::string::npos) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(p.shape[1]));
      t = (torch::rand(p.shape, gen_opts) * 2.0 - 1.0) * bound;
    } else {
      t = torch::zeros(p.shape, gen_opts);
    }
    t = t.to(ctx.device, ctx.dtype).detach().requires_grad_(true);
    adapters[p.name] = t;
    w.named.emplace_back(p.name, t);
  }
  const double scale = o.training.lora_alpha / static_cast<double>(o.training.lora_rank);
  auto linear = [&](const std::string& name) {
    LinearWeight l;
    if (auto it = nf4.find(name); it != nf4.end()) {
      l.nf4 = it->second;
    } else {
      l.w = dense.at(name);
    }
    if (auto a = adapters.find(name + ".lora_A"); a != adapters.end()) {
      l.lora_a = a->second;
      l.lora_b = adapters.at(name + ".lora_B");
      l.scale = scale;
    }
    return l;
  };
  auto get = [&](const std::string& name) {
    auto it = dense.find(name);
    return it == dense.end() ? torch::Tensor() : it->second;
  };
  w.embed = dense.at("embed_tokens");
  for (int l = 0; l < layers; ++l) {
    LayerWeights lw;
    const std::string p = fmt::format("layers.{}.", l);
    lw.input_norm = get(p + "input_layernorm");
    lw.q = linear(p + "q_proj");
    lw.k = linear(p + "k_proj");
    lw.v = linear(p + "v_proj");
    lw.o = linear(p + "o_proj");
    lw.q_norm = get(p + "q_norm");
    lw.k_norm = get(p + "k_norm");
    lw.post_norm = get(p + "post_attention_layernorm");
    if (m.is_moe()) {
      lw.router = get(p + "router");
      lw.experts.gate = get(p + "experts.gate");
      lw.experts.up = get(p + "experts.up");
      lw.experts.down = get(p + "experts.down");
    } else {
      lw.gate = linear(p + "gate_proj");
      lw.up = linear(p + "up_proj");
      lw.down = linear(p + "down_proj");
    }
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = get("norm");
  w.lm_head = m.tie_word_embeddings ? w.embed : dense.at("lm_head");
  return w;
}

Nf4Weight quantize_nf4(const torch::Tensor& w, bool double_quant) {
  // bitsandbytes' quantize_4bit (nf4, blocksize 64) with torch ops on w's device: the block
  // absmax, the nearest code by the midpoints (kQuantizeBlockwise's `x > mid` tree, i.e. the
  // count of midpoints below x), two codes per byte with the first in the high nibble.
  const torch::Tensor flat = w.detach().to(torch::kFloat32).reshape({-1});
  const std::int64_t n = flat.numel();
  const std::int64_t blocks = (n + program::kNf4BlockSize - 1) / program::kNf4BlockSize;
  const auto f = torch::TensorOptions().device(w.device()).dtype(torch::kFloat32);
  const torch::Tensor padded =
      torch::cat({flat, torch::zeros({blocks * program::kNf4BlockSize - n}, f)}).view({blocks, program::kNf4BlockSize});
  const torch::Tensor absmax = std::get<0>(padded.abs().max(1));
  const torch::Tensor safe = torch::where(absmax > 0, absmax, torch::ones_like(absmax));
  const torch::Tensor x = torch::where(absmax.unsqueeze(1) > 0, padded / safe.unsqueeze(1), torch::zeros_like(padded));
  std::vector<float> mids;
  for (int i = 0; i + 1 < 16; ++i) mids.push_back(0.5f * (program::kNf4Values[i] + program::kNf4Values[i + 1]));
  const torch::Tensor mid_t = torch::from_blob(mids.data(), {15}, torch::kFloat32).clone().to(w.device());
  torch::Tensor idx = torch::bucketize(x.reshape({-1}).narrow(0, 0, n), mid_t, /*out_int32=*/false, /*right=*/false);
  if (n % 2) idx = torch::cat({idx, torch::zeros({1}, idx.options())});
  const torch::Tensor pairs = idx.view({-1, 2});
  Nf4Weight q;
  q.rows = w.dim() == 2 ? w.size(0) : n;
  q.cols = w.dim() == 2 ? w.size(1) : 1;
  q.codes = (pairs.select(1, 0) * 16 + pairs.select(1, 1)).to(torch::kUInt8);
  if (!double_quant) {
    q.absmax = absmax.contiguous();
    return q;
  }
  // compress_statistics: absmax minus its mean, 8-bit dynamic-map codes in blocks of 256.
  q.offset = absmax.mean().item<double>();
  const torch::Tensor centred = absmax - q.offset;
  const std::int64_t b2 = (blocks + program::kNf4AbsmaxBlockSize - 1) / program::kNf4AbsmaxBlockSize;
  const torch::Tensor c2 = torch::cat({centred, torch::zeros({b2 * program::kNf4AbsmaxBlockSize - blocks}, f)})
                               .view({b2, program::kNf4AbsmaxBlockSize});
  q.absmax2 = std::get<0>(c2.abs().max(1)).contiguous();
  const torch::Tensor safe2 = torch::where(q.absmax2 > 0, q.absmax2, torch::ones_like(q.absmax2));
  const torch::Tensor y = (c2 / safe2.unsqueeze(1)).reshape({-1}).narrow(0, 0, blocks);
  std::vector<float> map = program::dynamic_map_signed();
  std::vector<float> mids2;
  for (int i = 0; i + 1 < 256; ++i)
    mids2.push_back(0.5f * (map[static_cast<std::size_t>(i)] + map[static_cast<std::size_t>(i) + 1]));
  const torch::Tensor mid2_t = torch::from_blob(mids2.data(), {255}, torch::kFloat32).clone().to(w.device());
  q.absmax_codes = torch::bucketize(y, mid2_t, false, false).to(torch::kUInt8);
  q.map = torch::from_blob(map.data(), {256}, torch::kFloat32).clone().to(w.device());
  return q;
}

namespace {

torch::Tensor resolved_absmax(const Nf4Weight& w, const Ctx& ctx) {
  if (w.absmax.defined()) return w.absmax;
  const std::int64_t blocks = w.absmax_codes.numel();
  if (ctx.cuda) {
#ifdef SYNCSCOPE_KERNELS_CUDA
    torch::Tensor out = torch::empty({blocks}, torch::TensorOptions().device(ctx.device).dtype(torch::kFloat32));
    check_cuda(ss_nf4_absmax(w.absmax_codes.data_ptr<std::uint8_t>(), w.map.data_ptr<float>(),
                             w.absmax2.data_ptr<float>(), static_cast<float>(w.offset), blocks, out.data_ptr<float>(),
                             nullptr),
               "ss_nf4_absmax");
    return out;
#endif
  }
  const torch::Tensor scale2 = w.absmax2.repeat_interleave(program::kNf4AbsmaxBlockSize).narrow(0, 0, blocks);
  return w.map.index_select(0, w.absmax_codes.to(torch::kLong)) * scale2 + static_cast<float>(w.offset);
}

}  // namespace

torch::Tensor dequantize_nf4(const Nf4Weight& w, const Ctx& ctx) {
  const std::int64_t n = w.rows * w.cols;
  const torch::Tensor absmax = resolved_absmax(w, ctx);
  if (ctx.cuda) {
#ifdef SYNCSCOPE_KERNELS_CUDA
    torch::Tensor out = torch::empty({w.rows, w.cols}, ctx.opts());
    const int code = ctx.dtype == torch::kFloat32    ? SS_DTYPE_F32
                     : ctx.dtype == torch::kBFloat16 ? SS_DTYPE_BF16
                                                     : SS_DTYPE_F16;
    check_cuda(ss_nf4_dequantize(w.codes.data_ptr<std::uint8_t>(), absmax.data_ptr<float>(), n, out.data_ptr(), code,
                                 SS_NF4_DEFAULT_VARIANT, nullptr),
               "ss_nf4_dequantize");
    return out;
#else
    SYNCSCOPE_THROW_IF(true, "qlora on CUDA needs a CUDA build of syncscope");
#endif
  }
  // The CPU reference's arithmetic (kernels/reference.cpp nf4_dequantize) with torch ops.
  const torch::Tensor lut = torch::from_blob(const_cast<float*>(program::kNf4Values), {16}, torch::kFloat32).clone();
  const torch::Tensor codes = w.codes.to(torch::kLong);
  const torch::Tensor idx =
      torch::stack({torch::div(codes, 16, "floor"), torch::remainder(codes, 16)}, 1).reshape({-1}).narrow(0, 0, n);
  const torch::Tensor scale = absmax.repeat_interleave(program::kNf4BlockSize).narrow(0, 0, n);
  return (lut.index_select(0, idx) * scale).to(ctx.dtype).view({w.rows, w.cols});
}

namespace {

// MatMul4Bit's autograd: the dequantized weight lives only inside forward and backward.
struct Nf4Linear : public torch::autograd::Function<Nf4Linear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* actx, const torch::Tensor& x, const Nf4Weight* w,
                               const Ctx* ctx) {
    actx->saved_data["w"] = reinterpret_cast<std::int64_t>(w);
    actx->saved_data["ctx"] = reinterpret_cast<std::int64_t>(ctx);
    return torch::linear(x, dequantize_nf4(*w, *ctx));
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* actx,
                                                 torch::autograd::variable_list grads) {
    const auto* w = reinterpret_cast<const Nf4Weight*>(actx->saved_data["w"].toInt());
    const auto* ctx = reinterpret_cast<const Ctx*>(actx->saved_data["ctx"].toInt());
    return {grads[0].matmul(dequantize_nf4(*w, *ctx)), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor nf4_linear(const torch::Tensor& x, const Nf4Weight& w, const Ctx& ctx) {
  return Nf4Linear::apply(x, &w, &ctx);
}

torch::Tensor apply_linear(const LinearWeight& l, const torch::Tensor& x, const Ctx& ctx) {
  torch::Tensor y = l.nf4.defined() ? nf4_linear(x, l.nf4, ctx) : torch::linear(x, l.w);
  if (l.lora_a.defined()) y = y + torch::linear(torch::linear(x, l.lora_a), l.lora_b) * l.scale;
  return y;
}

Rope rope_tables(const torch::Tensor& position_ids, const scenario::ModelShape& m, const Ctx& ctx) {
  // inv_freq = theta^(-2i/d), built on the device: a host-built table would be a pageable
  // H2D copy, which LibTorch follows with a stream synchronization on CUDA.
  const std::int64_t d = m.head_dim;
  const auto f = torch::TensorOptions().device(ctx.device).dtype(torch::kFloat32);
  const torch::Tensor inv_freq =
      torch::pow(m.rope_theta, torch::arange(0, d, 2, f) / static_cast<double>(d)).reciprocal();
  const torch::Tensor freqs = position_ids.to(torch::kFloat32).unsqueeze(1) * inv_freq.unsqueeze(0);
  const torch::Tensor emb = torch::cat({freqs, freqs}, -1);
  return Rope{emb.cos().to(ctx.dtype).unsqueeze(1), emb.sin().to(ctx.dtype).unsqueeze(1)};
}

torch::Tensor rmsnorm(const torch::Tensor& x, const torch::Tensor& w, double eps, const Ctx& ctx) {
  (void)ctx;
  const bool upcast = x.scalar_type() != torch::kFloat32;
  const torch::Tensor xf = upcast ? x.to(torch::kFloat32) : x;
  torch::Tensor y = xf * torch::rsqrt(xf.pow(2).mean(-1, true) + eps);
  if (upcast) y = y.to(x.scalar_type());
  return y * w;
}

torch::Tensor layer_forward(const program::StepOptions& o, int layer, const LayerWeights& w, const torch::Tensor& x,
                            const PackedBatch& batch, const Rope& rope, std::map<fixes::Fix, std::any>& fix_states,
                            Ctx& ctx) {
  const scenario::ModelShape& m = o.model;
  const std::int64_t T = x.size(0), nh = m.num_attention_heads, nkv = m.num_key_value_heads, d = m.head_dim;
  const double eps = m.rms_norm_eps;
  const torch::Tensor n = rmsnorm(x, w.input_norm, eps, ctx);
  torch::Tensor q = apply_linear(w.q, n, ctx).view({T, nh, d});
  torch::Tensor k = apply_linear(w.k, n, ctx).view({T, nkv, d});
  torch::Tensor v = apply_linear(w.v, n, ctx).view({T, nkv, d});
  if (program::uses_qk_norm(m)) {
    q = rmsnorm(q, w.q_norm, eps, ctx);
    k = rmsnorm(k, w.k_norm, eps, ctx);
  }
  q = apply_rope(q, rope);
  k = apply_rope(k, rope);
  if (nh != nkv) {  // grouped-query attention: each kv head serves nh/nkv query heads
    k = k.unsqueeze(2).expand({T, nkv, nh / nkv, d}).reshape({T, nh, d});
    v = v.unsqueeze(2).expand({T, nkv, nh / nkv, d}).reshape({T, nh, d});
  }
  const torch::Tensor mask =
      fix_attention_mask(o, layer, program::layer_sliding_window(m, layer), batch, fix_states, ctx);
  const torch::Tensor attn = attention_core(q.transpose(0, 1).unsqueeze(0), k.transpose(0, 1).unsqueeze(0),
                                            v.transpose(0, 1).unsqueeze(0), mask, static_cast<int>(d));
  const torch::Tensor h = x + apply_linear(w.o, attn.squeeze(0).transpose(0, 1).reshape({T, nh * d}), ctx);
  const torch::Tensor n2 = rmsnorm(h, w.post_norm, eps, ctx);
  if (!m.is_moe())
    return h + apply_linear(w.down, torch::silu(apply_linear(w.gate, n2, ctx)) * apply_linear(w.up, n2, ctx), ctx);
  // gpt-oss routing: top-k of the router logits, softmax over the k chosen.
  const torch::Tensor logits = torch::linear(n2, w.router);
  auto top = torch::topk(logits, m.num_experts_per_tok, -1);
  const torch::Tensor weights = torch::softmax(std::get<0>(top).to(torch::kFloat32), -1);
  const torch::Tensor out =
      fix_expert_dispatch(o, layer, n2, std::get<1>(top), weights, w.experts, batch, fix_states, ctx);
  return h + out.to(x.scalar_type());
}

torch::Tensor head_loss(const program::StepOptions& o, const ModelWeights& w, const torch::Tensor& x,
                        const torch::Tensor& labels, const Ctx& ctx) {
  const torch::Tensor logits = torch::linear(rmsnorm(x, w.final_norm, o.model.rms_norm_eps, ctx), w.lm_head);
  namespace F = torch::nn::functional;
  return F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions().ignore_index(-100));
}

HostBatch pack_batch(const std::vector<int>& lengths, int vocab, std::uint64_t seed, bool pinned) {
  HostBatch b;
  std::int64_t total = 0;
  for (int len : lengths) {
    SYNCSCOPE_INPUT_ERROR_IF(len <= 0, fmt::format("packed batch: sequence length {} is not positive", len));
    b.lengths.push_back(len);
    total += len;
  }
  std::vector<std::int64_t> ids(static_cast<std::size_t>(total)), labels(static_cast<std::size_t>(total)),
      pos(static_cast<std::size_t>(total));
  std::mt19937_64 rng(seed);
  for (auto& id : ids) id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(vocab));
  std::size_t i = 0;
  for (int len : lengths)
    for (int p = 0; p < len; ++p, ++i) {
      pos[i] = p;
      labels[i] = p + 1 < len ? ids[i + 1] : -100;  // never predict across a sequence boundary
    }
  auto host = [&](void* data, std::int64_t n, torch::ScalarType t) {
    torch::Tensor h = torch::from_blob(data, {n}, t).clone();
    return pinned ? h.pin_memory() : h;
  };
  b.input_ids = host(ids.data(), total, torch::kLong);
  b.labels = host(labels.data(), total, torch::kLong);
  b.position_ids = host(pos.data(), total, torch::kLong);
  b.seq_lengths = host(b.lengths.data(), static_cast<std::int64_t>(b.lengths.size()), torch::kInt32);
  return b;
}

PackedBatch upload(const HostBatch& host, const Ctx& ctx, std::uint64_t generation) {
  PackedBatch b;
  b.host_lengths = host.lengths;
  b.generation = generation;
  b.total = static_cast<int>(host.input_ids.numel());
  // non_blocking from pinned memory on CUDA; copy=true so every step gets new tensors (a new
  // batch object) even on CPU.
  auto up = [&](const torch::Tensor& t) {
    return t.to(ctx.device, t.scalar_type(), /*non_blocking=*/true, /*copy=*/true);
  };
  b.input_ids = up(host.input_ids);
  b.labels = up(host.labels);
  b.position_ids = up(host.position_ids);
  b.seq_lengths = up(host.seq_lengths);
  return b;
}

}  // namespace syncscope::kernels::detail
