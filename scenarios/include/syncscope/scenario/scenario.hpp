// What a scenario describes: a model shape (Hugging Face config names), a packed batch,
// which fixes and variants to run, and how to measure. Shared by the YAML loader, the
// LibTorch reference steps (kernels/), the simulator (model/sim/src) and the run command.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/scenario/model_traits.hpp"

namespace syncscope::scenario {

// Hugging Face config.json field names in comments.
struct ModelShape {
  std::string name;             // e.g. "Qwen3-0.6B"
  int num_hidden_layers = 0;    // num_hidden_layers
  int hidden_size = 0;          // hidden_size
  int num_attention_heads = 0;  // num_attention_heads
  int num_key_value_heads = 0;  // num_key_value_heads
  int head_dim = 0;             // head_dim (NOT always hidden/heads: Qwen3, gpt-oss)
  int intermediate_size = 0;    // intermediate_size (per expert for MoE)
  int vocab_size = 0;           // vocab_size
  int num_local_experts = 0;    // num_local_experts (0: dense)
  int num_experts_per_tok = 0;  // num_experts_per_tok
  double rms_norm_eps = 1e-6;   // rms_norm_eps
  double rope_theta = 10000.0;  // rope_theta
  int sliding_window = 0;       // sliding_window (gpt-oss alternates; 0: none)
  // Training as Unsloth does it; optional in scenarios and config.json.
  bool tie_word_embeddings = false;  // tie_word_embeddings: the LM head is the embedding matrix
  std::string model_type;            // model_type ("llama", "qwen3", "gpt_oss"); "" when not given
  double swiglu_limit = 0;           // swiglu_limit (gpt-oss: 7.0, clamps the expert SwiGLU); 0: none
  // The architecture as its config class means it (model_traits.hpp). Resolved by
  // load_hf_config; a scenario's shape leaves it empty and model_traits() derives it from
  // model_type.
  ModelTraits traits;
  // Mixture-of-experts beyond the routed experts (0: none). Shared experts run on every
  // token beside the routed ones, as one MLP of shared_expert_intermediate_size (DeepSeek:
  // n_shared_experts x moe_intermediate_size; Qwen2-MoE: shared_expert_intermediate_size;
  // Llama 4: intermediate_size).
  int num_shared_experts = 0;               // n_shared_experts (DeepSeek); 1 for Qwen2-MoE and Llama 4
  int shared_expert_intermediate_size = 0;  // the shared MLP's width, all shared experts together
  bool shared_expert_gate = false;          // Qwen2-MoE: a sigmoid gate Linear(hidden, 1) on the shared output
  int dense_intermediate_size = 0;          // the MLP width of an MoE model's dense layers (0: none dense)
  // Multi-head latent attention (DeepSeek-V2/V3): q (optionally through a rank-q_lora_rank
  // bottleneck) and a joint rank-kv_lora_rank latent for k and v. 0: none.
  int q_lora_rank = 0;       // q_lora_rank (0: q_proj direct, as DeepSeek-V2-Lite's null)
  int kv_lora_rank = 0;      // kv_lora_rank (0: not MLA)
  int qk_rope_head_dim = 0;  // qk_rope_head_dim: the rotary part of each q/k head
  int qk_nope_head_dim = 0;  // qk_nope_head_dim: the rest of each q/k head
  int v_head_dim = 0;        // v_head_dim
  // A multimodal config's vision tower, left out of the step: its model_type and
  // parameter count (with its projector; 0: not counted), said to the user.
  std::string vision_model;
  std::int64_t vision_parameters = 0;
  bool is_moe() const { return num_local_experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  // True when `layer`'s MLP is the routed experts (an MoE model's dense layers: traits.moe_layers).
  bool moe_layer(int layer) const;
};

// How the network trains. "full": every parameter trains (AdamW on all).
// "lora": the base frozen in the compute dtype, rank-r adapters on `target_modules` train.
// "qlora": the base frozen in 4-bit NF4 as bitsandbytes stores it (blocks of 64 values with
// an fp32 absmax each; with double_quant the absmax values are themselves 8-bit quantized in
// blocks of 256), dequantized before each use; adapters as in lora. Defaults are those of
// Unsloth's examples (r = 16, alpha = 16, q/k/v/o/gate/up/down).
inline constexpr const char* kTrainingModes[] = {"full", "lora", "qlora"};
inline constexpr const char* kLoraModules[] = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                               "gate_proj", "up_proj", "down_proj"};
inline constexpr const char* kGradientCheckpointing[] = {"none", "full", "offload"};

struct TrainingSpec {
  std::string mode = "full";
  int lora_rank = 16;
  double lora_alpha = 16;
  std::vector<std::string> target_modules{std::begin(kLoraModules), std::end(kLoraModules)};
  bool double_quant = false;  // qlora only
  // The optimizer a real run would use, for the memory check (the step programs run
  // AdamW's kernels either way): "adamw" (torch AdamW under bf16 mixed precision: an fp32
  // master copy and two fp32 moments per trained value) or "adamw_8bit" (bitsandbytes'
  // AdamW8bit: two 8-bit moments with an fp32 absmax per block of 2048 values).
  std::string optimizer = "adamw";
  // The scenario's `gradient_checkpointing` (kGradientCheckpointing): "none" (every layer's
  // activations kept for the backward), "full" (transformers' gradient_checkpointing: each
  // layer's input kept on the device, the layer recomputed in the backward) or "offload"
  // (Unsloth's: the inputs in host memory, reloaded for the recompute; the same as offload:
  // true). "" when not given: the mode follows `offload` (offload, else none), as before the
  // key existed.
  std::string gradient_checkpointing;
  bool adapters() const { return mode == "lora" || mode == "qlora"; }
};

// The fixes (Fix), their names and variants: the fix registry (syncscope/fixes/fix_spec.hpp),
// which the loader below loops over.

struct BatchSpec {
  int packed_tokens = 2048;  // T: tokens in the packed batch
  // Sequence lengths: "uniform" in [min_len, max_len], "fixed" (all max_len) or
  // "list" (lengths given explicitly; they must sum to packed_tokens).
  std::string distribution = "uniform";
  int min_len = 64;
  int max_len = 1024;
  std::vector<int> lengths;
  std::uint64_t seed = 0;
};

struct FixSelection {
  fixes::Fix fix{};                   // a registered fix's id (fix_spec.hpp)
  std::vector<std::string> variants;  // names from the lists above; baseline included
  double tolerance = 0.10;            // validation: max |predicted-measured|/measured speedup error
  // A registered fix's own numeric keys (FixSpec::scenario_keys) as given, e.g.
  // fixes.offload.prefetch_depth, fixes.logging.logging_steps; those in FixSpec::number_keys
  // are checked against their bounds when the scenario loads. The fix reads them from here.
  std::map<std::string, double> numbers{};
  // A fix's own word keys (FixSpec::word_keys, e.g. fixes.packing.rebuild_form), as given and
  // checked against the fix's list; word() gives the fix's default for one not given.
  std::map<std::string, std::string> words{};
  // The selection's word for `key`, else the fix's default (the first of its list); throws
  // std::out_of_range for a key that is not one of the fix's word keys.
  const std::string& word(const std::string& key) const;
  // The selection's number for `key`, else the fix's default (FixSpec::number_keys); throws
  // std::out_of_range for a key that is not one of the fix's number keys.
  double number(const std::string& key) const;
  bool has_number(const std::string& key) const { return numbers.count(key) != 0; }
};

struct MeasureSpec {
  int warmup_steps = 2;
  int repeat_steps = 5;
  std::optional<int> layers_override;  // run a reduced number of layers
  std::vector<int> layer_sweep;        // optional L-sweep (fit step time against L)
};

struct Scenario {
  std::filesystem::path source;  // the file it came from
  std::string name;
  ModelShape model;
  BatchSpec batch;
  std::string dtype = "bf16";  // bf16 | fp16 | fp32
  bool offload = false;        // checkpoint-activation offload on
  TrainingSpec training;       // full | lora | qlora
  // The host's cost per framework op in a simulated run: "eager" (the GPU profile's fitted
  // eager-PyTorch figures) or "cpp" (none beyond the launch call itself: a C++ host).
  std::string host = "eager";
  std::vector<FixSelection> fixes;
  MeasureSpec measure;
  int layers() const { return measure.layers_override.value_or(model.num_hidden_layers); }
};

// Loads a scenario YAML strictly: an unknown key, a wrong type or an impossible value is an
// InputError naming file, line and column and the expected form.
Scenario load_scenario(const std::filesystem::path& path);
// Reads a model's own Hugging Face config.json into a ModelShape (same strictness; a key
// given twice in one object is an error naming its line and column, as in YAML).
ModelShape load_hf_config(const std::filesystem::path& path);
// The same from text already read; `source` names it in errors (and gives the scenario's
// default name, its stem). For fuzzing and for callers that hold the text.
Scenario parse_scenario(const std::string& text, const std::filesystem::path& source);
ModelShape parse_hf_config(const std::string& text, const std::filesystem::path& source);

// Sequence lengths for a batch spec (deterministic in seed); they sum to packed_tokens.
std::vector<int> sequence_lengths(const BatchSpec& batch);

// Shorthands over the fix registry (fix_spec.hpp).
const char* fix_name(fixes::Fix fix);                        // "packing", "offload", "moe_routing"
std::optional<fixes::Fix> parse_fix(std::string_view name);  // inverse of fix_name (names, not aliases)
std::vector<std::string> fix_variants(fixes::Fix fix);       // the registry's list, baseline first
const char* baseline_variant(fixes::Fix fix);                // "rebuild", "single", "loop"
// Checks a scenario built or changed in code (e.g. after --hf-config or --layers replaced a
// part of it) with the loader's rules; InputError names `source` and the field.
void validate_scenario(const Scenario& scenario);
// Replaces the model shape (from --hf-config) and re-validates, naming `config_path` in errors.
void replace_model(Scenario& scenario, const ModelShape& model, const std::filesystem::path& config_path);

}  // namespace syncscope::scenario
