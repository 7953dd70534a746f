// Architecture traits per Hugging Face family (model_traits.hpp). Every default below is
// the one of the family's config class or modeling file in huggingface/transformers
// (paths under src/transformers/models/); a config.json key, when present, wins.
#include "syncscope/scenario/model_traits.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "syncscope/scenario/scenario.hpp"

namespace syncscope::scenario {

namespace {

// How a family places its sliding windows when the config has no layer_types.
enum class Windows {
  None,         // no sliding window (Llama)
  All,          // every layer, when a window is set (Mistral, Mixtral)
  Alternating,  // sliding on layers 0, 2, 4, ...: "sliding_attention" if (i + 1) % 2 (Gemma 2, gpt-oss)
  EveryNth,     // full on every Nth layer, sliding otherwise: (i + 1) % N (Gemma 3, N = 6)
  FromLayer,    // sliding from max_window_layers on, and only with use_sliding_window (Qwen2/3)
};

struct Family {
  const char* name;
  const char* source;  // where the defaults were read
  bool tie;            // tie_word_embeddings default
  int window;          // sliding_window default (0: None)
  Windows windows;
  int pattern;  // EveryNth: sliding_window_pattern default; FromLayer: max_window_layers default
  bool qk_norm;
  bool qkv_bias;        // always on q/k/v, whatever attention_bias says (Qwen2)
  bool attention_bias;  // attention_bias default (q, k, v and o)
  bool sinks;
  bool moe_biases;
  int norms;
  double attn_cap, final_cap;
};

// clang-format off
const Family kFamilies[] = {
    // LlamaConfig: tie_word_embeddings=False, attention_bias=False, mlp_bias=False; no window.
    {"llama", "llama/configuration_llama.py", false, 0, Windows::None, 0, false, false, false, false, false, 2, 0, 0},
    // MistralConfig: sliding_window=4096, applied to every layer (modeling_mistral.py masks
    // every layer with config.sliding_window).
    {"mistral", "mistral/configuration_mistral.py", false, 4096, Windows::All, 0, false, false, false, false, false, 2, 0, 0},
    // MixtralConfig: sliding_window=None; every layer when set.
    {"mixtral", "mixtral/configuration_mixtral.py", false, 0, Windows::All, 0, false, false, false, false, false, 2, 0, 0},
    // Qwen2Config: use_sliding_window=False, sliding_window=4096, max_window_layers=28;
    // modeling_qwen2.py: q_proj/k_proj/v_proj bias=True, o_proj bias=False.
    {"qwen2", "qwen2/configuration_qwen2.py", false, 4096, Windows::FromLayer, 28, false, true, false, false, false, 2, 0, 0},
    // Qwen3Config: as Qwen2 but attention_bias=False; modeling_qwen3.py: q_norm/k_norm.
    {"qwen3", "qwen3/configuration_qwen3.py", false, 4096, Windows::FromLayer, 28, true, false, false, false, false, 2, 0, 0},
    // Qwen3MoeConfig: as Qwen3; experts num_experts x moe_intermediate_size, router without bias.
    {"qwen3_moe", "qwen3_moe/configuration_qwen3_moe.py", false, 4096, Windows::FromLayer, 28, true, false, false, false, false, 2, 0, 0},
    // Gemma2Config: tie_word_embeddings=True, sliding_window=4096 alternating (sliding first),
    // attn_logit_softcapping=50.0, final_logit_softcapping=30.0; modeling_gemma2.py adds
    // pre_feedforward_layernorm and post_feedforward_layernorm (4 norms per layer).
    {"gemma2", "gemma2/configuration_gemma2.py", true, 4096, Windows::Alternating, 0, false, false, false, false, false, 4, 50.0, 30.0},
    // Gemma3TextConfig: tie_word_embeddings=True, sliding_window=4096, sliding_window_pattern=6
    // (5 sliding : 1 full), no soft-capping; modeling_gemma3.py: q_norm/k_norm, 4 norms.
    {"gemma3", "gemma3/configuration_gemma3.py", true, 4096, Windows::EveryNth, 6, true, false, false, false, false, 4, 0, 0},
    // GptOssConfig: sliding_window=128 alternating (sliding first), attention_bias=True;
    // modeling_gpt_oss.py: sinks per head, router bias, gate_up_proj_bias and down_proj_bias.
    {"gpt_oss", "gpt_oss/configuration_gpt_oss.py", false, 128, Windows::Alternating, 0, false, false, true, true, true, 2, 0, 0},
    // Qwen2MoeConfig: as Qwen2 (q/k/v biases, windows only with use_sliding_window);
    // modeling_qwen2_moe.py: a shared expert of shared_expert_intermediate_size beside the
    // routed ones, scaled by a sigmoid shared_expert_gate Linear(hidden, 1).
    {"qwen2_moe", "qwen2_moe/configuration_qwen2_moe.py", false, 4096, Windows::FromLayer, 28, false, true, false, false, false, 2, 0, 0},
    // DeepseekV2Config: tie_word_embeddings=False, attention_bias=False, no window;
    // modeling_deepseek_v2.py: multi-head latent attention (q_a/q_b, kv_a_proj_with_mqa,
    // kv_b_proj), n_shared_experts beside the routed, first_k_dense_replace dense layers.
    {"deepseek_v2", "deepseek_v2/configuration_deepseek_v2.py", false, 0, Windows::None, 0, false, false, false, false, false, 2, 0, 0},
    // DeepseekV3Config: as DeepSeek-V2 (sigmoid router with a score-correction buffer).
    {"deepseek_v3", "deepseek_v3/configuration_deepseek_v3.py", false, 0, Windows::None, 0, false, false, false, false, false, 2, 0, 0},
    // Llama4TextConfig: no sliding window; attention_chunk_size on the RoPE layers (every
    // no_rope_layer_interval-th, default 4, is NoPE with full attention); use_qk_norm a
    // weightless L2 norm; modeling_llama4.py: a shared expert beside the routed ones.
    {"llama4", "llama4/configuration_llama4.py", false, 0, Windows::None, 0, false, false, false, false, false, 2, 0, 0},
    // Phi3Config: sliding_window=None, every layer when set (modeling_phi3.py); fused qkv_proj
    // and gate_up_proj hold the same values as Llama's separate projections.
    {"phi3", "phi3/configuration_phi3.py", false, 0, Windows::All, 0, false, false, false, false, false, 2, 0, 0},
    // OlmoeConfig: tie_word_embeddings=False; modeling_olmoe.py: q_norm over hidden_size and
    // k_norm over num_key_value_heads x head_dim (whole projections, not per head).
    {"olmoe", "olmoe/configuration_olmoe.py", false, 0, Windows::None, 0, true, false, false, false, false, 2, 0, 0},
};
// clang-format on

const Family* find(std::string_view family) {
  for (const Family& f : kFamilies)
    if (family == f.name) return &f;
  return nullptr;
}

// The family an unknown model_type is read as: the longest known name it starts with
// ("qwen2_moe_x" -> qwen2_moe, "llama_x" -> llama), else by shape: MLA keys -> deepseek_v3,
// experts named like Qwen's ->
// qwen3_moe, other experts -> mixtral, a window -> mistral, anything else -> llama.
const Family& closest(const TraitInputs& in) {
  const Family* best = nullptr;
  for (const Family& f : kFamilies) {
    const std::string_view n = f.name;
    if (in.model_type.rfind(n, 0) == 0 && (!best || n.size() > std::string_view(best->name).size())) best = &f;
  }
  if (best) return *best;
  if (in.mla) return *find("deepseek_v3");
  if (in.moe) return *find(in.qwen_moe_naming ? "qwen3_moe" : "mixtral");
  if (in.sliding_window_given && in.sliding_window > 0) return *find("mistral");
  return *find("llama");
}

// Which layers route to experts (ModelTraits::moe_layers); empty when all do.
std::vector<bool> moe_layout(const TraitInputs& in, int L) {
  if (!in.moe) return {};
  std::vector<bool> moe(static_cast<std::size_t>(L), true);
  const int step = std::max(1, in.moe_step);
  for (int i = 0; i < L; ++i) {
    bool routed = i >= in.first_k_dense_replace;
    routed = routed && (in.moe_step_from_zero ? i % step == 0 : (i + 1) % step == 0);
    routed = routed && std::find(in.mlp_only_layers.begin(), in.mlp_only_layers.end(), i) == in.mlp_only_layers.end();
    moe[static_cast<std::size_t>(i)] = routed;
  }
  if (std::all_of(moe.begin(), moe.end(), [](bool b) { return b; })) return {};
  return moe;
}

// Llama 4's chunked attention (Llama4TextConfig): the layers that use RoPE attend within
// chunks of attention_chunk_size; no_rope_layers[i] (1: RoPE) defaults to
// int((i + 1) % no_rope_layer_interval != 0), interval 4.
std::vector<int> chunk_layout(const TraitInputs& in, const Family& f, int L) {
  if (in.attention_chunk_size <= 0) return {};
  std::vector<int> c(static_cast<std::size_t>(L), 0);
  const bool llama4 = std::string_view(f.name) == "llama4";
  const int interval = std::max(1, in.no_rope_layer_interval.value_or(4));
  for (int i = 0; i < L; ++i) {
    bool chunked = true;
    if (in.layer_chunked)
      chunked =
          static_cast<std::size_t>(i) < in.layer_chunked->size() && (*in.layer_chunked)[static_cast<std::size_t>(i)];
    else if (in.no_rope_layers && !in.no_rope_layers->empty())
      chunked = (*in.no_rope_layers)[static_cast<std::size_t>(i) % in.no_rope_layers->size()];
    else if (llama4) chunked = (i + 1) % interval != 0;
    c[static_cast<std::size_t>(i)] = chunked ? in.attention_chunk_size : 0;
  }
  return c;
}

std::string windows_rule(const Family& f) {
  switch (f.windows) {
    case Windows::None: return "no sliding window";
    case Windows::All: return "a given sliding_window on every layer";
    case Windows::Alternating: return "sliding_window on alternating layers, sliding first";
    case Windows::EveryNth: return fmt::format("every {}th layer full, the others sliding", f.pattern);
    case Windows::FromLayer: return "sliding windows only with use_sliding_window, from max_window_layers on";
  }
  return "";
}

}  // namespace

const std::vector<std::string>& known_model_families() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Family& f : kFamilies) v.emplace_back(f.name);
    return v;
  }();
  return names;
}

std::optional<std::string> model_family(std::string_view model_type) {
  if (model_type == "gemma3_text") return std::string("gemma3");  // Gemma3ForCausalLM's text config
  if (model_type == "llama4_text") return std::string("llama4");  // Llama4ForCausalLM's text config
  if (const Family* f = find(model_type)) return std::string(f->name);
  return std::nullopt;
}

std::string resolved_family(const TraitInputs& in) {
  if (auto known = model_family(in.model_type)) return *known;
  return closest(in).name;
}

ResolvedTraits resolve_model_traits(const TraitInputs& in) {
  const auto known = model_family(in.model_type);
  const Family& f = known ? *find(*known) : closest(in);
  ResolvedTraits r;
  ModelTraits& t = r.traits;
  t.family = f.name;
  if (!known) {
    std::string features;
    for (const auto& s : architecture_features([&] {
           ModelTraits d;
           d.qk_norm = f.qk_norm;
           d.qkv_bias = f.qkv_bias || f.attention_bias;
           d.o_bias = f.attention_bias;
           d.attention_sinks = f.sinks;
           d.moe_biases = f.moe_biases;
           d.norms_per_layer = f.norms;
           return d;
         }()))
      features += ", " + s;
    // Every key the config leaves to the family's class is an assumption too: named, with its value.
    const std::string defaulted =
        in.class_defaults.empty()
            ? ""
            : fmt::format("; the keys the config leaves out, read as {}'s config class sets them: {}", f.name,
                          fmt::join(in.class_defaults, ", "));
    t.assumed = fmt::format(
        "{} is not a model_type syncscope knows ({}): read with {}'s defaults ({}; {}{}{}{}); the keys the config "
        "states still apply, but its parameter count and attention pattern may differ from the real model's",
        in.model_type.empty() ? std::string("the config has no model_type, so it")
                              : "model_type \"" + in.model_type + "\"",
        fmt::join(known_model_families(), ", "), f.name, f.tie ? "tied embeddings" : "untied embeddings",
        windows_rule(f), features.empty() ? "; no biases, sinks or extra norms" : "", features, defaulted);
  }
  r.tie_word_embeddings = in.tie_word_embeddings.value_or(f.tie);
  t.qk_norm = f.qk_norm;
  const bool attention_bias = in.attention_bias.value_or(f.attention_bias);
  t.qkv_bias = f.qkv_bias || attention_bias;
  t.o_bias = attention_bias;
  t.mlp_bias = in.mlp_bias.value_or(false);
  t.attention_sinks = f.sinks;
  t.moe_biases = f.moe_biases && in.moe;
  t.norms_per_layer = f.norms;
  t.attn_logit_softcapping = in.attn_logit_softcapping.value_or(f.attn_cap);
  t.final_logit_softcapping = in.final_logit_softcapping.value_or(f.final_cap);

  // The window: the config's (a null is "none"), else the class's default; Qwen's classes
  // set it to None unless use_sliding_window is true.
  int window = in.sliding_window_given ? in.sliding_window : f.window;
  if (f.windows == Windows::FromLayer && !in.use_sliding_window.value_or(false)) window = 0;
  if (f.windows == Windows::None && !in.layer_types) window = 0;  // LlamaConfig has no window
  const int L = std::max(0, in.num_hidden_layers);
  std::vector<int> w(static_cast<std::size_t>(L), 0);
  for (int i = 0; i < L && window > 0; ++i) {
    bool sliding = false;
    if (in.layer_types) {
      sliding = static_cast<std::size_t>(i) < in.layer_types->size() && (*in.layer_types)[static_cast<std::size_t>(i)];
    } else {
      switch (f.windows) {
        case Windows::None: sliding = false; break;
        case Windows::All: sliding = true; break;
        case Windows::Alternating: sliding = (i + 1) % 2 != 0; break;
        case Windows::EveryNth:
          sliding = (i + 1) % std::max(1, in.sliding_window_pattern.value_or(f.pattern)) != 0;
          break;
        case Windows::FromLayer: sliding = i >= in.max_window_layers.value_or(f.pattern); break;
      }
    }
    w[static_cast<std::size_t>(i)] = sliding ? window : 0;
  }
  if (std::any_of(w.begin(), w.end(), [](int x) { return x > 0; })) {
    t.layer_windows = std::move(w);
    r.sliding_window = window;
  }
  if (std::string_view(f.name) == "olmoe") t.qk_norm_full_width = true;
  if (std::string_view(f.name) == "llama4") t.qk_l2_norm = in.use_qk_norm.value_or(true);
  t.moe_layers = moe_layout(in, L);
  t.layer_chunks = chunk_layout(in, f, L);
  return r;
}

ModelTraits model_traits(const ModelShape& m) {
  if (!m.traits.family.empty()) return m.traits;
  ModelTraits t;
  if (m.model_type.empty()) {
    // A hand-written shape without model_type: Llama's traits, a given window alternating.
    if (m.sliding_window > 0) {
      t.layer_windows.assign(static_cast<std::size_t>(std::max(1, m.num_hidden_layers)), 0);
      for (std::size_t i = 0; i < t.layer_windows.size(); i += 2) t.layer_windows[i] = m.sliding_window;
    }
    return t;
  }
  // A scenario states its window explicitly (0: none) and its tie; the family says the rest.
  TraitInputs in;
  in.model_type = m.model_type;
  in.num_hidden_layers = m.num_hidden_layers;
  in.moe = m.is_moe();
  in.tie_word_embeddings = m.tie_word_embeddings;
  in.sliding_window_given = true;
  in.sliding_window = m.sliding_window;
  in.use_sliding_window = m.sliding_window > 0;
  return resolve_model_traits(in).traits;
}

int layer_chunk(const ModelTraits& t, int layer) {
  if (t.layer_chunks.empty() || layer < 0) return 0;
  return t.layer_chunks[static_cast<std::size_t>(layer) % t.layer_chunks.size()];
}

bool ModelShape::moe_layer(int layer) const {
  if (!is_moe()) return false;
  if (traits.moe_layers.empty() || layer < 0) return true;
  return traits.moe_layers[static_cast<std::size_t>(layer) % traits.moe_layers.size()];
}

int layer_window(const ModelTraits& t, int layer) {
  if (t.layer_windows.empty() || layer < 0) return 0;
  return t.layer_windows[static_cast<std::size_t>(layer) % t.layer_windows.size()];
}

std::string describe_windows(const ModelTraits& t, int layers) {
  int sliding = 0, window = 0;
  for (int i = 0; i < layers; ++i)
    if (const int w = layer_window(t, i); w > 0) ++sliding, window = std::max(window, w);
  int chunked = 0, chunk = 0;
  for (int i = 0; i < layers; ++i)
    if (const int c = layer_chunk(t, i); c > 0) ++chunked, chunk = std::max(chunk, c);
  const std::string chunks =
      chunked == 0        ? ""
      : chunked == layers ? fmt::format("{}-token attention chunks on every layer", chunk)
                          : fmt::format("{}-token attention chunks on {} of {} layers (full attention on the rest)",
                                        chunk, chunked, layers);
  if (sliding == 0) return chunked > 0 ? chunks : "full attention on every layer";
  const std::string windows =
      sliding == layers ? fmt::format("a {}-token sliding window on every layer", window)
                        : fmt::format("a {}-token sliding window on {} of {} layers", window, sliding, layers);
  return chunked > 0 ? windows + ", " + chunks : windows;
}

std::vector<std::string> architecture_features(const ModelTraits& t) {
  std::vector<std::string> out;
  if (t.qk_norm) out.emplace_back(t.qk_norm_full_width ? "q/k norms over the whole projection" : "q/k norms");
  if (t.qk_l2_norm) out.emplace_back("weightless q/k L2 norms");
  if (t.qkv_bias && t.o_bias) out.emplace_back("q/k/v/o biases");
  else if (t.qkv_bias) out.emplace_back("q/k/v biases");
  if (t.mlp_bias) out.emplace_back("MLP biases");
  if (t.attention_sinks) out.emplace_back("attention sinks");
  if (t.moe_biases) out.emplace_back("router and expert biases");
  if (t.norms_per_layer != 2) out.push_back(fmt::format("{} norms per layer", t.norms_per_layer));
  if (t.attn_logit_softcapping > 0)
    out.push_back(fmt::format("attention logit soft-capping {}", t.attn_logit_softcapping));
  if (t.final_logit_softcapping > 0)
    out.push_back(fmt::format("final logit soft-capping {}", t.final_logit_softcapping));
  return out;
}

}  // namespace syncscope::scenario
