#include "syncscope/program/step_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>

#include "option_error.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::program {

namespace {

template <std::size_t N>
bool one_of(const std::string& v, const char* const (&names)[N]) {
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return v == n; });
}

template <std::size_t N>
std::string list(const char* const (&names)[N]) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string("\"") + n + "\"";
  return out;
}

}  // namespace

int effective_layers(const StepOptions& o) { return o.layers > 0 ? o.layers : o.model.num_hidden_layers; }

bool recomputes_layers(const StepOptions& o, bool scheduled) {
  // A fix that schedules the layers (offload) checkpoints them itself: `scheduled`.
  return scheduled || o.training.gradient_checkpointing == "full";
}

int dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  detail::bad_option("dtype", "\"fp32\", \"bf16\" or \"fp16\"", "\"" + dtype + "\"");
}

// From the architecture (model_type's config class), never from the name.
bool uses_qk_norm(const scenario::ModelShape& model) { return scenario::model_traits(model).qk_norm; }

bool is_gpt_oss(const scenario::ModelShape& model) {
  if (model.model_type == "gpt_oss") return true;
  std::string n = model.name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return n.find("gpt-oss") != std::string::npos;
}

namespace {
bool dense_mlp_module(const std::string& m) { return m == "gate_proj" || m == "up_proj" || m == "down_proj"; }
}  // namespace

std::optional<std::uint8_t> StepOptions::fix_variant(fixes::Fix fix) const {
  const auto it = fix_variants.find(fix);
  return it == fix_variants.end() ? std::nullopt : std::optional<std::uint8_t>(it->second);
}

double StepOptions::fix_number(fixes::Fix fix, const std::string& key, double otherwise) const {
  const auto f = fix_numbers.find(fix);
  if (f == fix_numbers.end()) return otherwise;
  const auto v = f->second.find(key);
  return v == f->second.end() ? otherwise : v->second;
}

std::string StepOptions::fix_word(fixes::Fix fix, const std::string& key, const std::string& otherwise) const {
  const auto f = fix_words.find(fix);
  if (f == fix_words.end()) return otherwise;
  const auto w = f->second.find(key);
  return w == f->second.end() ? otherwise : w->second;
}

bool lora_adapted(const StepOptions& o, const std::string& module) {
  if (!o.training.adapters()) return false;
  if (o.model.is_moe() && dense_mlp_module(module)) return false;
  const auto& t = o.training.target_modules;
  return std::find(t.begin(), t.end(), module) != t.end();
}

bool nf4_quantized(const StepOptions& o, const std::string& module) {
  if (o.training.mode != "qlora") return false;
  if (o.model.is_moe() && dense_mlp_module(module)) return false;
  return std::find(std::begin(scenario::kLoraModules), std::end(scenario::kLoraModules), module) !=
         std::end(scenario::kLoraModules);
}

// The pattern the config class gives (every layer for Mistral, alternating for
// Gemma 2 and gpt-oss, 5 of 6 for Gemma 3, layer_types when stated).
int layer_sliding_window(const scenario::ModelShape& model, int layer) {
  return scenario::layer_window(scenario::model_traits(model), layer);
}

void validate(const StepOptions& o) {
  const scenario::ModelShape& m = o.model;
  auto positive = [](const std::string& field, long long v) {
    if (v <= 0) detail::bad_option(field, "a positive integer", std::to_string(v));
  };
  positive("model.num_hidden_layers", m.num_hidden_layers);
  positive("model.hidden_size", m.hidden_size);
  positive("model.num_attention_heads", m.num_attention_heads);
  positive("model.num_key_value_heads", m.num_key_value_heads);
  positive("model.head_dim", m.head_dim);
  positive("model.intermediate_size", m.intermediate_size);
  positive("model.vocab_size", m.vocab_size);
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    detail::bad_option("model.num_key_value_heads",
                       fmt::format("a divisor of num_attention_heads ({})", m.num_attention_heads),
                       std::to_string(m.num_key_value_heads));
  if (m.head_dim % 2 != 0)
    detail::bad_option("model.head_dim", "an even number (RoPE rotates pairs)", std::to_string(m.head_dim));
  if (m.num_local_experts < 0)
    detail::bad_option("model.num_local_experts", "0 (dense) or a positive integer",
                       std::to_string(m.num_local_experts));
  if (m.is_moe() && (m.num_experts_per_tok <= 0 || m.num_experts_per_tok > m.num_local_experts))
    detail::bad_option("model.num_experts_per_tok", fmt::format("1..num_local_experts ({})", m.num_local_experts),
                       std::to_string(m.num_experts_per_tok));
  if (m.rms_norm_eps <= 0)
    detail::bad_option("model.rms_norm_eps", "a positive number", fmt::format("{}", m.rms_norm_eps));
  if (m.sliding_window < 0)
    detail::bad_option("model.sliding_window", "0 (none) or a positive integer", std::to_string(m.sliding_window));
  if (o.layers < 0) detail::bad_option("layers", "0 (the model's) or a positive integer", std::to_string(o.layers));
  positive("batch.packed_tokens", o.batch.packed_tokens);
  dtype_bytes(o.dtype);
  if (o.device != "cpu" && o.device != "cuda")
    detail::bad_option("device", "\"cpu\" or \"cuda\"", "\"" + o.device + "\"");
  validate_fix_settings(o);
  if (!(o.learning_rate > 0))
    detail::bad_option("learning_rate", "a positive number", fmt::format("{}", o.learning_rate));
  if (!one_of(o.training.mode, scenario::kTrainingModes))
    detail::bad_option("training.mode", list(scenario::kTrainingModes), "\"" + o.training.mode + "\"");
  if (o.training.adapters()) {
    if (o.training.lora_rank < 1)
      detail::bad_option("training.lora_rank", "a positive integer", std::to_string(o.training.lora_rank));
    if (!(o.training.lora_alpha > 0))
      detail::bad_option("training.lora_alpha", "a positive number", fmt::format("{}", o.training.lora_alpha));
    for (const auto& t : o.training.target_modules)
      if (!one_of(t, scenario::kLoraModules))
        detail::bad_option("training.target_modules", list(scenario::kLoraModules), "\"" + t + "\"");
  }
  if (o.training.mode == "qlora" && (m.hidden_size % 2 != 0 || m.intermediate_size % 2 != 0 || m.head_dim % 2 != 0))
    detail::bad_option("model.hidden_size",
                       "even hidden, intermediate and head sizes for qlora (two 4-bit codes per byte)",
                       fmt::format("{}, {}, {}", m.hidden_size, m.intermediate_size, m.head_dim));
  const auto lengths = batch_lengths(o, 0);
  long long sum = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] <= 0)
      detail::bad_option(fmt::format("batch.lengths[{}]", i), "a positive length", std::to_string(lengths[i]));
    sum += lengths[i];
  }
  if (sum != o.batch.packed_tokens)
    detail::bad_option("batch.lengths",
                       fmt::format("lengths summing to batch.packed_tokens ({})", o.batch.packed_tokens),
                       fmt::format("a sum of {}", sum));
}

std::vector<int> batch_lengths(const StepOptions& o, int batch_index) {
  SYNCSCOPE_THROW_IF(batch_index < 0, "batch_lengths: negative batch index");
  scenario::BatchSpec spec = o.batch;
  if (spec.distribution == "uniform") {
    // A new batch draws new lengths: reseed with a per-batch odd-constant stride so the
    // sequence of batches is reproducible from (seed, index).
    spec.seed = spec.seed + static_cast<std::uint64_t>(batch_index) * 0x9E3779B97F4A7C15ull;
    return scenario::sequence_lengths(spec);
  }
  std::vector<int> lengths = scenario::sequence_lengths(spec);
  if (!lengths.empty()) {
    const auto shift = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(batch_index) % lengths.size());
    std::rotate(lengths.begin(), lengths.begin() + shift, lengths.end());
  }
  return lengths;
}

}  // namespace syncscope::program
