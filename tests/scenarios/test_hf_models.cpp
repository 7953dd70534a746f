// Hugging Face configs read as their architecture means them. The fixtures in
// tests/fixtures/hf/ are public config.json files (sources in its README); the totals below
// are the published parameter counts, so these tests check our reading against numbers we
// did not compute.
#include <gtest/gtest.h>

#include <fstream>

#include "hf_fixtures.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/scenario/model_traits.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

using test::base_parameters;
using test::fixture_model;

struct Published {
  const char* fixture;
  std::int64_t total;
};

// Totals published with each model (tests/fixtures/hf/README.md says where). Gemma-2-2B is
// tied by Gemma2Config's default (its config has no tie_word_embeddings key): counting the
// head twice gave 3,204,046,080.
TEST(HfModels, ParameterCountsMatchThePublishedTotals) {
  const Published table[] = {
      {"gemma-2-2b", 2614341888},         {"qwen2.5-7b", 7615616512},     {"mistral-7b-v0.1", 7241732096},
      {"qwen3-30b-a3b", 30532122624},     {"llama-3.2-1b", 1235814400},   {"qwen3-0.6b", 596049920},
      {"gpt-oss-20b", 20914757184},       {"gpt-oss-120b", 116829156672}, {"qwen3-14b", 14768307200},
      {"mixtral-8x7b-v0.1", 46702792704}, {"gemma-3-1b-pt", 999885952},
  };
  for (const auto& p : table) {
    SCOPED_TRACE(p.fixture);
    EXPECT_EQ(base_parameters(fixture_model(p.fixture)), p.total);
  }
}

TEST(HfModels, FamilyDefaultsFillWhatTheConfigLeavesOut) {
  const scenario::ModelShape gemma2 = fixture_model("gemma-2-2b");
  EXPECT_EQ(gemma2.traits.family, "gemma2");
  EXPECT_TRUE(gemma2.tie_word_embeddings);  // Gemma2Config default; the key is absent
  EXPECT_EQ(gemma2.traits.norms_per_layer, 4);
  EXPECT_EQ(gemma2.traits.attn_logit_softcapping, 50.0);
  EXPECT_EQ(gemma2.traits.final_logit_softcapping, 30.0);
  EXPECT_EQ(scenario::layer_window(gemma2.traits, 0), 4096);
  EXPECT_EQ(scenario::layer_window(gemma2.traits, 1), 0);
  EXPECT_EQ(scenario::describe_windows(gemma2.traits, 26), "a 4096-token sliding window on 13 of 26 layers");

  const scenario::ModelShape qwen2 = fixture_model("qwen2.5-7b");
  EXPECT_TRUE(qwen2.traits.qkv_bias);  // modeling_qwen2.py: bias=True on q/k/v
  EXPECT_FALSE(qwen2.traits.o_bias);
  EXPECT_EQ(qwen2.sliding_window, 0);  // use_sliding_window: false
  EXPECT_TRUE(qwen2.traits.layer_windows.empty());

  const scenario::ModelShape mistral = fixture_model("mistral-7b-v0.1");
  EXPECT_EQ(scenario::describe_windows(mistral.traits, 32), "a 4096-token sliding window on every layer");

  const scenario::ModelShape gemma3 = fixture_model("gemma-3-1b-pt");
  EXPECT_EQ(gemma3.traits.family, "gemma3");  // model_type gemma3_text
  EXPECT_TRUE(gemma3.traits.qk_norm);
  EXPECT_TRUE(gemma3.tie_word_embeddings);
  for (int l = 0; l < 12; ++l) EXPECT_EQ(scenario::layer_window(gemma3.traits, l), (l + 1) % 6 == 0 ? 0 : 512) << l;

  const scenario::ModelShape moe = fixture_model("qwen3-30b-a3b");
  EXPECT_TRUE(moe.traits.qk_norm);
  EXPECT_EQ(moe.num_local_experts, 128);
  EXPECT_EQ(moe.intermediate_size, 768);  // moe_intermediate_size, per expert

  const scenario::ModelShape oss = fixture_model("gpt-oss-120b");
  EXPECT_TRUE(oss.traits.attention_sinks);
  EXPECT_TRUE(oss.traits.moe_biases);
  EXPECT_EQ(scenario::describe_windows(oss.traits, 36), "a 128-token sliding window on 18 of 36 layers");
  EXPECT_TRUE(oss.traits.assumed.empty());
}

std::filesystem::path write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  auto p = dir / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p;
}

// A config from the Hugging Face cache sits in snapshots/<hash>/config.json: named by the
// hash, it keeps its q/k norms (they once came from the name "qwen3").
TEST(HfModels, QkNormComesFromModelTypeNotTheName) {
  test::TempDir dir;
  const auto p = write(dir, "snapshots/9c6a8ed0f1/config.json", read_file(test::fixture("hf/qwen3-0.6b/config.json")));
  const scenario::ModelShape m = scenario::load_hf_config(p);
  EXPECT_EQ(m.name, "9c6a8ed0f1");
  EXPECT_TRUE(m.traits.qk_norm);
  EXPECT_TRUE(program::uses_qk_norm(m));
  EXPECT_EQ(base_parameters(m), 596049920);
  // And a Llama named like Qwen3 gets none.
  scenario::ModelShape named = fixture_model("llama-3.2-1b");
  named.name = "qwen3-lookalike";
  EXPECT_FALSE(program::uses_qk_norm(named));
}

TEST(HfModels, UnknownModelTypeRunsAsTheClosestFamilyWithAWarning) {
  test::TempDir dir;
  std::string text = read_file(test::fixture("hf/qwen2.5-7b/config.json"));
  text.replace(text.find("\"qwen2\""), 7, "\"qwen2_next\"");
  const scenario::ModelShape m = scenario::load_hf_config(write(dir, "config.json", text));
  EXPECT_EQ(m.traits.family, "qwen2");
  EXPECT_NE(m.traits.assumed.find("model_type \"qwen2_next\" is not a model_type syncscope knows"), std::string::npos)
      << m.traits.assumed;
  EXPECT_NE(m.traits.assumed.find("read with qwen2's defaults"), std::string::npos) << m.traits.assumed;
  EXPECT_EQ(base_parameters(m), 7615616512);  // the closest family is the right one here

  std::string other = read_file(test::fixture("hf/mistral-7b-v0.1/config.json"));
  other.replace(other.find("\"mistral\""), 9, "\"zephyrish\"");
  const scenario::ModelShape z = scenario::load_hf_config(write(dir, "z.json", other));
  EXPECT_EQ(z.traits.family, "mistral");  // unknown, no prefix match, a window: Mistral's layout
  EXPECT_NE(z.traits.assumed.find("zephyrish"), std::string::npos);
}

TEST(HfModels, LayerTypesAreReadAndCheckedWithTheirLine) {
  test::TempDir dir;
  std::string text = read_file(test::fixture("hf/mistral-7b-v0.1/config.json"));
  std::string types = "\"layer_types\": [";
  for (int i = 0; i < 32; ++i)
    types += std::string(i ? ", " : "") + (i < 30 ? "\"full_attention\"" : "\"sliding_attention\"");
  types += "],\n  ";
  std::string good = text;
  good.insert(good.find("\"max_position_embeddings\""), types);
  const scenario::ModelShape m = scenario::load_hf_config(write(dir, "good.json", good));
  EXPECT_EQ(scenario::describe_windows(m.traits, 32), "a 4096-token sliding window on 2 of 32 layers");
  EXPECT_EQ(scenario::layer_window(m.traits, 31), 4096);

  std::string bad = text;
  bad.insert(bad.find("\"max_position_embeddings\""), "\"layer_types\": [\"full_attention\"],\n  ");
  try {
    scenario::load_hf_config(write(dir, "bad.json", bad));
    ADD_FAILURE() << "a one-entry layer_types for 32 layers was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.json:11:3: layer_types: expected a list of 32 entries"), std::string::npos) << what;
  }
}

// Mistral-7B-v0.1 windows every layer, so Unsloth's mask cache (one entry per
// (dtype, window)) hits in every layer after the first: `cached` keeps 3 syncs per batch
// plus the loss read. Read as alternating (the rule before model_type was read), it
// rebuilt the mask in every other layer: 128 syncs per step.
TEST(HfModels, MistralCachedPackingKeepsFourSyncsPerStep) {
  program::StepOptions o;
  o.model = fixture_model("mistral-7b-v0.1");
  o.dtype = "bf16";
  o.training.mode = "qlora";
  fixes::offload::set_variant(o, fixes::offload::kUnslothDefaultReload);
  fixes::offload::set_budget_bytes(o, 0);
  o.batch.packed_tokens = 2048;
  fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 4);
  // Gemma 2 alternates: the same cache misses in every layer whose window differs.
  o.model = fixture_model("gemma-2-2b");
  EXPECT_GT(program::program_stats(program::build_step_program(o)).host_syncs, 4);
}

}  // namespace
}  // namespace syncscope
