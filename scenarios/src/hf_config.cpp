// load_hf_config: a model's own Hugging Face config.json. Unknown keys are normal there
// (rope_scaling, torch_dtype, ...); the shape keys we need must be present and well typed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "checks.hpp"
#include "hf_keys.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/scenario/model_traits.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::scenario {

namespace {

struct Position {
  int line = 1, column = 1;
};

// Where each key of the config sits ("num_hidden_layers", "text_config.hidden_size"), found
// by one pass over text that already parsed as JSON. A key given twice in one object is an
// InputError naming both places: nlohmann::json keeps the last silently, YAML refuses, and
// a config that says two things is not one we can trust either way.
std::map<std::string, Position> key_positions(const std::string& file, const std::string& text) {
  struct Frame {
    bool object = false;
    bool expect_key = false;
    std::string path;  // dotted path of this container ("" at the top)
    std::string last_key;
    std::map<std::string, Position> keys;
  };
  std::map<std::string, Position> out;
  std::vector<Frame> stack;
  Position pos;
  auto advance = [&](char c) {
    if (c == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  };
  auto child_path = [&]() {
    if (stack.empty()) return std::string();
    const Frame& f = stack.back();
    if (!f.object) return f.path;  // array elements are not named here
    return f.path.empty() ? f.last_key : f.path + "." + f.last_key;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const Position start = pos;
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      const std::string raw = text.substr(i, j + 1 - i);
      for (std::size_t k = i; k <= j && k < text.size(); ++k) advance(text[k]);
      i = j;
      if (!stack.empty() && stack.back().object && stack.back().expect_key) {
        Frame& f = stack.back();
        std::string key;
        try {
          key = nlohmann::json::parse(raw).get<std::string>();  // decodes escapes: "\u0061" is "a"
        } catch (const std::exception&) {
          key = raw;
        }
        const std::string full = f.path.empty() ? key : f.path + "." + key;
        if (auto it = f.keys.find(key); it != f.keys.end())
          throw InputError(fmt::format("{}:{}:{}: {}: duplicate key (first at line {}, column {}); give it once", file,
                                       start.line, start.column, full, it->second.line, it->second.column));
        f.keys.emplace(key, start);
        out.emplace(full, start);
        f.last_key = key;
        f.expect_key = false;
      }
      continue;
    }
    if (c == '{' || c == '[') {
      Frame f;
      f.object = c == '{';
      f.expect_key = f.object;
      f.path = child_path();
      stack.push_back(std::move(f));
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    } else if (c == ',' && !stack.empty() && stack.back().object) {
      stack.back().expect_key = true;
    }
    advance(c);
  }
  return out;
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

// The model's name from the config: a printed name, so one that is not printable (or too
// long, as a cache path can be) is replaced by its last path component, then by
// model_type, then by the file's directory name. The name is not a shape field: a config is
// never refused for it.
bool generic_folder(const std::string& dir) {
  static const char* const kGeneric[] = {"cfg",     "config", "configs", "model",  "models",     "tmp",
                                         "temp",    "hf",     "out",     "output", "checkpoint", "checkpoints",
                                         "weights", "data",   "input",   ".",      ".."};
  for (const char* g : kGeneric)
    if (dir == g) return true;
  return false;
}

std::string model_name(const nlohmann::json& j, const std::filesystem::path& path) {
  std::vector<std::string> candidates;
  if (j.contains("_name_or_path") && j["_name_or_path"].is_string()) {
    const std::string n = j["_name_or_path"].get<std::string>();
    candidates.push_back(n);
    while (!n.empty() && candidates.back().size() > 1 && candidates.back().back() == '/') candidates.back().pop_back();
    const auto slash = candidates.back().rfind('/');
    if (slash != std::string::npos) candidates.push_back(candidates.back().substr(slash + 1));
  }
  if (path.has_parent_path() && path.filename() == "config.json" && !path.parent_path().filename().empty()) {
    // The Hugging Face cache keeps a model's files in models--ORG--NAME/snapshots/HASH/.
    const std::filesystem::path snap = path.parent_path().parent_path();
    const std::string repo = snap.parent_path().filename().string();
    if (snap.filename() == "snapshots" && repo.rfind("models--", 0) == 0) {
      const auto sep = repo.rfind("--");
      if (sep != std::string::npos && sep + 2 < repo.size() && sep >= 8) candidates.push_back(repo.substr(sep + 2));
    }
    // A folder with a generic name ("cfg", "config") does not name the model: the
    // model_type and the shape do better (generic_name()).
    const std::string dir = path.parent_path().filename().string();
    if (!generic_folder(dir)) candidates.push_back(dir);
  }
  // No name in the file or its place: the family and the shape ("llama-32L-4096H"), which a
  // results.csv row can be matched with; the file's stem only when even that is missing.
  if (j.contains("model_type") && j["model_type"].is_string()) {
    std::string shaped = j["model_type"].get<std::string>();
    if (j.contains("num_hidden_layers") && j["num_hidden_layers"].is_number_integer() && j.contains("hidden_size") &&
        j["hidden_size"].is_number_integer())
      shaped += fmt::format("-{}L-{}H", j["num_hidden_layers"].get<long long>(), j["hidden_size"].get<long long>());
    candidates.push_back(shaped);
  }
  candidates.push_back(path.stem().string());
  for (const auto& c : candidates)
    if (!name_problem(c, bounds::kMaxNameChars)) return c;
  return "model";
}

// layer_types: one entry per layer, full, sliding or chunked attention (Gemma 3, Llama 4).
void read_layer_types(const nlohmann::json& j, const scenario::detail::Locator& where, int layers, TraitInputs& in) {
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    const auto& lt = j["layer_types"];
    const std::string expected = fmt::format(
        "a list of {} entries (num_hidden_layers), each \"full_attention\", \"sliding_attention\" or "
        "\"chunked_attention\"",
        layers);
    if (!lt.is_array() || lt.size() != static_cast<std::size_t>(std::max(0, layers)))
      scenario::detail::fail(where, "layer_types", expected,
                             lt.is_array() ? fmt::format("{} entries", lt.size())
                                           : lt.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::vector<bool> sliding, chunked;
    for (std::size_t i = 0; i < lt.size(); ++i) {
      const std::string v = lt[i].is_string() ? lt[i].get<std::string>() : "";
      if (v != "full_attention" && v != "sliding_attention" && v != "chunked_attention")
        throw InputError(fmt::format(
            "{}: layer_types[{}]: expected \"full_attention\", \"sliding_attention\" or \"chunked_attention\", "
            "got {} (syncscope models softmax attention only)",
            where("layer_types"), i, lt[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
      sliding.push_back(v == "sliding_attention");
      chunked.push_back(v == "chunked_attention");
    }
    in.layer_types = std::move(sliding);
    if (std::find(chunked.begin(), chunked.end(), true) != chunked.end()) in.layer_chunked = std::move(chunked);
  }
}

// The known family of the config's model_type (the outer one when the inner is unknown), or "".
std::string config_family(const nlohmann::json& j, const std::string& outer_type) {
  const std::string inner =
      j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
  if (auto f = model_family(inner)) return *f;
  return model_family(outer_type).value_or("");
}

}  // namespace

ModelShape load_hf_config(const std::filesystem::path& path) {
  return parse_hf_config(read_file(path, bounds::kMaxConfigBytes), path);
}

ModelShape parse_hf_config(const std::string& text, const std::filesystem::path& path) {
  const std::string file = path.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}:{}: not valid JSON (byte {}): {}", file,
                                 line_col(text, e.byte > 0 ? e.byte - 1 : 0), e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406, a number beyond a double ("1e400"): bad input, not a crash.
    throw InputError(fmt::format("{}: not valid JSON: {}", file, e.what()));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object (a Hugging Face config.json)", file));
  const std::map<std::string, Position> positions = key_positions(file, text);
  std::string prefix;
  // The outer model_type names the family when the nested text config has none (Gemma 3's
  // multimodal config says "gemma3" outside, "gemma3_text" inside).
  std::string outer_type;
  if (j.contains("model_type") && j["model_type"].is_string()) outer_type = j["model_type"].get<std::string>();
  // Multimodal configs nest the language model's shape (e.g. Llama 4, Gemma 3).
  nlohmann::json outer_vision = nlohmann::json::object();
  std::vector<std::string> text_notes;
  if (!j.contains("num_hidden_layers") && j.contains("text_config") && j["text_config"].is_object()) {
    if (j.contains("vision_config")) outer_vision["vision_config"] = j["vision_config"];
    nlohmann::json inner = j["text_config"];
    j = std::move(inner);
    prefix = "text_config.";
    const std::string inner_type =
        j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
    const auto fam = model_family(inner_type) ? model_family(inner_type) : model_family(outer_type);
    if (fam) text_notes = detail::apply_text_defaults(j, *fam);  // before the required keys are read
  }

  auto where = [&](const std::string& field) {
    auto it = positions.find(prefix + field);
    if (it == positions.end()) return file;
    return fmt::format("{}:{}:{}", file, it->second.line, it->second.column);
  };
  auto int_field = [&](const char* key, bool required, int fallback) -> int {
    if (!j.contains(key) || j[key].is_null()) {
      if (required)
        throw InputError(
            fmt::format("{}: missing required key \"{}\" (a positive integer); is this a decoder "
                        "model's config.json?",
                        file, key));
      return fallback;
    }
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<long long>() > std::numeric_limits<int>::max() ||
        v.get<long long>() < std::numeric_limits<int>::min())
      scenario::detail::fail(where, key, "an integer",
                             v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return v.get<int>();
  };
  auto num_field = [&](const char* key, double fallback) -> double {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    const auto& v = j[key];
    if (!v.is_number())
      scenario::detail::fail(where, key, "a number", v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return v.get<double>();
  };

  {
    // Before the shape keys: a state-space or hybrid config is refused for what it is.
    std::string type =
        j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : outer_type;
    detail::refuse_unmodellable(j, file, type, where);
  }
  ModelShape m;
  m.name = model_name(j, path);

  m.num_hidden_layers = int_field("num_hidden_layers", true, 0);
  m.hidden_size = int_field("hidden_size", true, 0);
  m.num_attention_heads = int_field("num_attention_heads", true, 0);
  m.num_key_value_heads = int_field("num_key_value_heads", false, 0);
  m.head_dim = int_field("head_dim", false, 0);
  m.vocab_size = int_field("vocab_size", true, 0);
  // Experts: gpt-oss/Mixtral say num_local_experts; Qwen3-MoE says num_experts with a
  // separate per-expert moe_intermediate_size; DeepSeek's classes define them when absent.
  m.num_local_experts = int_field("num_local_experts", false, 0);
  if (m.num_local_experts == 0) m.num_local_experts = int_field("num_experts", false, 0);
  if (m.num_local_experts == 0) m.num_local_experts = int_field("n_routed_experts", false, 0);  // DeepSeek
  auto expert_defaults = detail::read_routed_experts({j, file, where}, m, config_family(j, outer_type));
  if (m.num_local_experts > 0 && j.contains("moe_intermediate_size") && !j["moe_intermediate_size"].is_null())
    m.intermediate_size = int_field("moe_intermediate_size", true, 0);
  else m.intermediate_size = int_field("intermediate_size", true, 0);
  m.rms_norm_eps = num_field("rms_norm_eps", m.rms_norm_eps);
  m.rope_theta = num_field("rope_theta", m.rope_theta);
  if (j.contains("model_type") && j["model_type"].is_string()) m.model_type = j["model_type"].get<std::string>();
  if (m.model_type.empty() || (!model_family(m.model_type) && model_family(outer_type))) m.model_type = outer_type;
  m.swiglu_limit = num_field("swiglu_limit", 0.0);
  // What the config class means beyond the shape (model_traits.hpp). A key that
  // is absent leaves the class's default; tie_word_embeddings, the window and its layout
  // are read here and the family's defaults applied by resolve_model_traits().
  TraitInputs in;
  in.model_type = m.model_type;
  in.num_hidden_layers = m.num_hidden_layers;
  in.moe = m.num_local_experts > 0;
  in.qwen_moe_naming = in.moe && j.contains("num_experts");
  auto bool_field = [&](const char* key) -> std::optional<bool> {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_boolean()) scenario::detail::fail(where, key, "true or false", j[key].dump());
    return j[key].get<bool>();
  };
  auto opt_int = [&](const char* key) -> std::optional<int> {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    return int_field(key, false, 0);
  };
  auto opt_num = [&](const char* key) -> std::optional<double> {
    if (!j.contains(key)) return std::nullopt;
    return num_field(key, 0.0);  // null: no soft-capping (Gemma 3's default)
  };
  in.class_defaults = std::move(expert_defaults);
  in.tie_word_embeddings = bool_field("tie_word_embeddings");
  in.attention_bias = bool_field("attention_bias");
  in.mlp_bias = bool_field("mlp_bias");
  in.use_sliding_window = bool_field("use_sliding_window");
  in.sliding_window_given = j.contains("sliding_window");
  in.sliding_window = int_field("sliding_window", false, 0);
  if (in.sliding_window < 0)
    scenario::detail::fail(where, "sliding_window", "a positive integer or null", std::to_string(in.sliding_window));
  in.max_window_layers = opt_int("max_window_layers");
  in.sliding_window_pattern = opt_int("sliding_window_pattern");
  if (in.sliding_window_pattern && *in.sliding_window_pattern < 1)
    scenario::detail::fail(where, "sliding_window_pattern", "a positive integer",
                           std::to_string(*in.sliding_window_pattern));
  in.attn_logit_softcapping = opt_num("attn_logit_softcapping");
  in.final_logit_softcapping = opt_num("final_logit_softcapping");
  read_layer_types(j, where, m.num_hidden_layers, in);
  m.sliding_window = in.sliding_window;
  scenario::detail::check_model(m, where, "");  // bounds num_hidden_layers before a per-layer list
  in.num_hidden_layers = m.num_hidden_layers;
  // Experts, dense layers, MLA, chunks: read with the family's config-class defaults, the
  // closest family's for an unknown model_type (resolve_model_traits() names it and every
  // key so defaulted).
  in.mla = j.contains("kv_lora_rank") && !j["kv_lora_rank"].is_null();
  detail::read_architecture(detail::HfKeys{j, file, where}, m, in, resolved_family(in));
  detail::read_vision_tower(outer_vision, outer_type, m);
  scenario::detail::check_model(m, where, "");  // MLA's head_dim, within bounds
  ModelTraits read = std::move(m.traits);
  const ResolvedTraits r = resolve_model_traits(in);
  m.traits = r.traits;
  for (auto& n : text_notes) m.traits.notes.push_back(std::move(n));
  for (auto& n : read.notes) m.traits.notes.push_back(std::move(n));
  m.traits.unmodelled = std::move(read.unmodelled);
  m.traits.defaulted = detail::class_defaults_warning(in.class_defaults, config_family(j, outer_type));
  m.tie_word_embeddings = r.tie_word_embeddings;
  m.sliding_window = r.sliding_window;
  return m;
}

}  // namespace syncscope::scenario
