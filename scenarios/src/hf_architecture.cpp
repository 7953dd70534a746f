// The architecture a Hugging Face config states beyond a dense decoder (hf_keys.hpp). Every
// default below is its config class's in huggingface/transformers (src/transformers/models/
// <family>/configuration_<family>.py); the layouts are those of the modeling files.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "hf_keys.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::scenario::detail {

namespace {

std::string dump(const nlohmann::json& v) { return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string grouped(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

bool is_deepseek(const std::string& family) { return family == "deepseek_v2" || family == "deepseek_v3"; }

// The architecture defaults of each family's config class (transformers,
// src/transformers/models/<family>/configuration_<family>.py), for the keys a config.json
// may leave out; -1 where the class has no such key.
//  DeepseekV2Config (commit 008e574): kv_lora_rank=512, q_lora_rank=1536,
//    qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, n_shared_experts=2,
//    first_k_dense_replace=0, moe_intermediate_size=1407.
//  DeepseekV3Config (commit 001f85b): the same MLA ranks, n_shared_experts=1,
//    first_k_dense_replace=3, moe_intermediate_size=2048.
//  Qwen2MoeConfig: moe_intermediate_size=1408, shared_expert_intermediate_size=5632,
//    decoder_sparse_step=1. Qwen3MoeConfig: moe_intermediate_size=768, decoder_sparse_step=1.
//  Llama4TextConfig: intermediate_size_mlp=16384, interleave_moe_layer_step=1,
//    attention_chunk_size=8192.
struct ClassDefaults {
  const char* family;
  const char* config_class;  // "DeepseekV2Config (configuration_deepseek_v2.py)"
  int n_shared_experts, first_k_dense_replace, moe_intermediate_size;
  int shared_expert_intermediate_size, sparse_step, intermediate_size_mlp, attention_chunk_size;
};
constexpr ClassDefaults kClassDefaults[] = {
    {"deepseek_v2", "DeepseekV2Config (transformers, deepseek_v2/configuration_deepseek_v2.py)", 2, 0, 1407, -1, -1, -1,
     -1},
    {"deepseek_v3", "DeepseekV3Config (transformers, deepseek_v3/configuration_deepseek_v3.py)", 1, 3, 2048, -1, -1, -1,
     -1},
    {"qwen2_moe", "Qwen2MoeConfig (transformers, qwen2_moe/configuration_qwen2_moe.py)", -1, -1, 1408, 5632, 1, -1, -1},
    {"qwen3_moe", "Qwen3MoeConfig (transformers, qwen3_moe/configuration_qwen3_moe.py)", -1, -1, 768, -1, 1, -1, -1},
    {"llama4", "Llama4TextConfig (transformers, llama4/configuration_llama4.py)", -1, -1, -1, -1, 1, 16384, 8192},
};

ClassDefaults class_defaults(const std::string& family) {
  for (const auto& d : kClassDefaults)
    if (family == d.family) return d;
  return {"", "", -1, -1, -1, -1, -1, -1, -1};
}

// A key the config leaves out or sets to null, read as the class's default `value`; the key
// is recorded (TraitInputs::class_defaults) so an unknown model_type's warning names it.
int or_default(const HfKeys& k, TraitInputs& in, const char* key, int value) {
  if (auto v = k.integer(key)) return *v;
  in.class_defaults.push_back(fmt::format("{} {}", key, value));
  return value;
}

}  // namespace

// DeepseekV2Config / DeepseekV3Config define routed experts by default (n_routed_experts 64 /
// 256: the classes' __init__ defaults, transformers configuration_deepseek_v2.py / _v3.py),
// and modeling_deepseek_v2.py / _v3.py build the MoE block on every layer from
// first_k_dense_replace on whatever else the config says: a config that leaves the key out is
// an MoE model, not a dense one. num_experts_per_tok: V3's default 8; V2's None, with which
// its MoE block cannot route (torch.topk(..., k=None)): refused naming the key and the fix. An
// explicit null n_routed_experts keeps the remote code's meaning, "dense" (the key given).
std::vector<std::string> read_routed_experts(const HfKeys& k, ModelShape& m, const std::string& family) {
  std::vector<std::string> defaulted;
  const bool deepseek = is_deepseek(family), v3 = family == "deepseek_v3";
  if (deepseek && m.num_local_experts == 0 && !k.given("n_routed_experts") && !k.given("num_local_experts") &&
      !k.given("num_experts")) {
    m.num_local_experts = v3 ? 256 : 64;
    defaulted.push_back(fmt::format("n_routed_experts {}", m.num_local_experts));
  }
  if (m.num_local_experts == 0) {
    m.num_experts_per_tok = 0;
    return defaulted;
  }
  if (auto v = k.integer("num_experts_per_tok")) {
    m.num_experts_per_tok = *v;
    return defaulted;
  }
  if (v3 && !k.given("num_experts_per_tok")) {
    m.num_experts_per_tok = 8;
    defaulted.emplace_back("num_experts_per_tok 8");
    return defaulted;
  }
  if (deepseek)
    throw InputError(fmt::format(
        "{}: num_experts_per_tok: {}, and its default in {} is None, with which the MoE block cannot route "
        "(modeling_{}.py: torch.topk(..., k=None)); the model has {} routed experts ({}); add \"num_experts_per_tok\": "
        "N, the routed experts each token uses (6 in DeepSeek-V2-Lite's and DeepSeek-V2's published configs)",
        k.where("num_experts_per_tok"), k.given("num_experts_per_tok") ? "null" : "missing",
        class_defaults(family).config_class, family, m.num_local_experts,
        defaulted.empty() ? "n_routed_experts, as the config states" : "n_routed_experts left to the class's default"));
  throw InputError(fmt::format(
      "{}: missing required key \"num_experts_per_tok\" (a positive integer); is this a decoder model's config.json?",
      k.file));
}

std::string class_defaults_warning(const std::vector<std::string>& keys, const std::string& family) {
  if (keys.empty() || family.empty()) return "";  // an unknown model_type's are named in ModelTraits::assumed
  const ClassDefaults d = class_defaults(family);
  std::string list;
  for (const auto& key : keys) list += (list.empty() ? "" : ", ") + key;
  return fmt::format("the config leaves {} to the defaults of {}: read as {}",
                     keys.size() == 1 ? "one architecture key" : std::to_string(keys.size()) + " architecture keys",
                     *d.config_class ? d.config_class : family + "'s config class", list);
}

namespace {

// Multi-head latent attention (modeling_deepseek_v2.py / _v3.py): q through q_a_proj
// [q_lora_rank, H] and q_b_proj (or q_proj when q_lora_rank is null), k and v from one
// latent kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, H] and kv_b_proj.
void read_mla(const HfKeys& k, ModelShape& m, TraitInputs& in, const std::string& family) {
  const bool deepseek = is_deepseek(family);
  if (!deepseek && !k.has("kv_lora_rank")) return;
  // DeepseekV2Config/DeepseekV3Config (kClassDefaults): kv_lora_rank=512, q_lora_rank=1536,
  // qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128.
  m.kv_lora_rank = or_default(k, in, "kv_lora_rank", 512);
  if (k.given("q_lora_rank")) m.q_lora_rank = k.integer("q_lora_rank").value_or(0);  // null: q_proj direct
  else m.q_lora_rank = or_default(k, in, "q_lora_rank", 1536);
  m.qk_rope_head_dim = or_default(k, in, "qk_rope_head_dim", 64);
  m.qk_nope_head_dim = or_default(k, in, "qk_nope_head_dim", 128);
  m.v_head_dim = or_default(k, in, "v_head_dim", 128);
  auto rank = [&](const char* key, int v, int lo) {
    if (v < lo || v > m.hidden_size)
      fail(k.where, key,
           fmt::format("an integer in {}..hidden_size ({}): a latent wider than the hidden state compresses nothing",
                       lo, m.hidden_size),
           std::to_string(v));
  };
  rank("kv_lora_rank", m.kv_lora_rank, 1);
  rank("q_lora_rank", m.q_lora_rank, 0);
  for (const auto& [key, v] : {std::pair<const char*, int>{"qk_rope_head_dim", m.qk_rope_head_dim},
                               {"qk_nope_head_dim", m.qk_nope_head_dim},
                               {"v_head_dim", m.v_head_dim}})
    if (!bounds::kHeadDim.contains(v)) fail(k.where, key, bounds::describe_int(bounds::kHeadDim), std::to_string(v));
  if (m.qk_rope_head_dim % 2 != 0)
    fail(k.where, "qk_rope_head_dim", "an even integer (RoPE rotates pairs)", std::to_string(m.qk_rope_head_dim));
  // The attention's q.k width; v has its own (the step times heads of head_dim).
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
}

// Shared experts beside the routed ones, and which layers are dense.
void read_moe(const HfKeys& k, ModelShape& m, TraitInputs& in, const std::string& family) {
  const int L = m.num_hidden_layers;
  const ClassDefaults d = class_defaults(family);
  // The routed experts' width, when the config leaves it to the class (hf_config.cpp read
  // intermediate_size, the dense width, in its place).
  if (m.is_moe() && d.moe_intermediate_size > 0 && !k.given("moe_intermediate_size"))
    m.intermediate_size = or_default(k, in, "moe_intermediate_size", d.moe_intermediate_size);
  if (is_deepseek(family) || k.given("n_shared_experts")) {
    // A null says none; absent from an MoE config, the class's count (V2 2, V3 1).
    const int n = k.given("n_shared_experts") || !m.is_moe() || d.n_shared_experts < 0
                      ? k.integer("n_shared_experts").value_or(0)
                      : or_default(k, in, "n_shared_experts", d.n_shared_experts);
    if (n < 0) fail(k.where, "n_shared_experts", "a non-negative integer", std::to_string(n));
    if (n > 0) {
      const int each = k.given("moe_intermediate_size") ? k.integer("moe_intermediate_size").value_or(0)
                       : m.is_moe()                     ? m.intermediate_size
                                                        : 0;
      if (each <= 0)
        fail(k.where, "n_shared_experts",
             fmt::format("shared experts with a size: {} shared expert(s) need a positive moe_intermediate_size", n),
             k.has("moe_intermediate_size") ? std::to_string(each) : "no moe_intermediate_size");
      m.num_shared_experts = n;
      m.shared_expert_intermediate_size = n * each;
    }
  }
  if (family == "qwen2_moe" || k.given("shared_expert_intermediate_size")) {
    // Qwen2MoeConfig: shared_expert_intermediate_size=5632; 0 builds no shared expert.
    const int s = family == "qwen2_moe" && !k.given("shared_expert_intermediate_size")
                      ? or_default(k, in, "shared_expert_intermediate_size", d.shared_expert_intermediate_size)
                      : k.integer("shared_expert_intermediate_size").value_or(0);
    if (s < 0) fail(k.where, "shared_expert_intermediate_size", "a non-negative integer", std::to_string(s));
    if (s > 0) {
      m.num_shared_experts = 1;
      m.shared_expert_intermediate_size = s;
      m.shared_expert_gate = family == "qwen2_moe";  // modeling_qwen2_moe.py: shared_expert_gate
    }
  }
  if (family == "llama4" && m.is_moe()) {
    // modeling_llama4.py: Llama4TextMoe always adds a shared expert of intermediate_size,
    // and a dense layer's MLP is intermediate_size_mlp wide (default 16384).
    m.num_shared_experts = 1;
    m.shared_expert_intermediate_size = m.intermediate_size;
    m.dense_intermediate_size = or_default(k, in, "intermediate_size_mlp", d.intermediate_size_mlp);
  }
  if (m.shared_expert_intermediate_size > bounds::kIntermediateSize.hi)
    fail(k.where, m.shared_expert_gate ? "shared_expert_intermediate_size" : "n_shared_experts",
         bounds::describe_int(bounds::kIntermediateSize), std::to_string(m.shared_expert_intermediate_size));
  if (!m.is_moe()) return;

  // Dense layers: DeepSeek's first_k_dense_replace (V3 default 3, V2 0) and moe_layer_freq
  // (layer i routed when i >= k and i % freq == 0); Llama 4's interleave_moe_layer_step and
  // Qwen-MoE's decoder_sparse_step (routed when (i + 1) % step == 0); mlp_only_layers.
  in.first_k_dense_replace = d.first_k_dense_replace >= 0
                                 ? or_default(k, in, "first_k_dense_replace", d.first_k_dense_replace)
                                 : k.integer("first_k_dense_replace").value_or(0);
  if (in.first_k_dense_replace < 0 || in.first_k_dense_replace >= L)
    fail(k.where, "first_k_dense_replace",
         fmt::format("an integer in 0..{} (below num_hidden_layers, {}: with every layer dense the model has no "
                     "experts)",
                     L - 1, L),
         std::to_string(in.first_k_dense_replace));
  const char* step_key = k.given("moe_layer_freq")                                    ? "moe_layer_freq"
                         : k.given("interleave_moe_layer_step") || family == "llama4" ? "interleave_moe_layer_step"
                                                                                      : "decoder_sparse_step";
  const bool class_step = d.sparse_step > 0 && std::string(step_key) != "moe_layer_freq";
  in.moe_step = class_step ? or_default(k, in, step_key, d.sparse_step) : k.integer(step_key).value_or(1);
  in.moe_step_from_zero = std::string(step_key) == "moe_layer_freq";
  if (in.moe_step < 1 || in.moe_step > L)
    fail(k.where, step_key, fmt::format("an integer in 1..{} (num_hidden_layers)", L), std::to_string(in.moe_step));
  if (auto only = k.int_list("mlp_only_layers")) in.mlp_only_layers = *only;
  if (auto listed = k.int_list("moe_layers"); listed && !listed->empty()) {
    // Llama4TextConfig's explicit moe_layers: every other layer dense.
    in.moe_step = 1;
    for (int i = 0; i < L; ++i)
      if (std::find(listed->begin(), listed->end(), i) == listed->end()) in.mlp_only_layers.push_back(i);
  }
  for (int i : in.mlp_only_layers)
    if (i < 0 || i >= L)
      fail(k.where, k.given("moe_layers") ? "moe_layers" : "mlp_only_layers",
           fmt::format("layer indices in 0..{}", L - 1), std::to_string(i));
  bool any_dense = in.first_k_dense_replace > 0 || in.moe_step > 1 || !in.mlp_only_layers.empty();
  bool any_moe = false;
  for (int i = 0; i < L; ++i) {
    const bool routed = i >= in.first_k_dense_replace &&
                        (in.moe_step_from_zero ? i % in.moe_step == 0 : (i + 1) % in.moe_step == 0) &&
                        std::find(in.mlp_only_layers.begin(), in.mlp_only_layers.end(), i) == in.mlp_only_layers.end();
    any_moe |= routed;
  }
  if (!any_moe)
    fail(k.where, step_key, "a layout with at least one MoE layer (num_local_experts > 0)",
         "no layer routed to experts");
  if (any_dense && m.dense_intermediate_size == 0) {
    // The dense layers' width is intermediate_size when the experts have their own.
    const auto dense = k.integer("intermediate_size");
    if (!dense || *dense <= 0)
      fail(k.where, "intermediate_size", "a positive integer: the MLP width of the model's dense layers",
           dense ? std::to_string(*dense) : "nothing");
    m.dense_intermediate_size = *dense;
  }
  if (!bounds::kIntermediateSize.contains(m.dense_intermediate_size) && m.dense_intermediate_size != 0)
    fail(k.where, "intermediate_size", bounds::describe_int(bounds::kIntermediateSize),
         std::to_string(m.dense_intermediate_size));
}

// The router the step models is a softmax over the top-k of all experts' logits
// (step_layers.cpp, StepBuilder::moe). Group-limited routing (n_group, topk_group), a
// sigmoid score with DeepSeek-V3's score-correction bias (topk_method "noaux_tc",
// scoring_func "sigmoid") and a routed scaling add kernels per MoE layer that the step does
// not run: named, with their values. DeepseekV3Config defaults n_group=8, topk_group=4 and
// modeling_deepseek_v3.py always routes that way (sigmoid, correction bias, group top-k).
void read_routing(const HfKeys& k, ModelShape& m, const std::string& family) {
  if (!m.is_moe()) return;
  const bool v3 = family == "deepseek_v3";
  std::vector<std::string> keys;
  const int groups = k.integer("n_group").value_or(v3 ? 8 : 1);
  if (groups > 1) {
    keys.push_back(fmt::format("n_group {}", groups));
    keys.push_back(fmt::format("topk_group {}", k.integer("topk_group").value_or(v3 ? 4 : 1)));
  }
  auto text = [&](const char* key, const char* fallback) {
    return k.has(key) && k.j[key].is_string() ? k.j[key].get<std::string>() : std::string(fallback);
  };
  if (const std::string method = text("topk_method", v3 ? "noaux_tc" : "greedy"); method != "greedy")
    keys.push_back(fmt::format("topk_method \"{}\"", method));
  if (const std::string score = text("scoring_func", v3 ? "sigmoid" : "softmax"); score != "softmax")
    keys.push_back(fmt::format("scoring_func \"{}\"", score));
  if (k.has("routed_scaling_factor") && k.j["routed_scaling_factor"].is_number() &&
      k.j["routed_scaling_factor"].get<double>() != 1.0)
    keys.push_back("routed_scaling_factor " + dump(k.j["routed_scaling_factor"]));
  if (k.has("expert_layer_period") || k.has("expert_layer_offset"))
    keys.push_back("expert_layer_period/expert_layer_offset (not read: every layer is routed here)");
  if (keys.empty()) return;
  std::string list;
  for (const auto& key : keys) list += (list.empty() ? "" : ", ") + key;
  m.traits.unmodelled.push_back(
      fmt::format("routing: {}: the step routes by a softmax over the top-{} of all {} experts' logits; the "
                  "router's group scores and top-k, sigmoid, score correction and scaling kernels are not in the "
                  "step times (a few small kernels per MoE layer)",
                  list, m.num_experts_per_tok, m.num_local_experts));
}

// Llama 4's chunked attention and the keys that change the cost but are not modelled.
void read_attention_extras(const HfKeys& k, ModelShape& m, TraitInputs& in, const std::string& family) {
  // Llama4TextConfig: attention_chunk_size=8192 when absent; a null is no chunking.
  const ClassDefaults d = class_defaults(family);
  in.attention_chunk_size = d.attention_chunk_size > 0 && !k.given("attention_chunk_size")
                                ? or_default(k, in, "attention_chunk_size", d.attention_chunk_size)
                                : k.integer("attention_chunk_size").value_or(0);
  if (in.attention_chunk_size < 0 || in.attention_chunk_size > bounds::kTokens.hi)
    fail(k.where, "attention_chunk_size", "a positive integer or null", std::to_string(in.attention_chunk_size));
  if (auto nr = k.int_list("no_rope_layers"); nr && !nr->empty()) {
    if (nr->size() != static_cast<std::size_t>(m.num_hidden_layers))
      fail(k.where, "no_rope_layers", fmt::format("a list of {} entries (num_hidden_layers)", m.num_hidden_layers),
           fmt::format("{} entries", nr->size()));
    std::vector<bool> rope;
    for (int v : *nr) rope.push_back(v != 0);
    in.no_rope_layers = std::move(rope);
  }
  in.no_rope_layer_interval = k.integer("no_rope_layer_interval");
  if (in.no_rope_layer_interval && *in.no_rope_layer_interval < 1)
    fail(k.where, "no_rope_layer_interval", "a positive integer", std::to_string(*in.no_rope_layer_interval));
  in.use_qk_norm = k.boolean("use_qk_norm");
  if (const int mtp = k.integer("num_nextn_predict_layers").value_or(0); mtp > 0)
    m.traits.unmodelled.push_back(
        fmt::format("num_nextn_predict_layers: {} multi-token-prediction layer(s) are not counted: Hugging Face's {} "
                    "ForCausalLM does not build them, so fine-tuning does not train them",
                    mtp, family));
  if (k.has("clip_qkv"))
    m.traits.unmodelled.push_back(
        fmt::format("clip_qkv: the clamp of q, k and v to +-{} is not in the step (three elementwise kernels per "
                    "layer)",
                    dump(k.j["clip_qkv"])));
  if (family == "llama4" && k.has("attn_temperature_tuning") && k.j["attn_temperature_tuning"].is_boolean() &&
      k.j["attn_temperature_tuning"].get<bool>())
    m.traits.unmodelled.push_back(
        "attn_temperature_tuning: Llama 4's per-position query scaling on its NoPE layers is not in the step (one "
        "elementwise kernel per such layer)");
}

// SigLIP's vision transformer (modeling_siglip.py, SiglipVisionTransformer): a patch
// convolution with bias, one position embedding per patch, per layer two LayerNorms
// (weight and bias), q/k/v/o with biases and a two-layer MLP with biases, a final
// LayerNorm, and (vision_use_head, default true) the attention-pooling head. Defaults are
// SiglipVisionConfig's: hidden 768, intermediate 3072, 12 layers, 3 channels, 224 px, 16 px
// patches.
std::int64_t siglip_parameters(const nlohmann::json& v) {
  auto get = [&](const char* key, std::int64_t fallback) -> std::int64_t {
    if (!v.contains(key) || !v[key].is_number_integer()) return fallback;
    return std::clamp<std::int64_t>(v[key].get<std::int64_t>(), 1, 1 << 20);
  };
  const std::int64_t H = get("hidden_size", 768), I = get("intermediate_size", 3072), L = get("num_hidden_layers", 12),
                     C = get("num_channels", 3), image = get("image_size", 224), patch = get("patch_size", 16);
  const std::int64_t patches = (image / patch) * (image / patch);
  const std::int64_t layer = 2 * (2 * H) + 4 * (H * H + H) + (H * I + I) + (I * H + H);
  std::int64_t n = (C * patch * patch * H + H) + patches * H + L * layer + 2 * H;
  const bool head =
      !v.contains("vision_use_head") || !v["vision_use_head"].is_boolean() || v["vision_use_head"].get<bool>();
  if (head) n += H + (3 * H * H + 3 * H) + (H * H + H) + 2 * H + (H * I + I) + (I * H + H);
  return n;
}

// Llama 4's vision model (modeling_llama4.py, Llama4VisionModel): the unfold patch
// embedding (Linear without bias), a class embedding, one position embedding per patch and
// the class token, LayerNorms before and after the encoder, per layer two LayerNorms, q/k/v/o
// with biases and a two-layer MLP with biases (Llama4VisionMLP), then the pixel-shuffle
// adapter (Llama4VisionMLP2: fc1 [intermediate_size -> projector_input_dim] and fc2
// [projector_output_dim -> projector_output_dim], no biases). Defaults are
// Llama4VisionConfig's: hidden 768, intermediate 5632, 34 layers, 3 channels, 448 px, 14 px
// patches, projector 4096 -> 4096.
std::int64_t llama4_vision_parameters(const nlohmann::json& v) {
  auto get = [&](const char* key, std::int64_t fallback) -> std::int64_t {
    if (!v.contains(key) || !v[key].is_number_integer()) return fallback;
    return std::clamp<std::int64_t>(v[key].get<std::int64_t>(), 1, 1 << 20);
  };
  const std::int64_t H = get("hidden_size", 768), I = get("intermediate_size", 5632), L = get("num_hidden_layers", 34),
                     C = get("num_channels", 3), image = get("image_size", 448), patch = get("patch_size", 14),
                     pin = get("projector_input_dim", 4096), pout = get("projector_output_dim", 4096);
  const std::int64_t patches = (image / patch) * (image / patch) + 1;  // and the class token
  const std::int64_t layer = 2 * (2 * H) + 4 * (H * H + H) + (H * I + I) + (I * H + H);
  return C * patch * patch * H + H + patches * H + 2 * (2 * H) + L * layer + I * pin + pout * pout;
}

}  // namespace

std::optional<int> HfKeys::integer(const char* key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<long long>() > std::numeric_limits<int>::max() ||
      v.get<long long>() < std::numeric_limits<int>::min())
    fail(where, key, "an integer", dump(v));
  return v.get<int>();
}

std::optional<bool> HfKeys::boolean(const char* key) const {
  if (!has(key)) return std::nullopt;
  if (!j[key].is_boolean()) fail(where, key, "true or false", dump(j[key]));
  return j[key].get<bool>();
}

std::optional<std::vector<int>> HfKeys::int_list(const char* key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = j[key];
  if (!v.is_array() || v.size() > static_cast<std::size_t>(bounds::kLayers.hi))
    fail(where, key, fmt::format("a list of at most {} integers", bounds::kLayers.hi), dump(v));
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<long long>() > std::numeric_limits<int>::max() ||
        v[i].get<long long>() < std::numeric_limits<int>::min())
      fail(where, fmt::format("{}[{}]", key, i), "an integer", dump(v[i]));
    out.push_back(v[i].get<int>());
  }
  return out;
}

std::vector<std::string> apply_text_defaults(nlohmann::json& text, const std::string& family) {
  if (family != "gemma3") return {};
  // Gemma3TextConfig.__init__ (gemma3/configuration_gemma3.py, transformers commit
  // 008f5c8): vocab_size=262_208, hidden_size=2304, intermediate_size=9216,
  // num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4, head_dim=256.
  static const std::pair<const char*, int> kDefaults[] = {
      {"vocab_size", 262208},     {"hidden_size", 2304},      {"intermediate_size", 9216}, {"num_hidden_layers", 26},
      {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"head_dim", 256},
  };
  std::vector<std::string> filled;
  for (const auto& [key, value] : kDefaults)
    if (!text.contains(key) || text[key].is_null()) {
      text[key] = value;
      filled.push_back(fmt::format("{} {}", key, value));
    }
  if (filled.empty()) return {};
  std::string list;
  for (const auto& f : filled) list += (list.empty() ? "" : ", ") + f;
  return {fmt::format("text_config leaves {} to Gemma3TextConfig's defaults (configuration_gemma3.py): read as {}",
                      filled.size() == 1 ? "one key" : std::to_string(filled.size()) + " keys", list)};
}

void read_architecture(const HfKeys& keys, ModelShape& m, TraitInputs& in, const std::string& family) {
  read_mla(keys, m, in, family);
  in.mla = m.is_mla();
  read_moe(keys, m, in, family);
  read_routing(keys, m, family);
  read_attention_extras(keys, m, in, family);
}

void refuse_unmodellable(const nlohmann::json& j, const std::string& file, const std::string& model_type,
                         const Locator& where) {
  // Keys of state-space and hybrid configs (transformers' JambaConfig, MambaConfig,
  // Mamba2Config, BambaConfig, Zamba2Config, NemotronHConfig, FalconH1Config,
  // RecurrentGemmaConfig, Qwen3NextConfig): a mixer that is not softmax attention, or which
  // layers are attention and which are not.
  static const char* const kLayoutKeys[] = {"layers_block_type",       "attn_layer_period", "attn_layer_offset",
                                            "hybrid_override_pattern", "block_types",       "full_attention_interval",
                                            "hybrid_layer_ids",        "attn_layer_indices"};
  static const char* const kMixerKeys[] = {"state_size",
                                           "conv_kernel",
                                           "time_step_rank",
                                           "lru_width",
                                           "d_state",
                                           "d_conv",
                                           "linear_num_key_heads",
                                           "linear_num_value_heads",
                                           "linear_conv_kernel_dim"};
  static const char* const kTypes[] = {"mamba",           "mamba2",     "falcon_mamba",     "jamba",     "zamba",
                                       "zamba2",          "bamba",      "nemotron_h",       "falcon_h1", "rwkv",
                                       "recurrent_gemma", "qwen3_next", "granitemoehybrid", "lfm2"};
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    if (value.is_null()) continue;
    bool hybrid = key.find("mamba") != std::string::npos || key.rfind("ssm", 0) == 0;
    for (const char* h : kLayoutKeys) hybrid |= key == h;
    for (const char* h : kMixerKeys) hybrid |= key == h;
    if (hybrid) keys.push_back(key);
  }
  bool known_type = false;
  for (const char* t : kTypes) known_type |= model_type == t;
  if (keys.empty() && !known_type) return;
  // Jamba's MoE layout keys go with the rest: they are read by no family here either.
  for (const char* extra : {"expert_layer_period", "expert_layer_offset"})
    if (j.contains(extra) && !keys.empty()) keys.emplace_back(extra);
  std::string list;
  for (std::size_t i = 0; i < keys.size() && i < 16; ++i) list += (i == 0 ? "" : ", ") + keys[i].substr(0, 64);
  if (keys.size() > 16) list += fmt::format(" and {} more", keys.size() - 16);
  const std::string at = keys.empty() ? file : where(keys.front());
  const std::string type = model_type.size() > 64 ? model_type.substr(0, 64) + "..." : model_type;
  throw InputError(fmt::format(
      "{}: {} describes state-space (Mamba/SSM), linear-attention or hybrid layers{}: syncscope cannot model this "
      "family: its step program builds softmax-attention decoder layers only, and has no selective-scan or "
      "convolution mixer, no recurrent block and no per-layer choice between attention and another mixer",
      at, type.empty() ? std::string("the config") : "model_type \"" + type + "\"",
      keys.empty() ? "" : " (keys: " + list + ")"));
}

void read_vision_tower(const nlohmann::json& outer, const std::string& outer_type, ModelShape& m) {
  if (!outer.contains("vision_config") || !outer["vision_config"].is_object()) return;
  const nlohmann::json& v = outer["vision_config"];
  std::string type = v.contains("model_type") && v["model_type"].is_string() ? v["model_type"].get<std::string>() : "";
  if (type.empty()) type = outer_type == "gemma3" ? "siglip_vision_model" : outer_type + " vision tower";
  if (type.size() > 64) type = type.substr(0, 64);
  m.vision_model = type;
  if (type == "siglip_vision_model") {
    const std::int64_t tower = siglip_parameters(v);
    std::int64_t n = tower;
    std::string projector;
    if (outer_type == "gemma3") {
      // Gemma3MultiModalProjector: mm_input_projection_weight [vision hidden, text hidden]
      // and mm_soft_emb_norm (an RMSNorm of the vision hidden size).
      const std::int64_t vh = v.contains("hidden_size") && v["hidden_size"].is_number_integer()
                                  ? std::clamp<std::int64_t>(v["hidden_size"].get<std::int64_t>(), 1, 1 << 20)
                                  : 768;
      const std::int64_t p = vh * m.hidden_size + vh;
      projector = fmt::format(" and its projector's {}", grouped(p));
      n += p;
    }
    m.vision_parameters = n;
    m.traits.notes.push_back(fmt::format(
        "the vision tower ({}) is left out: {} parameters{} are not in the step or the counts, which are the text "
        "model's",
        type, grouped(tower), projector));
    return;
  }
  if (type == "llama4_vision_model") {
    // Llama4MultiModalProjector: linear_1 [vision_output_dim -> text hidden], no bias.
    const std::int64_t tower = llama4_vision_parameters(v);
    const std::int64_t out = v.contains("vision_output_dim") && v["vision_output_dim"].is_number_integer()
                                 ? std::clamp<std::int64_t>(v["vision_output_dim"].get<std::int64_t>(), 1, 1 << 20)
                                 : 7680;
    const std::int64_t p = out * m.hidden_size;
    m.vision_parameters = tower + p;
    m.traits.notes.push_back(fmt::format(
        "the vision tower ({}) is left out: {} parameters with its pixel-shuffle adapter and its projector's {} are "
        "not in the step or the counts, which are the text model's",
        type, grouped(tower), grouped(p)));
    return;
  }
  m.traits.notes.push_back(fmt::format(
      "the vision tower ({}) is left out: the step and the counts are the text model's; syncscope does not count this "
      "tower's parameters (only SigLIP's and Llama 4's forms are known to it)",
      type));
}

}  // namespace syncscope::scenario::detail
