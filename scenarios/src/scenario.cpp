#include "syncscope/scenario/scenario.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>

#include "checks.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope::scenario {

const char* fix_name(fixes::Fix fix) { return fixes::fix_spec(fix).name.c_str(); }

std::optional<fixes::Fix> parse_fix(std::string_view name) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (name == f.name) return f.id;
  return std::nullopt;
}

std::vector<std::string> fix_variants(fixes::Fix fix) { return fixes::fix_spec(fix).variants; }

const std::string& FixSelection::word(const std::string& key) const {
  if (auto it = words.find(key); it != words.end()) return it->second;
  for (const auto& w : fixes::fix_spec(fix).word_keys)
    if (w.key == key) return w.values.front();
  throw std::out_of_range(fmt::format("fixes.{} has no word key {}", fixes::fix_spec(fix).name, key));
}

double FixSelection::number(const std::string& key) const {
  if (auto it = numbers.find(key); it != numbers.end()) return it->second;
  for (const auto& n : fixes::fix_spec(fix).number_keys)
    if (n.key == key) return n.default_value;
  throw std::out_of_range(fmt::format("fixes.{} has no number key {}", fixes::fix_spec(fix).name, key));
}

const char* baseline_variant(fixes::Fix fix) { return fixes::fix_spec(fix).baseline().c_str(); }

namespace detail {

std::string fix_names(const char* last_sep) {
  const auto& r = fixes::fix_registry();
  std::string out;
  for (std::size_t i = 0; i < r.size(); ++i) out += (i == 0 ? "" : i + 1 == r.size() ? last_sep : ", ") + r[i].name;
  return out;
}

void fail(const Locator& where, const std::string& field, const std::string& expected, const std::string& got) {
  throw InputError(
      fmt::format("{}: {}: expected {}, got {}", printable(where(field)), printable(field), expected, printable(got)));
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

void in_range(const Locator& where, const std::string& field, long long v, const bounds::Range& r) {
  if (r.contains(static_cast<double>(v))) return;
  const bool below = static_cast<double>(v) < r.lo;
  fail(where, field,
       below && r.lo == 1   ? "a positive integer"
       : below && r.lo == 0 ? "a non-negative integer"
                            : bounds::describe_int(r),
       std::to_string(v));
}

namespace {

void positive(const Locator& where, const std::string& field, long long v) {
  if (v <= 0) fail(where, field, "a positive integer", std::to_string(v));
}

// A name that is printed (tables, CSV, JSON, HTML): UTF-8, printable, <= 128 characters.
void printable_name(const Locator& where, const std::string& field, const std::string& name) {
  if (auto problem = name_problem(name, bounds::kMaxNameChars))
    throw InputError(fmt::format("{}: {}: the name {}; use a printable UTF-8 name of at most {} characters",
                                 where(field), field, *problem, bounds::kMaxNameChars));
}

}  // namespace

void check_model(ModelShape& m, const Locator& where, const std::string& p) {
  if (!m.name.empty()) printable_name(where, p + "name", m.name);
  in_range(where, p + "num_hidden_layers", m.num_hidden_layers, bounds::kLayers);
  in_range(where, p + "hidden_size", m.hidden_size, bounds::kHiddenSize);
  in_range(where, p + "num_attention_heads", m.num_attention_heads, bounds::kHeads);
  // Hugging Face's convention: no num_key_value_heads means multi-head attention.
  if (m.num_key_value_heads == 0) m.num_key_value_heads = m.num_attention_heads;
  in_range(where, p + "num_key_value_heads", m.num_key_value_heads, bounds::kHeads);
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    fail(where, p + "num_key_value_heads",
         fmt::format("a divisor of num_attention_heads ({}) (grouped-query attention)", m.num_attention_heads),
         std::to_string(m.num_key_value_heads));
  if (m.head_dim == 0) {
    // Llama derives head_dim as hidden/heads; Qwen3 and gpt-oss state it (and differ).
    if (m.hidden_size % m.num_attention_heads != 0)
      throw InputError(fmt::format(
          "{}: {}head_dim: missing, and num_attention_heads ({}) does not divide hidden_size ({}): give head_dim",
          where(p + "head_dim"), p, m.num_attention_heads, m.hidden_size));
    m.head_dim = m.hidden_size / m.num_attention_heads;
  }
  in_range(where, p + "head_dim", m.head_dim, bounds::kHeadDim);
  // Checked here, where the file and position are known (the step's own check cannot name them).
  if (m.head_dim % 2 != 0)
    fail(where, p + "head_dim", "an even integer (RoPE rotates pairs of dimensions)", std::to_string(m.head_dim));
  in_range(where, p + "intermediate_size", m.intermediate_size, bounds::kIntermediateSize);
  in_range(where, p + "vocab_size", m.vocab_size, bounds::kVocabSize);
  if (m.num_local_experts < 0)
    fail(where, p + "num_local_experts", "a non-negative integer (0: dense)", std::to_string(m.num_local_experts));
  in_range(where, p + "num_local_experts", m.num_local_experts, bounds::kExperts);
  if (m.num_local_experts > 0) {
    if (m.num_experts_per_tok < 1 || m.num_experts_per_tok > m.num_local_experts)
      fail(where, p + "num_experts_per_tok",
           fmt::format("an integer in 1..num_local_experts ({})", m.num_local_experts),
           std::to_string(m.num_experts_per_tok));
  } else if (m.num_experts_per_tok != 0) {
    fail(where, p + "num_experts_per_tok", "no value for a dense model (num_local_experts is 0)",
         std::to_string(m.num_experts_per_tok));
  }
  if (!(m.rms_norm_eps > 0 && m.rms_norm_eps < 1))
    fail(where, p + "rms_norm_eps", "a number in (0, 1)", fmt::format("{}", m.rms_norm_eps));
  if (!bounds::kRopeTheta.contains(m.rope_theta))
    fail(where, p + "rope_theta", bounds::describe_number(bounds::kRopeTheta), fmt::format("{}", m.rope_theta));
  if (m.sliding_window < 0)
    fail(where, p + "sliding_window", "a non-negative integer (0: none)", std::to_string(m.sliding_window));
  in_range(where, p + "sliding_window", m.sliding_window, bounds::kSlidingWindow);
  check_model_training_keys(m, where, p);
}

void check_model_training_keys(const ModelShape& m, const Locator& where, const std::string& p) {
  // gpt-oss says 7.0; a clamp above 1e4 could not change a bf16 activation's fate.
  if (!(m.swiglu_limit >= 0 && m.swiglu_limit <= 1e4))
    fail(where, p + "swiglu_limit", "a number in [0, 10000] (0: no clamp)", fmt::format("{}", m.swiglu_limit));
}

void check_training(Scenario& s, const Locator& where) {
  auto& t = s.training;
  if (std::find(std::begin(kTrainingModes), std::end(kTrainingModes), t.mode) == std::end(kTrainingModes))
    fail(where, "training", "one of full, lora, qlora", "\"" + t.mode + "\"");
  if (!t.gradient_checkpointing.empty()) {
    const auto& g = t.gradient_checkpointing;
    if (std::find(std::begin(kGradientCheckpointing), std::end(kGradientCheckpointing), g) ==
        std::end(kGradientCheckpointing))
      fail(where, "gradient_checkpointing",
           "one of none (every layer's activations kept), full (layer inputs kept, layers recomputed), offload "
           "(Unsloth's: layer inputs in host memory)",
           "\"" + g + "\"");
    if (g == "offload" && !s.offload)
      fail(where, "gradient_checkpointing",
           "none or full with offload: false (offload moves the checkpoints to host memory); remove offload: false to "
           "offload",
           "\"offload\"");
    if (g != "offload" && s.offload)
      fail(where, "gradient_checkpointing",
           "offload while offload is on (offload: true, or the offload fix under test, checkpoints every layer in host "
           "memory); set gradient_checkpointing: offload or offload: false",
           "\"" + g + "\"");
  }
  if (t.optimizer != "adamw" && t.optimizer != "adamw_8bit")
    fail(where, "optimizer",
         "one of adamw (torch AdamW, fp32 moments), adamw_8bit (bitsandbytes AdamW8bit); the memory check counts its "
         "state",
         "\"" + t.optimizer + "\"");
  const auto& m = s.model;
  const int max_rank = std::min(m.hidden_size, std::min(m.intermediate_size, m.num_key_value_heads * m.head_dim));
  if (t.lora_rank < 1 || t.lora_rank > max_rank)
    fail(where, "lora.r",
         fmt::format("an integer in 1..{} (an adapter's rank cannot exceed the smallest projection width)", max_rank),
         std::to_string(t.lora_rank));
  if (!(t.lora_alpha > 0 && t.lora_alpha <= 1e6))
    fail(where, "lora.alpha", "a number in (0, 1e6] (scaling = alpha / r)", fmt::format("{}", t.lora_alpha));
  if (t.target_modules.empty()) fail(where, "lora.target_modules", "a non-empty list of module names", "an empty list");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < t.target_modules.size(); ++i) {
    const auto& n = t.target_modules[i];
    const std::string f = fmt::format("lora.target_modules[{}]", i);
    if (std::find(std::begin(kLoraModules), std::end(kLoraModules), n) == std::end(kLoraModules))
      fail(where, f, "one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj", "\"" + n + "\"");
    if (!seen.insert(n).second) fail(where, f, "each module once", "\"" + n + "\" again");
  }
  if (t.double_quant && t.mode != "qlora")
    fail(where, "lora.double_quant", "false unless training is qlora (it quantizes the NF4 absmax values)", "true");
  if (t.mode == "qlora" && (m.hidden_size % 2 != 0 || m.intermediate_size % 2 != 0))
    fail(where, "model.hidden_size",
         "even hidden and intermediate sizes for qlora (two 4-bit codes per byte, as bitsandbytes packs them)",
         fmt::format("{} and {}", m.hidden_size, m.intermediate_size));
}

void check_scenario(Scenario& s, const Locator& where) {
  if (s.name.empty()) fail(where, "name", "a non-empty name", "\"\"");
  printable_name(where, "name", s.name);
  // The name picks run's default output directory (out/<name>...): a name, never a path.
  if (s.name.find_first_of("/\\") != std::string::npos || s.name == "." || s.name == "..")
    throw InputError(
        fmt::format("{}: name: '{}' is a path, not a name: a scenario name holds no '/' or '\\' and is "
                    "not '.' or '..' (it names the default output directory out/<name>...); rename it",
                    where("name"), s.name));
  if (s.model.name.empty()) s.model.name = s.name;
  check_model(s.model, where, "model.");

  auto& b = s.batch;
  in_range(where, "batch.packed_tokens", b.packed_tokens, bounds::kTokens);
  if (b.distribution == "uniform") {
    in_range(where, "batch.min_len", b.min_len, bounds::kTokens);
    in_range(where, "batch.max_len", b.max_len, bounds::kTokens);
    if (b.max_len < b.min_len)
      fail(where, "batch.max_len", fmt::format("an integer >= batch.min_len ({})", b.min_len),
           std::to_string(b.max_len));
    if (!b.lengths.empty()) fail(where, "batch.lengths", "no lengths unless distribution is \"list\"", "a list");
  } else if (b.distribution == "fixed") {
    in_range(where, "batch.max_len", b.max_len, bounds::kTokens);
    if (b.packed_tokens % b.max_len != 0)
      fail(where, "batch.max_len",
           fmt::format("a divisor of batch.packed_tokens ({}) for distribution \"fixed\"", b.packed_tokens),
           std::to_string(b.max_len));
    if (!b.lengths.empty()) fail(where, "batch.lengths", "no lengths unless distribution is \"list\"", "a list");
  } else if (b.distribution == "list") {
    if (b.lengths.empty()) fail(where, "batch.lengths", "a non-empty list of positive integers", "nothing");
    long long sum = 0;
    for (std::size_t i = 0; i < b.lengths.size(); ++i) {
      positive(where, fmt::format("batch.lengths[{}]", i), b.lengths[i]);
      sum += b.lengths[i];
    }
    if (sum != b.packed_tokens)
      fail(where, "batch.lengths", fmt::format("lengths summing to batch.packed_tokens ({})", b.packed_tokens),
           fmt::format("lengths summing to {}", sum));
  } else {
    fail(where, "batch.distribution", "one of uniform, fixed, list", "\"" + b.distribution + "\"");
  }

  if (s.dtype != "bf16" && s.dtype != "fp16" && s.dtype != "fp32")
    fail(where, "dtype", "one of bf16, fp16, fp32", "\"" + s.dtype + "\"");
  if (s.host != "eager" && s.host != "cpp") fail(where, "host", "one of eager, cpp", "\"" + s.host + "\"");

  check_fix_selections(s, where);

  auto& m = s.measure;
  in_range(where, "measure.warmup_steps", m.warmup_steps, bounds::kWarmupSteps);
  in_range(where, "measure.repeat_steps", m.repeat_steps, bounds::kSteps);
  if (m.layers_override && (*m.layers_override < 1 || *m.layers_override > s.model.num_hidden_layers))
    fail(where, "measure.layers",
         fmt::format("an integer in 1..model.num_hidden_layers ({})", s.model.num_hidden_layers),
         std::to_string(*m.layers_override));
  for (std::size_t i = 0; i < m.layer_sweep.size(); ++i) {
    const int l = m.layer_sweep[i];
    const std::string lp = fmt::format("measure.layer_sweep[{}]", i);
    if (l < 1 || l > s.model.num_hidden_layers)
      fail(where, lp, fmt::format("an integer in 1..model.num_hidden_layers ({})", s.model.num_hidden_layers),
           std::to_string(l));
    if (i > 0 && l <= m.layer_sweep[i - 1])
      fail(where, lp, fmt::format("a value above the previous one ({}): the sweep is increasing", m.layer_sweep[i - 1]),
           std::to_string(l));
  }
  check_training(s, where);
}

}  // namespace detail

using scenario::detail::fail;
using scenario::detail::Locator;

namespace {

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: {
      const std::string& v = n.Scalar();
      return n.Tag() == "!" ? "\"" + v + "\"" : v;
    }
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "an undefined value";
  }
}

std::string mark_text(const std::string& file, const YAML::Mark& m) {
  if (m.is_null()) return file;
  return fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
}

// Reads one YAML document, remembering where each field sits so that errors found later
// (cross-field checks) still point at the right line and column.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Locator locator() const {
    return [this](const std::string& field) {
      if (auto it = marks_.find(field); it != marks_.end()) return mark_text(file_, it->second);
      // A list element error with no mark of its own points at the list.
      if (auto pos = field.rfind('['); pos != std::string::npos)
        if (auto it = marks_.find(field.substr(0, pos)); it != marks_.end()) return mark_text(file_, it->second);
      return file_;
    };
  }

  [[noreturn]] void fail_at(const YAML::Node& n, const std::string& field, const std::string& expected) const {
    throw InputError(
        fmt::format("{}: {}: expected {}, got {}", mark_text(file_, n.Mark()), field, expected, describe(n)));
  }

  // A mapping's entries in document order, refusing duplicate and unknown keys.
  std::vector<std::pair<std::string, YAML::Node>> entries(const YAML::Node& map, const std::string& path,
                                                          const std::vector<std::string>& allowed) {
    if (!map.IsMap()) fail_at(map, path.empty() ? "document" : path, "a mapping with keys: " + keys(allowed));
    std::vector<std::pair<std::string, YAML::Node>> out;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies: yaml-cpp's iterator hands out a temporary pair, gone after the expression.
      const YAML::Node k = it->first;
      const YAML::Node value = it->second;
      if (!k.IsScalar()) fail_at(k, path.empty() ? "key" : path + " key", "a plain key");
      const std::string key = k.Scalar();
      const std::string full = path.empty() ? key : path + "." + key;
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        throw InputError(fmt::format("{}: {}: unknown key; expected one of: {}", mark_text(file_, k.Mark()),
                                     printable(full), keys(allowed)));
      if (!seen.insert(key).second)
        throw InputError(fmt::format("{}: {}: duplicate key; give it once", mark_text(file_, k.Mark()), full));
      marks_[full] = value.Mark();
      out.emplace_back(key, value);
    }
    return out;
  }

  long long integer(const YAML::Node& n, const std::string& field, const char* form = "an integer") {
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& v = n.Scalar();
      long long out = 0;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
      if (ec == std::errc() && ptr == v.data() + v.size() && !v.empty()) return out;
    }
    fail_at(n, field, form);
  }

  int int32(const YAML::Node& n, const std::string& field, const char* form = "an integer") {
    const long long v = integer(n, field, form);
    if (v < INT32_MIN || v > INT32_MAX) fail_at(n, field, std::string(form) + " that fits in 32 bits");
    return static_cast<int>(v);
  }

  double number(const YAML::Node& n, const std::string& field, const char* form = "a number") {
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& v = n.Scalar();
      double out = 0;
      const char* b = v.data();
      if (!v.empty() && v[0] == '+') ++b;  // YAML allows "+1e6"
      auto [ptr, ec] = std::from_chars(b, v.data() + v.size(), out);
      if (ec == std::errc() && ptr == v.data() + v.size() && b != ptr && std::isfinite(out)) return out;
    }
    fail_at(n, field, form);
  }

  bool boolean(const YAML::Node& n, const std::string& field) {
    if (n.IsScalar() && n.Tag() != "!") {
      if (n.Scalar() == "true") return true;
      if (n.Scalar() == "false") return false;
    }
    fail_at(n, field, "true or false");
  }

  std::string string(const YAML::Node& n, const std::string& field, const char* form = "a string") {
    if (!n.IsScalar()) fail_at(n, field, form);
    return n.Scalar();
  }

  std::vector<int> int_list(const YAML::Node& n, const std::string& field, const char* form) {
    if (!n.IsSequence()) fail_at(n, field, form);
    std::vector<int> out;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const std::string f = fmt::format("{}[{}]", field, i);
      marks_[f] = n[i].Mark();
      out.push_back(int32(n[i], f, "an integer"));
    }
    return out;
  }

  std::vector<std::string> string_list(const YAML::Node& n, const std::string& field, const std::string& form) {
    if (!n.IsSequence()) fail_at(n, field, form);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const std::string f = fmt::format("{}[{}]", field, i);
      marks_[f] = n[i].Mark();
      out.push_back(string(n[i], f, "a variant name"));
    }
    return out;
  }

  const std::string& file() const { return file_; }

 private:
  static std::string keys(const std::vector<std::string>& allowed) {
    std::string out;
    for (std::size_t i = 0; i < allowed.size(); ++i) out += (i ? ", " : "") + allowed[i];
    return out;
  }

  std::string file_;
  std::map<std::string, YAML::Mark> marks_;
};

// The model keys of training as Unsloth does it (kept apart from the original ones).
void read_model_training_keys(Reader& r, const std::string& key, const YAML::Node& v, const std::string& f,
                              ModelShape& m) {
  if (key == "tie_word_embeddings") m.tie_word_embeddings = r.boolean(v, f);
  else if (key == "model_type")
    m.model_type = r.string(v, f, "a Hugging Face model_type such as llama, qwen3, gpt_oss");
  else if (key == "swiglu_limit") m.swiglu_limit = r.number(v, f, "a non-negative number (0: no clamp)");
}

// `training: full | lora | qlora` and `lora: {r, alpha, target_modules, double_quant}`.
void read_lora(Reader& r, const YAML::Node& node, TrainingSpec& t) {
  static const std::vector<std::string> allowed = {"r", "alpha", "target_modules", "double_quant"};
  for (auto& [key, v] : r.entries(node, "lora", allowed)) {
    const std::string f = "lora." + key;
    if (key == "r") t.lora_rank = r.int32(v, f, "a positive integer (the adapter rank)");
    else if (key == "alpha") t.lora_alpha = r.number(v, f, "a positive number (scaling = alpha / r)");
    else if (key == "target_modules")
      t.target_modules = r.string_list(v, f, "a list of: q_proj k_proj v_proj o_proj gate_proj up_proj down_proj");
    else if (key == "double_quant") t.double_quant = r.boolean(v, f);
  }
}

void read_model(Reader& r, const YAML::Node& node, ModelShape& m) {
  static const std::vector<std::string> allowed = {
      "name",         "num_hidden_layers", "hidden_size",    "num_attention_heads", "num_key_value_heads",
      "head_dim",     "intermediate_size", "vocab_size",     "num_local_experts",   "num_experts_per_tok",
      "rms_norm_eps", "rope_theta",        "sliding_window", "tie_word_embeddings", "model_type",
      "swiglu_limit"};
  std::set<std::string> given;
  for (auto& [key, v] : r.entries(node, "model", allowed)) {
    const std::string f = "model." + key;
    given.insert(key);
    if (key == "name") m.name = r.string(v, f, "a model name");
    else if (key == "num_hidden_layers") m.num_hidden_layers = r.int32(v, f, "a positive integer");
    else if (key == "hidden_size") m.hidden_size = r.int32(v, f, "a positive integer");
    else if (key == "num_attention_heads") m.num_attention_heads = r.int32(v, f, "a positive integer");
    else if (key == "num_key_value_heads") m.num_key_value_heads = r.int32(v, f, "a positive integer");
    else if (key == "head_dim") m.head_dim = r.int32(v, f, "a positive integer");
    else if (key == "intermediate_size") m.intermediate_size = r.int32(v, f, "a positive integer");
    else if (key == "vocab_size") m.vocab_size = r.int32(v, f, "a positive integer");
    else if (key == "num_local_experts") m.num_local_experts = r.int32(v, f, "a non-negative integer");
    else if (key == "num_experts_per_tok") m.num_experts_per_tok = r.int32(v, f, "a positive integer");
    else if (key == "rms_norm_eps") m.rms_norm_eps = r.number(v, f, "a number in (0, 1)");
    else if (key == "rope_theta") m.rope_theta = r.number(v, f, "a positive number");
    else if (key == "sliding_window") m.sliding_window = r.int32(v, f, "a non-negative integer");
    else read_model_training_keys(r, key, v, f, m);
  }
  for (const char* req : {"num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size", "vocab_size"})
    if (!given.count(req))
      throw InputError(fmt::format(
          "{}: model: missing required key {} (Hugging Face config name; see docs/sources.md#model-shapes's table)",
          mark_text(r.file(), node.Mark()), req));
}

void read_batch(Reader& r, const YAML::Node& node, BatchSpec& b) {
  static const std::vector<std::string> allowed = {"packed_tokens", "distribution", "min_len",
                                                   "max_len",       "lengths",      "seed"};
  bool distribution_given = false;
  for (auto& [key, v] : r.entries(node, "batch", allowed)) {
    const std::string f = "batch." + key;
    if (key == "packed_tokens") b.packed_tokens = r.int32(v, f, "a positive integer");
    else if (key == "distribution") {
      b.distribution = r.string(v, f, "one of uniform, fixed, list");
      distribution_given = true;
    } else if (key == "min_len") b.min_len = r.int32(v, f, "a positive integer");
    else if (key == "max_len") b.max_len = r.int32(v, f, "a positive integer");
    else if (key == "lengths") b.lengths = r.int_list(v, f, "a list of positive integers");
    else if (key == "seed") {
      const long long seed = r.integer(v, f, "a non-negative integer");
      if (seed < 0) r.fail_at(v, f, "a non-negative integer");
      b.seed = static_cast<std::uint64_t>(seed);
    }
  }
  // Lengths alone say what they are.
  if (!distribution_given && !b.lengths.empty()) b.distribution = "list";
}

void read_fixes(Reader& r, const YAML::Node& node, std::vector<FixSelection>& fixes) {
  std::vector<std::string> allowed;
  for (const fixes::FixSpec& f : fixes::fix_registry()) allowed.push_back(f.name);
  for (auto& [key, v] : r.entries(node, "fixes", allowed)) {
    FixSelection sel;
    sel.fix = *parse_fix(key);
    const std::string fp = "fixes." + key;
    std::vector<std::string> keys = {"variants", "tolerance"};
    const fixes::FixSpec& spec = fixes::fix_spec(sel.fix);
    keys.insert(keys.end(), spec.scenario_keys.begin(), spec.scenario_keys.end());
    auto word_key = [&](const std::string& k) {
      return std::find_if(spec.word_keys.begin(), spec.word_keys.end(),
                          [&](const fixes::FixSpec::WordKey& w) { return w.key == k; });
    };
    bool variants_given = false;
    for (auto& [k, fv] : r.entries(v, fp, keys)) {
      const std::string f = fp + "." + k;
      if (k == "variants") {
        std::string form = "a list of variant names from: ";
        for (auto& n : fix_variants(sel.fix)) form += n + " ";
        sel.variants = r.string_list(fv, f, form);
        variants_given = true;
      } else if (k == "tolerance") {
        sel.tolerance = r.number(fv, f, "a relative error in (0, 10], e.g. 0.15");
      } else if (auto w = word_key(k); w != spec.word_keys.end()) {
        const std::string form = "one of " + detail::join(w->values);
        sel.words[k] = r.string(fv, f, form.c_str());  // checked against the list in validate
      } else {
        sel.numbers[k] = r.number(fv, f, "a number");  // checked in validate (FixSpec::number_keys)
      }
    }
    if (!variants_given) sel.variants = fix_variants(sel.fix);  // all of them
    fixes.push_back(std::move(sel));
  }
}

void read_measure(Reader& r, const YAML::Node& node, MeasureSpec& m) {
  static const std::vector<std::string> allowed = {"warmup_steps", "repeat_steps", "layers", "layer_sweep"};
  for (auto& [key, v] : r.entries(node, "measure", allowed)) {
    const std::string f = "measure." + key;
    if (key == "warmup_steps") m.warmup_steps = r.int32(v, f, "a non-negative integer");
    else if (key == "repeat_steps") m.repeat_steps = r.int32(v, f, "a positive integer");
    else if (key == "layers") m.layers_override = r.int32(v, f, "a positive integer");
    else if (key == "layer_sweep") m.layer_sweep = r.int_list(v, f, "an increasing list of layer counts");
  }
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& path) {
  return parse_scenario(read_file(path, bounds::kMaxConfigBytes), path);
}

Scenario parse_scenario(const std::string& text, const std::filesystem::path& path) {
  const std::string file = path.string();
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: not valid YAML: {}", mark_text(file, e.mark), e.msg));
  }
  Reader r(file);
  Scenario s;
  s.source = path;
  s.name = path.stem().string();
  static const std::vector<std::string> allowed = {"name",
                                                   "description",
                                                   "model",
                                                   "batch",
                                                   "dtype",
                                                   "offload",
                                                   "fixes",
                                                   "measure",
                                                   "training",
                                                   "lora",
                                                   "host",
                                                   "optimizer",
                                                   "gradient_checkpointing"};
  bool have_model = false, have_fixes = false;
  if (!root.IsDefined() || root.IsNull())
    throw InputError(fmt::format("{}: empty scenario; expected a mapping with keys model, batch, fixes, ...", file));
  for (auto& [key, v] : r.entries(root, "", allowed)) {
    if (key == "name") s.name = r.string(v, key, "a scenario name");
    else if (key == "description") (void)r.string(v, key, "a one-line description");
    else if (key == "model") {
      read_model(r, v, s.model);
      have_model = true;
    } else if (key == "batch") read_batch(r, v, s.batch);
    else if (key == "dtype") s.dtype = r.string(v, key, "one of bf16, fp16, fp32");
    else if (key == "offload") s.offload = r.boolean(v, key);
    else if (key == "fixes") {
      read_fixes(r, v, s.fixes);
      have_fixes = true;
    } else if (key == "measure") read_measure(r, v, s.measure);
    else if (key == "training") s.training.mode = r.string(v, key, "one of full, lora, qlora");
    else if (key == "lora") read_lora(r, v, s.training);
    else if (key == "host") s.host = r.string(v, key, "one of eager, cpp");
    else if (key == "optimizer") s.training.optimizer = r.string(v, key, "one of adamw, adamw_8bit");
    else if (key == "gradient_checkpointing")
      s.training.gradient_checkpointing = r.string(v, key, "one of none, full, offload");
  }
  if (!have_model)
    throw InputError(fmt::format("{}: missing required key model (the model shape, Hugging Face config names)", file));
  if (!have_fixes)
    throw InputError(fmt::format("{}: missing required key fixes ({})", file, detail::fix_names(" and/or ")));
  // What selecting a fix implies where the file does not say (offload: offload: true).
  auto given = [&root](const std::string& key) {
    for (auto it = root.begin(); it != root.end(); ++it)
      if (it->first.Scalar() == key) return true;
    return false;
  };
  for (std::size_t i = 0; i < s.fixes.size(); ++i)
    if (const auto& imply = fixes::fix_spec(s.fixes[i].fix).imply_scenario) imply(s, given);
  // gradient_checkpointing: offload is offload: true.
  if (!given("offload") && s.training.gradient_checkpointing == "offload") s.offload = true;
  scenario::detail::check_scenario(s, r.locator());
  return s;
}

void validate_scenario(const Scenario& scenario) {
  Scenario copy = scenario;
  const std::string file =
      scenario.source.empty() ? std::string("<scenario ") + scenario.name + ">" : scenario.source.string();
  scenario::detail::check_scenario(copy, [file](const std::string&) { return file; });
}

void replace_model(Scenario& scenario, const ModelShape& model, const std::filesystem::path& config_path) {
  Scenario copy = scenario;
  copy.model = model;
  if (copy.model.name.empty()) copy.model.name = scenario.model.name;
  const std::string file = config_path.string();
  const std::string scen = scenario.source.empty() ? scenario.name : scenario.source.string();
  scenario::detail::check_scenario(copy, [file, scen](const std::string& field) {
    // Model fields come from the config; the rest from the scenario.
    return field.rfind("model.", 0) == 0 ? file : scen + " (with model from " + file + ")";
  });
  scenario = std::move(copy);
}

std::vector<int> sequence_lengths(const BatchSpec& batch) {
  std::vector<int> out;
  if (batch.packed_tokens <= 0) return out;
  if (batch.distribution == "list") return batch.lengths;
  if (batch.distribution == "fixed") {
    SYNCSCOPE_INPUT_ERROR_IF(batch.max_len <= 0, "batch.max_len must be positive");
    for (int left = batch.packed_tokens; left > 0; left -= batch.max_len) out.push_back(std::min(left, batch.max_len));
    return out;
  }
  SYNCSCOPE_INPUT_ERROR_IF(batch.min_len <= 0 || batch.max_len < batch.min_len,
                           "batch: need 0 < min_len <= max_len for distribution uniform");
  // mt19937_64's output sequence is fixed by the standard; the reduction to a range is ours
  // (std::uniform_int_distribution differs between standard libraries), so lengths are the
  // same on every platform. Modulo bias is below 2^-40 for these ranges.
  std::mt19937_64 rng(batch.seed);
  const auto span = static_cast<std::uint64_t>(batch.max_len - batch.min_len + 1);
  int left = batch.packed_tokens;
  while (left > 0) {
    const int len = batch.min_len + static_cast<int>(rng() % span);
    out.push_back(std::min(len, left));  // the last sequence takes what remains
    left -= out.back();
  }
  return out;
}

}  // namespace syncscope::scenario
