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

// Multi-head latent attention (modeling_deepseek_v2.py / _v3.py): q through q_a_proj
// [q_lora_rank, H] and q_b_proj (or q_proj when q_lora_rank is null), k and v from one
// latent kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, H] and kv_b_proj.
void read_mla(const HfKeys& k, ModelShape& m, const std::string& family) {
  const bool deepseek = is_deepseek(family);
  if (!deepseek && !k.has("kv_lora_rank")) return;
  // DeepseekV2Config/DeepseekV3Config: kv_lora_rank=512, q_lora_rank=1536,
  // qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128 (transformers commit 008e574).
  m.kv_lora_rank = k.integer("kv_lora_rank").value_or(512);
  m.q_lora_rank = k.given("q_lora_rank") ? k.integer("q_lora_rank").value_or(0) : 1536;  // null: q_proj direct
  m.qk_rope_head_dim = k.integer("qk_rope_head_dim").value_or(64);
  m.qk_nope_head_dim = k.integer("qk_nope_head_dim").value_or(128);
  m.v_head_dim = k.integer("v_head_dim").value_or(128);
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
  if (is_deepseek(family) || k.given("n_shared_experts")) {
    const int n = k.integer("n_shared_experts").value_or(0);
    if (n < 0) fail(k.where, "n_shared_experts", "a non-negative integer", std::to_string(n));
    if (n > 0) {
      const int each = k.integer("moe_intermediate_size").value_or(0);
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
    const int s = k.integer("shared_expert_intermediate_size").value_or(family == "qwen2_moe" ? 5632 : 0);
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
    m.dense_intermediate_size = k.integer("intermediate_size_mlp").value_or(16384);
  }
  if (m.shared_expert_intermediate_size > bounds::kIntermediateSize.hi)
    fail(k.where, m.shared_expert_gate ? "shared_expert_intermediate_size" : "n_shared_experts",
         bounds::describe_int(bounds::kIntermediateSize), std::to_string(m.shared_expert_intermediate_size));
  if (!m.is_moe()) return;

  // Dense layers: DeepSeek's first_k_dense_replace (V3 default 3, V2 0) and moe_layer_freq
  // (layer i routed when i >= k and i % freq == 0); Llama 4's interleave_moe_layer_step and
  // Qwen-MoE's decoder_sparse_step (routed when (i + 1) % step == 0); mlp_only_layers.
  in.first_k_dense_replace = k.integer("first_k_dense_replace").value_or(family == "deepseek_v3" ? 3 : 0);
  if (in.first_k_dense_replace < 0 || in.first_k_dense_replace >= L)
    fail(k.where, "first_k_dense_replace",
         fmt::format("an integer in 0..{} (below num_hidden_layers, {}: with every layer dense the model has no "
                     "experts)",
                     L - 1, L),
         std::to_string(in.first_k_dense_replace));
  const char* step_key = k.given("moe_layer_freq")              ? "moe_layer_freq"
                         : k.given("interleave_moe_layer_step") ? "interleave_moe_layer_step"
                                                                : "decoder_sparse_step";
  in.moe_step = k.integer(step_key).value_or(1);
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

// Llama 4's chunked attention and the keys that change the cost but are not modelled.
void read_attention_extras(const HfKeys& k, ModelShape& m, TraitInputs& in, const std::string& family) {
  in.attention_chunk_size = k.integer("attention_chunk_size").value_or(0);
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
  read_mla(keys, m, family);
  in.mla = m.is_mla();
  read_moe(keys, m, in, family);
  read_attention_extras(keys, m, in, family);
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
  m.traits.notes.push_back(fmt::format(
      "the vision tower ({}) is left out: the step and the counts are the text model's; syncscope does not count this "
      "tower's parameters (only SigLIP's form is known to it)",
      type));
}

}  // namespace syncscope::scenario::detail
