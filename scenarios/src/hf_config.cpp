// load_hf_config: a model's own Hugging Face config.json. Unknown keys are normal there
// (rope_scaling, torch_dtype, ...); the shape keys we need must be present and well typed.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "checks.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope {

namespace {

// "file:line:column" of the first `"key":` in the text; config.json files have each key once
// at the top level in practice (nested configs such as text_config are read separately).
std::string locate(const std::string& file, const std::string& text, const std::string& key) {
  const std::string needle = "\"" + key + "\"";
  auto pos = text.find(needle);
  if (pos == std::string::npos) return file;
  int line = 1, col = 1;
  for (std::size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}:{}", file, line, col);
}

std::string line_col(const std::string& text, std::size_t byte) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}", line, col);
}

}  // namespace

ModelShape load_hf_config(const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::string text = read_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}:{}: not valid JSON (byte {}): {}", file, line_col(text, e.byte > 0 ? e.byte - 1 : 0), e.byte, e.what()));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object (a Hugging Face config.json)", file));
  // Multimodal configs nest the language model's shape (e.g. Llama 4, Gemma 3).
  if (!j.contains("num_hidden_layers") && j.contains("text_config") && j["text_config"].is_object())
    j = j["text_config"];

  auto where = [&](const std::string& field) { return locate(file, text, field); };
  auto int_field = [&](const char* key, bool required, int fallback) -> int {
    if (!j.contains(key) || j[key].is_null()) {
      if (required)
        throw InputError(fmt::format("{}: missing required key \"{}\" (a positive integer); is this a decoder "
                                     "model's config.json?",
                                     file, key));
      return fallback;
    }
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<long long>() > std::numeric_limits<int>::max() ||
        v.get<long long>() < std::numeric_limits<int>::min())
      scenario_detail::fail(where, key, "an integer", v.dump());
    return v.get<int>();
  };
  auto num_field = [&](const char* key, double fallback) -> double {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    const auto& v = j[key];
    if (!v.is_number()) scenario_detail::fail(where, key, "a number", v.dump());
    return v.get<double>();
  };

  ModelShape m;
  if (j.contains("_name_or_path") && j["_name_or_path"].is_string() && !j["_name_or_path"].get<std::string>().empty())
    m.name = j["_name_or_path"].get<std::string>();
  else if (path.has_parent_path() && path.filename() == "config.json" && !path.parent_path().filename().empty())
    m.name = path.parent_path().filename().string();
  else if (j.contains("model_type") && j["model_type"].is_string())
    m.name = j["model_type"].get<std::string>();
  else
    m.name = path.stem().string();

  m.num_hidden_layers = int_field("num_hidden_layers", true, 0);
  m.hidden_size = int_field("hidden_size", true, 0);
  m.num_attention_heads = int_field("num_attention_heads", true, 0);
  m.num_key_value_heads = int_field("num_key_value_heads", false, 0);
  m.head_dim = int_field("head_dim", false, 0);
  m.vocab_size = int_field("vocab_size", true, 0);
  // Experts: gpt-oss/Mixtral say num_local_experts; Qwen3-MoE says num_experts with a
  // separate per-expert moe_intermediate_size.
  m.num_local_experts = int_field("num_local_experts", false, 0);
  if (m.num_local_experts == 0) m.num_local_experts = int_field("num_experts", false, 0);
  m.num_experts_per_tok = m.num_local_experts > 0 ? int_field("num_experts_per_tok", true, 0) : 0;
  if (m.num_local_experts > 0 && j.contains("moe_intermediate_size") && !j["moe_intermediate_size"].is_null())
    m.intermediate_size = int_field("moe_intermediate_size", true, 0);
  else
    m.intermediate_size = int_field("intermediate_size", true, 0);
  m.rms_norm_eps = num_field("rms_norm_eps", m.rms_norm_eps);
  m.rope_theta = num_field("rope_theta", m.rope_theta);
  m.sliding_window = int_field("sliding_window", false, 0);
  // Qwen2/Qwen3 state a window but switch it off with use_sliding_window: false.
  if (j.contains("use_sliding_window") && j["use_sliding_window"].is_boolean() && !j["use_sliding_window"].get<bool>())
    m.sliding_window = 0;
  // Issue 14: tied LM head, the architecture name and gpt-oss's SwiGLU clamp.
  if (j.contains("tie_word_embeddings") && !j["tie_word_embeddings"].is_null()) {
    if (!j["tie_word_embeddings"].is_boolean())
      scenario_detail::fail(where, "tie_word_embeddings", "true or false", j["tie_word_embeddings"].dump());
    m.tie_word_embeddings = j["tie_word_embeddings"].get<bool>();
  }
  if (j.contains("model_type") && j["model_type"].is_string()) m.model_type = j["model_type"].get<std::string>();
  m.swiglu_limit = num_field("swiglu_limit", 0.0);
  scenario_detail::check_model(m, where, "");
  return m;
}

}  // namespace syncscope
