#include "syncscope/kernels/network.hpp"

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
    add(prefix + module, {out, in}, full, nf4_quantized(o_, module) ? ParamStorage::Nf4 : ParamStorage::Dense);
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
      linear(p, "q_proj", q, H, t_.qkv_bias);
      linear(p, "k_proj", kv, H, t_.qkv_bias);
      linear(p, "v_proj", kv, H, t_.qkv_bias);
      linear(p, "o_proj", H, q, t_.o_bias);
      if (arch_ && t_.attention_sinks) add(p + "sinks", {m.num_attention_heads}, full);
      if (oss) {
        // attention_bias: true in gpt-oss's config; one learned sink logit per head.
        for (const char* b : {"q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias"})
          add(p + b, {std::string(b)[0] == 'q' ? q : std::string(b)[0] == 'o' ? H : kv}, full);
        add(p + "sinks", {m.num_attention_heads}, full);
      }
      if (t_.qk_norm) {
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
      if (m.is_moe()) {
        add(p + "router", {E, H}, full);
        add(p + "experts.gate", {E, H, I}, full);
        add(p + "experts.up", {E, H, I}, full);
        add(p + "experts.down", {E, I, H}, full);
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
  for (const auto& p : architecture_parameters(options)) {
    s.base_parameters += p.numel;
    if (!built.count(p.name)) omitted[kind_of(p.name)] += p.numel;
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
