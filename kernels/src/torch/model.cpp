// The decoder stack of the reference step: embedding, RMSNorm, grouped-query attention over
// the packed batch (q/k norms for Qwen3, RoPE restarting per sequence, head_dim from the
// shape), SwiGLU MLP or the MoE block, final norm, LM head and cross-entropy. Shapes are the
// model's; the architecture is the common Llama/Qwen3 form (gpt-oss's attention sinks,
// biases and clamped SwiGLU are left out: they do not change the fixes' choreography).
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "syncscope/core/error.hpp"
#include "torch/internal.hpp"

namespace syncscope::kernels::detail {

namespace {

constexpr double kInitStd = 0.02;  // HF initializer_range of Llama/Qwen3

torch::Tensor leaf(torch::Tensor t, const Ctx& ctx) {
  return t.to(ctx.device, ctx.dtype).detach().requires_grad_(true);
}

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

ModelWeights make_weights(const StepOptions& o, int layers, const Ctx& ctx) {
  const ModelShape& m = o.model;
  torch::manual_seed(o.seed);  // seeds the CPU and every CUDA generator
  const auto gen_opts = torch::TensorOptions().device(ctx.device).dtype(torch::kFloat32);
  auto normal = [&](std::vector<std::int64_t> shape) { return leaf(torch::randn(shape, gen_opts) * kInitStd, ctx); };
  auto ones = [&](std::int64_t n) { return leaf(torch::ones({n}, gen_opts), ctx); };
  const std::int64_t H = m.hidden_size, q = static_cast<std::int64_t>(m.num_attention_heads) * m.head_dim,
                     kv = static_cast<std::int64_t>(m.num_key_value_heads) * m.head_dim, I = m.intermediate_size,
                     E = m.num_local_experts, V = m.vocab_size;
  ModelWeights w;
  w.embed = normal({V, H});
  w.named.emplace_back("embed_tokens", w.embed);
  for (int l = 0; l < layers; ++l) {
    LayerWeights lw;
    const std::string p = fmt::format("layers.{}.", l);
    lw.input_norm = ones(H);
    lw.q = normal({q, H});
    lw.k = normal({kv, H});
    lw.v = normal({kv, H});
    lw.o = normal({H, q});
    w.named.emplace_back(p + "input_layernorm", lw.input_norm);
    w.named.emplace_back(p + "q_proj", lw.q);
    w.named.emplace_back(p + "k_proj", lw.k);
    w.named.emplace_back(p + "v_proj", lw.v);
    w.named.emplace_back(p + "o_proj", lw.o);
    if (uses_qk_norm(m)) {
      lw.q_norm = ones(m.head_dim);
      lw.k_norm = ones(m.head_dim);
      w.named.emplace_back(p + "q_norm", lw.q_norm);
      w.named.emplace_back(p + "k_norm", lw.k_norm);
    }
    lw.post_norm = ones(H);
    w.named.emplace_back(p + "post_attention_layernorm", lw.post_norm);
    if (m.is_moe()) {
      lw.router = normal({E, H});
      lw.experts.gate = normal({E, H, I});
      lw.experts.up = normal({E, H, I});
      lw.experts.down = normal({E, I, H});
      w.named.emplace_back(p + "router", lw.router);
      w.named.emplace_back(p + "experts.gate", lw.experts.gate);
      w.named.emplace_back(p + "experts.up", lw.experts.up);
      w.named.emplace_back(p + "experts.down", lw.experts.down);
    } else {
      lw.gate = normal({I, H});
      lw.up = normal({I, H});
      lw.down = normal({H, I});
      w.named.emplace_back(p + "gate_proj", lw.gate);
      w.named.emplace_back(p + "up_proj", lw.up);
      w.named.emplace_back(p + "down_proj", lw.down);
    }
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = ones(H);
  w.lm_head = normal({V, H});
  w.named.emplace_back("norm", w.final_norm);
  w.named.emplace_back("lm_head", w.lm_head);
  return w;
}

Rope rope_tables(const torch::Tensor& position_ids, const ModelShape& m, const Ctx& ctx) {
  // inv_freq = theta^(-2i/d), built on the device: a host-built table would be a pageable
  // H2D copy, which LibTorch follows with a stream synchronization on CUDA.
  const std::int64_t d = m.head_dim;
  const auto f = torch::TensorOptions().device(ctx.device).dtype(torch::kFloat32);
  const torch::Tensor inv_freq = torch::pow(m.rope_theta, torch::arange(0, d, 2, f) / static_cast<double>(d)).reciprocal();
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

torch::Tensor layer_forward(const StepOptions& o, int layer, const LayerWeights& w, const torch::Tensor& x,
                            const PackedBatch& batch, const Rope& rope, PackingMetadata& packing, Ctx& ctx) {
  const ModelShape& m = o.model;
  const std::int64_t T = x.size(0), nh = m.num_attention_heads, nkv = m.num_key_value_heads, d = m.head_dim;
  const double eps = m.rms_norm_eps;
  const torch::Tensor n = rmsnorm(x, w.input_norm, eps, ctx);
  torch::Tensor q = torch::linear(n, w.q).view({T, nh, d});
  torch::Tensor k = torch::linear(n, w.k).view({T, nkv, d});
  torch::Tensor v = torch::linear(n, w.v).view({T, nkv, d});
  if (uses_qk_norm(m)) {
    q = rmsnorm(q, w.q_norm, eps, ctx);
    k = rmsnorm(k, w.k_norm, eps, ctx);
  }
  q = apply_rope(q, rope);
  k = apply_rope(k, rope);
  if (nh != nkv) {  // grouped-query attention: each kv head serves nh/nkv query heads
    k = k.unsqueeze(2).expand({T, nkv, nh / nkv, d}).reshape({T, nh, d});
    v = v.unsqueeze(2).expand({T, nkv, nh / nkv, d}).reshape({T, nh, d});
  }
  const torch::Tensor mask = packing.mask(batch, layer_sliding_window(m, layer), ctx);
  const torch::Tensor attn = attention_core(q.transpose(0, 1).unsqueeze(0), k.transpose(0, 1).unsqueeze(0),
                                            v.transpose(0, 1).unsqueeze(0), mask, static_cast<int>(d));
  const torch::Tensor h = x + torch::linear(attn.squeeze(0).transpose(0, 1).reshape({T, nh * d}), w.o);
  const torch::Tensor n2 = rmsnorm(h, w.post_norm, eps, ctx);
  if (!m.is_moe()) return h + torch::linear(torch::silu(torch::linear(n2, w.gate)) * torch::linear(n2, w.up), w.down);
  // gpt-oss routing: top-k of the router logits, softmax over the k chosen.
  const torch::Tensor logits = torch::linear(n2, w.router);
  auto top = torch::topk(logits, m.num_experts_per_tok, -1);
  const torch::Tensor weights = torch::softmax(std::get<0>(top).to(torch::kFloat32), -1);
  const torch::Tensor out = moe_experts(o.moe, n2, std::get<1>(top), weights, w.experts, ctx);
  return h + out.to(x.scalar_type());
}

torch::Tensor head_loss(const StepOptions& o, const ModelWeights& w, const torch::Tensor& x, const torch::Tensor& labels,
                        const Ctx& ctx) {
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
  auto up = [&](const torch::Tensor& t) { return t.to(ctx.device, t.scalar_type(), /*non_blocking=*/true, /*copy=*/true); };
  b.input_ids = up(host.input_ids);
  b.labels = up(host.labels);
  b.position_ids = up(host.position_ids);
  b.seq_lengths = up(host.seq_lengths);
  return b;
}

}  // namespace syncscope::kernels::detail
