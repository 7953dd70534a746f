// Architecture traits of a decoder model, read as its Hugging Face config class means
// them: which layers use a sliding window, qk-norm, projection biases, attention
// sinks, the extra per-layer norms, logit soft-capping. A config.json states only what
// differs from its class's defaults, so the defaults of each family are here, each citing
// the public Hugging Face source (huggingface/transformers, src/transformers/models/...).
// The model's *name* is never consulted: a config from the Hugging Face cache is named by
// its snapshot hash.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncscope::scenario {

struct ModelShape;

struct ModelTraits {
  // The known family whose config class supplied the defaults ("llama", "qwen2", ...);
  // "" for a shape whose traits were never resolved (a hand-written scenario: see
  // model_traits()).
  std::string family;
  // Non-empty when the config's model_type is not a known family: what was assumed, as a
  // warning to print (the run prints it and keeps it in results.json's notes).
  std::string assumed;
  // Non-empty when the config (of a known family) leaves architecture keys to its config
  // class: each key with the value read and the class named ("the config leaves 2
  // architecture keys to DeepseekV2Config (...)'s defaults: read as n_routed_experts 64, ..."),
  // a warning to print and keep in results.json's notes.
  std::string defaulted;
  // Sliding window (tokens) per decoder layer, 0 for full attention; empty: every layer
  // full. Layers beyond the list (a sweep deeper than the config) repeat it cyclically.
  std::vector<int> layer_windows;
  bool qk_norm = false;                // RMSNorm on q and k per head (Qwen3, Qwen3-MoE, Gemma 3)
  bool qkv_bias = false;               // biases on q/k/v projections (Qwen2 always; attention_bias)
  bool o_bias = false;                 // bias on o_proj (attention_bias: Llama, gpt-oss)
  bool mlp_bias = false;               // biases on the dense MLP projections (Llama's mlp_bias)
  bool attention_sinks = false;        // a learned logit per head in the softmax (gpt-oss)
  bool moe_biases = false;             // router and expert biases (gpt-oss)
  int norms_per_layer = 2;             // input + post-attention; Gemma 2/3 add pre/post feed-forward
  double attn_logit_softcapping = 0;   // tanh cap on attention logits (Gemma 2: 50); 0: none
  double final_logit_softcapping = 0;  // tanh cap on the LM head's logits (Gemma 2: 30); 0: none
  // MoE models: per layer, true where the MLP is the routed experts, false for a dense MLP
  // (DeepSeek's first_k_dense_replace, Llama 4's interleave_moe_layer_step, Qwen-MoE's
  // decoder_sparse_step and mlp_only_layers); empty: every layer routed. Repeats cyclically.
  std::vector<bool> moe_layers;
  // Chunked attention (tokens) per layer, 0 where full (Llama 4: attention_chunk_size on
  // its RoPE layers, every no_rope_layer_interval-th layer full); empty: none chunked.
  std::vector<int> layer_chunks;
  bool qk_norm_full_width = false;  // OLMoE: q/k norms over all heads together (q: hidden, k: kv width)
  bool qk_l2_norm = false;          // Llama 4: weightless L2 norm on q/k of its RoPE layers
  // Keys of the config that change the cost and are not modelled, each a warning to print.
  std::vector<std::string> unmodelled;
  // What was read from the config class rather than the file (a multimodal text_config's
  // defaults) and what was left out (the vision tower), each a line to print.
  std::vector<std::string> notes;
};

// The families whose defaults are known, in the order they are listed to users.
const std::vector<std::string>& known_model_families();
// The family of a model_type ("gemma3_text" is gemma3), or nullopt when unknown.
std::optional<std::string> model_family(std::string_view model_type);

// What a config.json says beyond the shape (unset: the key is absent, so the class's
// default holds). hf_config.cpp reads these; resolve_model_traits() applies the defaults.
struct TraitInputs {
  std::string model_type;  // "" when the config has none
  int num_hidden_layers = 0;
  bool moe = false;
  bool qwen_moe_naming = false;  // experts named num_experts (Qwen3-MoE style)
  std::optional<bool> tie_word_embeddings;
  std::optional<bool> attention_bias, mlp_bias;
  std::optional<bool> use_sliding_window;        // Qwen2/Qwen3: windows only when true
  bool sliding_window_given = false;             // the key is present (a null means "none")
  int sliding_window = 0;                        // its value (0 for null)
  std::optional<int> max_window_layers;          // Qwen2/Qwen3: layers from this index slide
  std::optional<int> sliding_window_pattern;     // Gemma 3: every Nth layer is full
  std::optional<std::vector<bool>> layer_types;  // true: "sliding_attention"
  std::optional<double> attn_logit_softcapping, final_logit_softcapping;
  // The MoE layout: the first `first_k_dense_replace` layers dense (DeepSeek); then MoE on
  // every `moe_step`-th layer, counted as (i + 1) % step == 0 (Llama 4's
  // interleave_moe_layer_step, Qwen-MoE's decoder_sparse_step) or i % step == 0 (DeepSeek's
  // moe_layer_freq, moe_step_from_zero); mlp_only_layers dense.
  int first_k_dense_replace = 0;
  int moe_step = 1;
  bool moe_step_from_zero = false;
  std::vector<int> mlp_only_layers;
  int attention_chunk_size = 0;                     // Llama 4 (0: none)
  std::optional<std::vector<bool>> no_rope_layers;  // Llama 4: true where the layer uses RoPE (chunked)
  std::optional<int> no_rope_layer_interval;        // Llama 4: every Nth layer NoPE (full attention)
  std::optional<bool> use_qk_norm;                  // Llama 4
  std::optional<std::vector<bool>> layer_chunked;   // layer_types' "chunked_attention" entries
  bool mla = false;                                 // kv_lora_rank given (closest family for an unknown type)
  // The architecture keys the config leaves out (or sets to null) and that were read as the
  // family's config class defines them, "key value" each ("first_k_dense_replace 3"): named
  // in ModelTraits::assumed when the model_type is not known (hf_architecture.cpp).
  std::vector<std::string> class_defaults;
};

// The family whose config class supplies the defaults: the model_type's own, else the closest
// one (by name prefix, then by shape: MLA keys -> deepseek_v3, experts -> qwen3_moe or
// mixtral, a window -> mistral, else llama). resolve_model_traits() uses the same.
std::string resolved_family(const TraitInputs& in);

struct ResolvedTraits {
  ModelTraits traits;
  bool tie_word_embeddings = false;
  int sliding_window = 0;  // the window the sliding layers use (0: none)
};
ResolvedTraits resolve_model_traits(const TraitInputs& in);

// The traits of a shape: its own when resolved from a config (traits.family non-empty),
// else derived from model_type and sliding_window with the family's defaults (a scenario
// YAML states the shape, not the config class). With no model_type at all the shape is
// read as Llama's with a given sliding_window on alternating layers, sliding first (the
// rule syncscope used before it read model_type; give model_type for the family's own).
ModelTraits model_traits(const ModelShape& model);

// Window of `layer` (0: full attention).
int layer_window(const ModelTraits& traits, int layer);
// Attention chunk of `layer` (0: not chunked).
int layer_chunk(const ModelTraits& traits, int layer);

// One line on the attention pattern ("every layer: 4096-token window", "sliding (128) on
// 12 of 24 layers, alternating"), and the model's features a step leaves out or a scenario
// keeps at baseline are named by callers with it.
std::string describe_windows(const ModelTraits& traits, int layers);
// The architecture's features beyond a Llama-style decoder, in words ("q/k/v biases",
// "attention sinks", "4 norms per layer", "attention logit soft-capping 50").
std::vector<std::string> architecture_features(const ModelTraits& traits);

}  // namespace syncscope::scenario
