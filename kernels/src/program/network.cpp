#include "syncscope/program/network.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "syncscope/core/error.hpp"

namespace syncscope::program {

namespace {

// Two forms of one list. The step's form (network_parameters): what the reference step and
// the step programs build, adapters included. The architecture's form
// (architecture_parameters): the frozen base as the model's config class defines it
// (model_traits.hpp: biases, sinks, q/k norms, Gemma's extra norms), no adapters: the count
// published with a model.
class Lister {
 public:
  Lister(const StepOptions& o, bool architecture) : o_(o), arch_(architecture), t_(scenario::model_traits(o.model)) {}

  void add(std::string name, std::vector<std::int64_t> shape, bool trainable,
           ParamStorage storage = ParamStorage::Dense) {
    ParamInfo p;
    p.name = std::move(name);
    p.numel = 1;
    for (auto d : shape) p.numel *= d;
    p.shape = std::move(shape);
    p.trainable = trainable;
    p.storage = storage;
    out_.push_back(std::move(p));
  }

  // A linear layer [out, in] of `module`: frozen under lora/qlora (NF4 where quantized), its
  // adapter A [r, in] and B [out, r] when targeted.
  void linear(const std::string& prefix, const std::string& module, std::int64_t out, std::int64_t in,
              bool bias = false) {
    const bool full = !o_.training.adapters();
    // The architecture's form stores every nn.Linear of a layer in NF4 under qlora, as
    // bitsandbytes converts them all (the LM head stays: Unsloth and PEFT skip it).
    const bool nf4 = arch_ ? o_.training.mode == "qlora" : nf4_quantized(o_, module);
    add(prefix + module, {out, in}, full, nf4 ? ParamStorage::Nf4 : ParamStorage::Dense);
    if (arch_) {
      if (bias) add(prefix + module + ".bias", {out}, full);
      return;
    }
    if (lora_adapted(o_, module)) {
      const std::int64_t r = o_.training.lora_rank;
      add(prefix + module + ".lora_A", {r, in}, true);
      add(prefix + module + ".lora_B", {out, r}, true);
    }
  }

  // Multi-head latent attention (modeling_deepseek_v2.py): q directly or through a rank
  // q_lora_rank bottleneck with its RMSNorm; k and v from one shared latent
  // (kv_a_proj_with_mqa, kv_lora_rank plus the rotary key) normed and expanded per head by
  // kv_b_proj; attention_bias on q_a, kv_a and o.
  void mla(const std::string& p) {
    const scenario::ModelShape& m = o_.model;
    const bool full = !o_.training.adapters();
    const std::int64_t H = m.hidden_size, n = m.num_attention_heads, qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      linear(p, "q_a_proj", m.q_lora_rank, H, t_.o_bias);
      add(p + "q_a_layernorm", {m.q_lora_rank}, full);
      linear(p, "q_b_proj", n * qk, m.q_lora_rank);
    } else {
      linear(p, "q_proj", n * qk, H);
    }
    linear(p, "kv_a_proj_with_mqa", m.kv_lora_rank + m.qk_rope_head_dim, H, t_.o_bias);
    add(p + "kv_a_layernorm", {m.kv_lora_rank}, full);
    linear(p, "kv_b_proj", n * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank);
    linear(p, "o_proj", H, n * m.v_head_dim, t_.o_bias);
  }

  std::vector<ParamInfo> build() {
    const scenario::ModelShape& m = o_.model;
    const bool full = !o_.training.adapters();
    // gpt-oss extras only where they are built: the step programs with gpt_oss_unsloth_form.
    const bool oss = !arch_ && is_gpt_oss(m) && o_.gpt_oss_unsloth_form;
    const std::int64_t H = m.hidden_size, q = static_cast<std::int64_t>(m.num_attention_heads) * m.head_dim,
                       kv = static_cast<std::int64_t>(m.num_key_value_heads) * m.head_dim, I = m.intermediate_size,
                       E = m.num_local_experts, V = m.vocab_size;
    add("embed_tokens", {V, H}, full);
    for (int l = 0; l < effective_layers(o_); ++l) {
      const std::string p = fmt::format("layers.{}.", l);
      add(p + "input_layernorm", {H}, full);
      if (arch_ && m.is_mla()) {
        mla(p);
      } else {
        linear(p, "q_proj", q, H, t_.qkv_bias);
        linear(p, "k_proj", kv, H, t_.qkv_bias);
        linear(p, "v_proj", kv, H, t_.qkv_bias);
        linear(p, "o_proj", H, q, t_.o_bias);
      }
      if (arch_ && t_.attention_sinks) add(p + "sinks", {m.num_attention_heads}, full);
      if (oss) {
        // attention_bias: true in gpt-oss's config; one learned sink logit per head.
        for (const char* b : {"q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias"})
          add(p + b, {std::string(b)[0] == 'q' ? q : std::string(b)[0] == 'o' ? H : kv}, full);
        add(p + "sinks", {m.num_attention_heads}, full);
      }
      if (t_.qk_norm && arch_ && t_.qk_norm_full_width) {
        add(p + "q_norm", {q}, full);  // OLMoE: one norm over every head's q, one over k
        add(p + "k_norm", {kv}, full);
      } else if (t_.qk_norm) {
        add(p + "q_norm", {m.head_dim}, full);
        add(p + "k_norm", {m.head_dim}, full);
      }
      add(p + "post_attention_layernorm", {H}, full);
      if (arch_ && t_.norms_per_layer >= 4) {
        // Gemma 2/3 (modeling_gemma2.py): the attention output and the MLP's input and
        // output are normed too, each a weight of H.
        add(p + "pre_feedforward_layernorm", {H}, full);
        add(p + "post_feedforward_layernorm", {H}, full);
      }
      if (arch_ && m.is_moe() && !m.moe_layer(l)) {
        // A dense layer of an MoE model (DeepSeek's first_k_dense_replace, Llama 4's
        // interleaving): a plain MLP of the dense width.
        const std::int64_t D = m.dense_intermediate_size > 0 ? m.dense_intermediate_size : I;
        linear(p, "gate_proj", D, H, t_.mlp_bias);
        linear(p, "up_proj", D, H, t_.mlp_bias);
        linear(p, "down_proj", H, D, t_.mlp_bias);
      } else if (m.is_moe()) {
        if (arch_ && m.shared_expert_intermediate_size > 0) {
          // Shared experts (one MLP of their combined width) run on every token.
          const std::int64_t S = m.shared_expert_intermediate_size;
          linear(p, "shared_experts.gate_proj", S, H);
          linear(p, "shared_experts.up_proj", S, H);
          linear(p, "shared_experts.down_proj", H, S);
          if (m.shared_expert_gate) add(p + "shared_expert_gate", {1, H}, full);
        }
        add(p + "router", {E, H}, full);
        // Experts held as one nn.Linear each (Mixtral, Qwen-MoE, OLMoE, DeepSeek in
        // transformers 4.x) are quantized by bitsandbytes; fused 3-D tensors (gpt-oss,
        // Llama 4) are not (experts_quantized()).
        const ParamStorage es =
            arch_ && o_.training.mode == "qlora" && experts_quantized(m) ? ParamStorage::Nf4 : ParamStorage::Dense;
        add(p + "experts.gate", {E, H, I}, full, es);
        add(p + "experts.up", {E, H, I}, full, es);
        add(p + "experts.down", {E, I, H}, full, es);
        if (oss || (arch_ && t_.moe_biases)) {
          add(p + "router.bias", {E}, full);
          add(p + "experts.gate_up_bias", {E, 2 * I}, full);
          add(p + "experts.down_bias", {E, H}, full);
        }
      } else {
        linear(p, "gate_proj", I, H, t_.mlp_bias);
        linear(p, "up_proj", I, H, t_.mlp_bias);
        linear(p, "down_proj", H, I, t_.mlp_bias);
      }
    }
    add("norm", {H}, full);
    if (!m.tie_word_embeddings) add("lm_head", {V, H}, full);
    return std::move(out_);
  }

 private:
  const StepOptions& o_;
  const bool arch_;
  const scenario::ModelTraits t_;
  std::vector<ParamInfo> out_;
};

// "layers.3.q_proj.bias" -> "q_proj.bias": what a parameter is, whatever its layer.
std::string kind_of(const std::string& name) {
  if (name.rfind("layers.", 0) != 0) return name;
  const auto dot = name.find('.', 7);
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

}  // namespace

bool experts_quantized(const scenario::ModelShape& m) {
  const std::string f = scenario::model_traits(m).family;
  return m.is_moe() && f != "gpt_oss" && f != "llama4";
}

std::vector<ParamInfo> network_parameters(const StepOptions& options) {
  validate(options);
  return Lister(options, false).build();
}

std::vector<ParamInfo> architecture_parameters(const StepOptions& options) {
  validate(options);
  return Lister(options, true).build();
}

NetworkSummary network_summary(const StepOptions& options) {
  NetworkSummary s;
  std::set<std::string> built;
  for (const auto& p : network_parameters(options)) {
    s.parameters += p.numel;
    if (p.trainable) s.trainable_parameters += p.numel;
    built.insert(p.name);
  }
  std::map<std::string, std::int64_t> omitted;  // kind -> values, over every layer
  // The step program computes an MoE model's shared experts and dense layers and MLA's
  // projections (step_layers.cpp) though the step's parameter list keeps the routed form
  // (the LibTorch reference builds that list): they are not omitted from the step's time.
  const scenario::ModelShape& m = options.model;
  auto computed = [&](const std::string& kind) {
    if (kind.rfind("shared_expert", 0) == 0) return true;
    if (m.is_moe() && (kind == "gate_proj" || kind == "up_proj" || kind == "down_proj")) return true;
    return m.is_mla() &&
           (kind.rfind("q_a_", 0) == 0 || kind == "q_b_proj" || kind.rfind("kv_a_", 0) == 0 || kind == "kv_b_proj");
  };
  for (const auto& p : architecture_parameters(options)) {
    s.base_parameters += p.numel;
    if (!built.count(p.name) && !computed(kind_of(p.name))) omitted[kind_of(p.name)] += p.numel;
  }
  for (const auto& [kind, n] : omitted) {
    s.step_omits.push_back(kind);
    s.omitted_parameters += n;
  }
  s.tied_embeddings = options.model.tie_word_embeddings;
  s.training = options.training.mode;
  return s;
}

double nf4_storage_bytes(std::int64_t numel, bool double_quant) {
  SYNCSCOPE_INPUT_ERROR_IF(numel < 0, "nf4_storage_bytes: negative element count");
  const double n = static_cast<double>(numel);
  const double blocks = std::ceil(n / 64.0);
  const double codes = std::ceil(n / 2.0);
  if (!double_quant) return codes + 4.0 * blocks;
  return codes + blocks + 4.0 * std::ceil(blocks / 256.0) + 4.0;
}

}  // namespace syncscope::program
