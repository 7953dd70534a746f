#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <regex>
#include <set>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

std::filesystem::path scenario_file(const std::string& name) { return test::source_dir() / "scenarios" / name; }

std::filesystem::path write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  auto p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// A valid scenario; tests replace one line to break it.
const char* kValid = R"(name: t
model:
  num_hidden_layers: 4
  hidden_size: 256
  num_attention_heads: 8
  num_key_value_heads: 4
  intermediate_size: 512
  vocab_size: 1000
batch:
  packed_tokens: 512
  min_len: 16
  max_len: 128
fixes:
  packing:
    variants: [rebuild, cached]
measure:
  warmup_steps: 0
  repeat_steps: 2
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// Loads `text` and returns the InputError message ("" when it loaded).
std::string load_error(const std::string& text) {
  test::TempDir dir;
  auto p = write(dir, "x.yaml", text);
  try {
    scenario::load_scenario(p);
  } catch (const InputError& e) {
    std::string msg = e.what();
    // Make the message independent of the temp dir.
    auto pos = msg.find(p.string());
    if (pos != std::string::npos) msg.replace(pos, p.string().size(), "x.yaml");
    return msg;
  }
  return "";
}

TEST(Scenario, ValidBaseLoadsWithDefaults) {
  test::TempDir dir;
  scenario::Scenario s = scenario::load_scenario(write(dir, "x.yaml", kValid));
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.model.name, "t");          // defaults to the scenario's name
  EXPECT_EQ(s.model.head_dim, 256 / 8);  // Llama convention when head_dim is absent
  EXPECT_EQ(s.layers(), 4);
  ASSERT_EQ(s.fixes.size(), 1u);
  EXPECT_EQ(s.fixes[0].fix, fixes::packing::kFix);
  EXPECT_EQ(s.fixes[0].variants, (std::vector<std::string>{"rebuild", "cached"}));
  EXPECT_EQ(s.dtype, "bf16");
  EXPECT_FALSE(s.offload);
}

// Shapes from reference/docs/sources.md#model-shapes's table; the files must agree with it.
struct Shape {
  const char* file;
  int layers, hidden, heads, kv, head_dim, inter, experts, topk, vocab;
};

TEST(Scenario, ShippedScenariosMatchPublishedShapes) {
  const Shape shapes[] = {
      {"llama-3.2-1b.yaml", 16, 2048, 32, 8, 64, 8192, 0, 0, 128256},
      {"qwen3-0.6b.yaml", 28, 1024, 16, 8, 128, 3072, 0, 0, 151936},
      {"qwen3-0.6b-lsweep.yaml", 28, 1024, 16, 8, 128, 3072, 0, 0, 151936},
      {"qwen3-14b.yaml", 40, 5120, 40, 8, 128, 17408, 0, 0, 151936},
      {"qwen3-14b-qlora.yaml", 40, 5120, 40, 8, 128, 17408, 0, 0, 151936},
      {"gpt-oss-20b.yaml", 24, 2880, 64, 8, 64, 2880, 32, 4, 201088},
  };
  for (const auto& sh : shapes) {
    SCOPED_TRACE(sh.file);
    scenario::Scenario s = scenario::load_scenario(scenario_file(sh.file));
    EXPECT_EQ(s.model.num_hidden_layers, sh.layers);
    EXPECT_EQ(s.model.hidden_size, sh.hidden);
    EXPECT_EQ(s.model.num_attention_heads, sh.heads);
    EXPECT_EQ(s.model.num_key_value_heads, sh.kv);
    EXPECT_EQ(s.model.head_dim, sh.head_dim);
    EXPECT_EQ(s.model.intermediate_size, sh.inter);
    EXPECT_EQ(s.model.num_local_experts, sh.experts);
    EXPECT_EQ(s.model.num_experts_per_tok, sh.topk);
    EXPECT_EQ(s.model.vocab_size, sh.vocab);
    EXPECT_EQ(s.name + ".yaml", sh.file);
    // Quick enough for the GPU check: a handful of steps per variant.
    EXPECT_LE(s.measure.warmup_steps + s.measure.repeat_steps, 5);
    const auto lengths = scenario::sequence_lengths(s.batch);
    EXPECT_EQ(std::accumulate(lengths.begin(), lengths.end(), 0), s.batch.packed_tokens);
  }
}

TEST(Scenario, LargeModelsRunEveryLayerWithAdaptersAndSayWhy) {
  // Trained as Unsloth trains them (adapters on a frozen base), the large models
  // fit at full depth; each file gives the memory arithmetic.
  for (const char* f : {"qwen3-14b.yaml", "qwen3-14b-qlora.yaml", "gpt-oss-20b.yaml"}) {
    scenario::Scenario s = scenario::load_scenario(scenario_file(f));
    EXPECT_FALSE(s.measure.layers_override) << f;
    EXPECT_EQ(s.layers(), s.model.num_hidden_layers) << f;
    EXPECT_TRUE(s.training.adapters()) << f;
    std::ifstream in(scenario_file(f));
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(text.find("Memory at L ="), std::string::npos) << f << " should give the memory arithmetic";
  }
  scenario::Scenario sweep = scenario::load_scenario(scenario_file("qwen3-0.6b-lsweep.yaml"));
  EXPECT_GE(sweep.measure.layer_sweep.size(), 2u);
}

TEST(Scenario, ErrorNamesFileLineColumnAndExpectedForm) {
  EXPECT_EQ(load_error(replace(kValid, "packed_tokens: 512", "packed_tokens: -3")),
            "x.yaml:10:18: batch.packed_tokens: expected a positive integer, got -3");
}

TEST(Scenario, RejectsImpossibleAndMistypedValues) {
  struct Case {
    std::string from, to, expect;  // expect: substring of the message
  };
  const Case cases[] = {
      {"  vocab_size: 1000", "  vocab_size: 1000\n  colour: red", "x.yaml:9:3: model.colour: unknown key"},
      {"hidden_size: 256", "hidden_size: big", "x.yaml:4:16: model.hidden_size: expected a positive integer, got big"},
      {"hidden_size: 256", "hidden_size: 2.5", "model.hidden_size: expected a positive integer, got 2.5"},
      {"num_hidden_layers: 4", "num_hidden_layers: -4", "x.yaml:3:22: model.num_hidden_layers: expected a positive"},
      {"num_key_value_heads: 4", "num_key_value_heads: 3",
       "x.yaml:6:24: model.num_key_value_heads: expected a divisor"},
      {"num_attention_heads: 8", "num_attention_heads: 12",
       "model.head_dim: missing, and num_attention_heads (12) does not"},
      {"[rebuild, cached]", "[rebuild, cachd]", "x.yaml:15:25: fixes.packing.variants[1]: expected one of rebuild, "},
      {"[rebuild, cached]", "[cached]",
       "fixes.packing.variants: expected a list that includes the baseline \"rebuild\""},
      {"[rebuild, cached]", "[rebuild, rebuild]", "fixes.packing.variants[1]: expected each variant once"},
      {"packing:", "packin:", "x.yaml:14:3: fixes.packin: unknown key; expected one of: packing, offload, moe_routing"},
      {"  max_len: 128", "  max_len: 8", "x.yaml:12:12: batch.max_len: expected an integer >= batch.min_len (16)"},
      {"  max_len: 128", "  max_len: 128\n  lengths: [100, 100]", "batch.lengths: expected lengths summing to batch"},
      {"  max_len: 128", "  max_len: 128\n  distribution: poisson", "batch.distribution: expected one of uniform"},
      {"  repeat_steps: 2", "  repeat_steps: 2\n  layers: 5", "measure.layers: expected an integer in 1..model."},
      {"  repeat_steps: 2", "  repeat_steps: 2\n  layer_sweep: [2, 2]",
       "measure.layer_sweep[1]: expected a value above"},
      {"  repeat_steps: 2", "  repeat_steps: 0", "measure.repeat_steps: expected a positive integer, got 0"},
      {"name: t", "name: t\ndtype: int8", "x.yaml:2:8: dtype: expected one of bf16, fp16, fp32, got \"int8\""},
      {"name: t", "name: t\noffload: maybe", "x.yaml:2:10: offload: expected true or false, got maybe"},
      {"name: t", "name: t\nname: u", "x.yaml:2:1: name: duplicate key"},
      {"  vocab_size: 1000", "  vocab_size: 1000\n  num_local_experts: 4\n  num_experts_per_tok: 6",
       "model.num_experts_per_tok: expected an integer in 1..num_local_experts (4), got 6"},
      {"  vocab_size: 1000", "  vocab_size: 1000\n  num_experts_per_tok: 2", "expected no value for a dense model"},
      {"fixes:\n", "fixes:\n  moe_routing:\n    variants: [loop]\n",
       "fixes.moe_routing: expected a mixture-of-experts"},
      {"name: t", "name: t\noffload: false",  // with the offload fix below
       ""},
      {"  vocab_size: 1000\n", "", "model: missing required key vocab_size"},
      {"  packing:\n", "  packing:\n    tolerance: -1\n", "fixes.packing.tolerance: expected a relative error"},
      {"measure:\n  warmup_steps: 0\n  repeat_steps: 2\n", "measure: [1]\n",
       "x.yaml:16:10: measure: expected a mapping with keys"},
      {"max_len: 128", "max_len: [128", "x.yaml:"},  // YAML syntax error still names the file
  };
  for (const auto& c : cases) {
    if (c.expect.empty()) continue;
    SCOPED_TRACE(c.to);
    std::string msg = load_error(replace(kValid, c.from, c.to));
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "message: " << msg;
  }
}

TEST(Scenario, OffloadFixNeedsOffloadOnAndDefaultsItOn) {
  const std::string with_fix = replace(kValid, "fixes:\n", "fixes:\n  offload:\n    variants: [single, double]\n");
  test::TempDir dir;
  scenario::Scenario s = scenario::load_scenario(write(dir, "o.yaml", with_fix));
  EXPECT_TRUE(s.offload);
  ASSERT_EQ(s.fixes.size(), 2u);
  EXPECT_EQ(s.fixes[0].fix, fixes::offload::kFix);
  EXPECT_EQ(s.fixes[0].number("prefetch_depth"), 2);  // the fix's default (FixSpec::number_keys)
  std::string msg = load_error(replace(with_fix, "name: t", "name: t\noffload: false"));
  EXPECT_NE(msg.find("x.yaml:2:10: offload: expected true when fixes.offload is selected"), std::string::npos) << msg;
  msg = load_error(replace(with_fix, "[single, double]", "[single]\n    prefetch_depth: 0"));
  EXPECT_NE(msg.find("fixes.offload.prefetch_depth: expected a positive integer, got 0"), std::string::npos) << msg;
  // prefetch_depth belongs to the offload fix only.
  msg = load_error(replace(kValid, "[rebuild, cached]", "[rebuild]\n    prefetch_depth: 2"));
  EXPECT_NE(msg.find("fixes.packing.prefetch_depth: unknown key"), std::string::npos) << msg;
}

TEST(Scenario, EmptyOrMissingFileIsInputError) {
  EXPECT_NE(load_error("").find("empty scenario"), std::string::npos);
  EXPECT_THROW(scenario::load_scenario("/nonexistent/x.yaml"), InputError);
  EXPECT_NE(load_error("model: {num_hidden_layers: 1}\n").find("model: missing required key hidden_size"),
            std::string::npos);
}

TEST(SequenceLengths, UniformIsDeterministicAndSums) {
  scenario::BatchSpec b;
  b.packed_tokens = 4096;
  b.min_len = 100;
  b.max_len = 700;
  b.seed = 7;
  auto a = scenario::sequence_lengths(b);
  EXPECT_EQ(a, scenario::sequence_lengths(b));
  EXPECT_EQ(std::accumulate(a.begin(), a.end(), 0), 4096);
  for (std::size_t i = 0; i + 1 < a.size(); ++i) {
    EXPECT_GE(a[i], 100);
    EXPECT_LE(a[i], 700);
  }
  EXPECT_GE(a.back(), 1);
  EXPECT_LE(a.back(), 700);
  b.seed = 8;
  EXPECT_NE(a, scenario::sequence_lengths(b));
  std::set<int> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 1u);
}

TEST(SequenceLengths, FixedAndList) {
  scenario::BatchSpec b;
  b.packed_tokens = 1024;
  b.distribution = "fixed";
  b.max_len = 256;
  EXPECT_EQ(scenario::sequence_lengths(b), (std::vector<int>{256, 256, 256, 256}));
  b.distribution = "list";
  b.lengths = {1000, 24};
  EXPECT_EQ(scenario::sequence_lengths(b), b.lengths);
}

TEST(Scenario, ListLengthsMustSumAndImplyList) {
  test::TempDir dir;
  scenario::Scenario s =
      scenario::load_scenario(write(dir, "l.yaml", replace(kValid, "  max_len: 128", "  lengths: [500, 12]")));
  EXPECT_EQ(s.batch.distribution, "list");
  EXPECT_EQ(scenario::sequence_lengths(s.batch), (std::vector<int>{500, 12}));
  std::string msg = load_error(replace(kValid, "  max_len: 128", "  lengths: [500, 0, 12]"));
  EXPECT_NE(msg.find("x.yaml:12:18: batch.lengths[1]: expected a positive integer, got 0"), std::string::npos) << msg;
}

TEST(Scenario, ValidateAndReplaceModel) {
  scenario::Scenario s = scenario::load_scenario(scenario_file("qwen3-14b.yaml"));
  EXPECT_NO_THROW(scenario::validate_scenario(s));
  s.measure.layers_override = 99;
  EXPECT_THROW(scenario::validate_scenario(s), InputError);
  s.measure.layers_override = 8;
  scenario::ModelShape dense = s.model;
  dense.num_key_value_heads = 7;
  try {
    scenario::replace_model(s, dense, "cfg.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.json: model.num_key_value_heads"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.model.num_key_value_heads, 8);  // unchanged on error
  scenario::Scenario moe = scenario::load_scenario(scenario_file("gpt-oss-20b.yaml"));
  scenario::ModelShape small = s.model;
  EXPECT_THROW(scenario::replace_model(moe, small, "cfg.json"), InputError);  // moe_routing on a dense model
}

TEST(FixNames, RoundTrip) {
  for (fixes::Fix f : {fixes::packing::kFix, fixes::offload::kFix, fixes::moe_routing::kFix}) {
    EXPECT_EQ(scenario::parse_fix(scenario::fix_name(f)), f);
    EXPECT_EQ(scenario::fix_variants(f).front(), scenario::baseline_variant(f));
    EXPECT_EQ(scenario::fix_variants(f).size(), 3u);
  }
  EXPECT_FALSE(scenario::parse_fix("nope"));
}

// ---- Hugging Face config.json ---------------------------------------------------------

TEST(HfConfig, Qwen3DenseWithUnknownKeys) {
  test::TempDir dir;
  auto p = write(dir, "config.json", R"({
  "architectures": ["Qwen3ForCausalLM"],
  "head_dim": 128,
  "hidden_size": 1024,
  "intermediate_size": 3072,
  "max_window_layers": 28,
  "model_type": "qwen3",
  "num_attention_heads": 16,
  "num_hidden_layers": 28,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06,
  "rope_scaling": null,
  "rope_theta": 1000000,
  "sliding_window": null,
  "tie_word_embeddings": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})");
  scenario::ModelShape m = scenario::load_hf_config(p);
  EXPECT_EQ(m.num_hidden_layers, 28);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.num_key_value_heads, 8);
  EXPECT_EQ(m.sliding_window, 0);
  EXPECT_DOUBLE_EQ(m.rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(m.rope_theta, 1e6);
  EXPECT_FALSE(m.is_moe());
}

TEST(HfConfig, GptOssAndQwen3MoeExpertNames) {
  test::TempDir dir;
  scenario::ModelShape g =
      scenario::load_hf_config(write(dir, "gpt.json", R"({"num_hidden_layers": 24, "hidden_size": 2880,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
    "vocab_size": 201088, "num_local_experts": 32, "num_experts_per_tok": 4, "experts_per_token": 4,
    "sliding_window": 128, "model_type": "gpt_oss"})"));
  EXPECT_EQ(g.num_local_experts, 32);
  EXPECT_EQ(g.num_experts_per_tok, 4);
  EXPECT_EQ(g.sliding_window, 128);
  scenario::ModelShape q =
      scenario::load_hf_config(write(dir, "qmoe.json", R"({"num_hidden_layers": 48, "hidden_size": 2048,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
    "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936})"));
  EXPECT_EQ(q.num_local_experts, 128);
  EXPECT_EQ(q.intermediate_size, 768);  // per expert
  // Llama: no head_dim, no kv heads -> derived.
  scenario::ModelShape l =
      scenario::load_hf_config(write(dir, "llama.json", R"({"num_hidden_layers": 2, "hidden_size": 512,
    "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 100})"));
  EXPECT_EQ(l.head_dim, 64);
  EXPECT_EQ(l.num_key_value_heads, 8);
}

TEST(HfConfig, MissingOrMistypedRequiredKeysNameFileAndPosition) {
  test::TempDir dir;
  auto expect_error = [&](const std::string& text, const std::string& want) {
    auto p = write(dir, "config.json", text);
    try {
      scenario::load_hf_config(p);
      ADD_FAILURE() << "no error for " << text;
    } catch (const InputError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
    }
  };
  expect_error(R"({"hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 8})",
               "missing required key \"num_hidden_layers\"");
  expect_error(
      "{\"num_hidden_layers\": 2,\n \"hidden_size\": \"8\", \"num_attention_heads\": 2, "
      "\"intermediate_size\": 8, \"vocab_size\": 8}",
      ":2:2: hidden_size: expected an integer, got \"8\"");
  expect_error(R"({"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 3,
                   "intermediate_size": 8, "vocab_size": 8})",
               "num_key_value_heads: expected a divisor of num_attention_heads (2)");
  expect_error(R"({"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8,
                   "vocab_size": 8, "num_local_experts": 4, "num_experts_per_tok": 5})",
               "num_experts_per_tok: expected an integer in 1..num_local_experts (4)");
  expect_error("{\"num_hidden_layers\": 2,\n  oops}", ":2:3: not valid JSON");
  expect_error("[1, 2]", "expected a JSON object");
}

}  // namespace
}  // namespace syncscope
