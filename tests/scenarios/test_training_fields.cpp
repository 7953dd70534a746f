// The scenario fields of training as Unsloth does it: training mode, LoRA, tied embeddings, gpt-oss's clamp, the
// prefetch budget; bounded at load with file:line:column. And what each shipped scenario
// says about the mode its published figure used.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

const char* kBase = R"(name: t
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
  offload:
    variants: [single, prefetch]
measure:
  warmup_steps: 0
  repeat_steps: 2
)";

std::string training_error(const std::string& text, scenario::Scenario* out = nullptr) {
  test::TempDir dir;
  auto p = dir / "x.yaml";
  std::ofstream(p) << text;
  try {
    scenario::Scenario s = scenario::load_scenario(p);
    if (out) *out = s;
  } catch (const InputError& e) {
    std::string msg = e.what();
    auto pos = msg.find(p.string());
    if (pos != std::string::npos) msg.replace(pos, p.string().size(), "x.yaml");
    return msg;
  }
  return "";
}

std::string with(const std::string& extra) { return std::string(kBase) + extra; }

TEST(TrainingFields, DefaultsAreFullFineTuningAndUnslothsAdapters) {
  scenario::Scenario s;
  ASSERT_EQ(training_error(kBase, &s), "");
  EXPECT_EQ(s.training.mode, "full");
  EXPECT_FALSE(s.training.adapters());
  EXPECT_EQ(s.training.lora_rank, 16);
  EXPECT_DOUBLE_EQ(s.training.lora_alpha, 16);
  EXPECT_EQ(s.training.target_modules.size(), 7u);
  EXPECT_FALSE(s.model.tie_word_embeddings);
  EXPECT_FALSE(s.fixes[0].has_number("prefetch_budget_gib"));
}

TEST(TrainingFields, ReadsModeLoraTiedAndBudget) {
  scenario::Scenario s;
  const std::string text = with(
      "training: qlora\nlora:\n  r: 8\n  alpha: 32\n  target_modules: [q_proj, v_proj]\n"
      "  double_quant: true\n");
  std::string t = text;
  t.replace(t.find("    variants: [single, prefetch]"), 32,
            "    variants: [single, prefetch]\n    prefetch_budget_gib: 0.5");
  t.replace(t.find("  vocab_size: 1000"), 18, "  vocab_size: 1000\n  tie_word_embeddings: true\n  swiglu_limit: 7.0");
  ASSERT_EQ(training_error(t, &s), "");
  EXPECT_EQ(s.training.mode, "qlora");
  EXPECT_EQ(s.training.lora_rank, 8);
  EXPECT_DOUBLE_EQ(s.training.lora_alpha, 32);
  EXPECT_EQ(s.training.target_modules, (std::vector<std::string>{"q_proj", "v_proj"}));
  EXPECT_TRUE(s.training.double_quant);
  EXPECT_TRUE(s.model.tie_word_embeddings);
  EXPECT_DOUBLE_EQ(s.model.swiglu_limit, 7.0);
  ASSERT_TRUE(s.fixes[0].has_number("prefetch_budget_gib"));
  EXPECT_DOUBLE_EQ(s.fixes[0].number("prefetch_budget_gib"), 0.5);
}

TEST(TrainingFields, BadValuesNameFileLineAndColumn) {
  EXPECT_EQ(training_error(with("training: half\n")),
            "x.yaml:19:11: training: expected one of full, lora, qlora, got \"half\"");
  EXPECT_EQ(training_error(with("training: lora\nlora:\n  r: 0\n")),
            "x.yaml:21:6: lora.r: expected an integer in 1..128 (an adapter's rank cannot exceed the smallest "
            "projection width), got 0");
  EXPECT_EQ(training_error(with("training: lora\nlora:\n  target_modules: [q_proj, lm_head]\n")),
            "x.yaml:21:28: lora.target_modules[1]: expected one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, "
            "down_proj, got \"lm_head\"");
  EXPECT_EQ(training_error(with("training: lora\nlora:\n  double_quant: true\n")),
            "x.yaml:21:17: lora.double_quant: expected false unless training is qlora (it quantizes the NF4 absmax "
            "values), got true");
  EXPECT_EQ(training_error(with("lora:\n  rank: 4\n")).rfind("x.yaml:20:3: lora.rank: unknown key", 0), 0u);
  EXPECT_NE(
      training_error(with("training: lora\nlora:\n  alpha: -1\n")).find("lora.alpha: expected a number in (0, 1e6]"),
      std::string::npos);
  std::string t = kBase;
  t.replace(t.find("    variants: [single, prefetch]"), 32,
            "    variants: [single, prefetch]\n    prefetch_budget_gib: -1");
  EXPECT_EQ(training_error(t),
            "x.yaml:16:26: fixes.offload.prefetch_budget_gib: expected a number in [0, 65536] GiB "
            "(device memory), got -1");
  t = kBase;
  t.replace(t.find("  vocab_size: 1000"), 18, "  vocab_size: 1000\n  swiglu_limit: -2");
  EXPECT_EQ(training_error(t),
            "x.yaml:9:17: model.swiglu_limit: expected a number in [0, 10000] (0: no clamp), got -2");
  t = kBase;
  t.replace(t.find("  vocab_size: 1000"), 18, "  vocab_size: 1000\n  tie_word_embeddings: yes please");
  EXPECT_EQ(training_error(t), "x.yaml:9:24: model.tie_word_embeddings: expected true or false, got yes please");
}

std::string file_text(const std::string& name) {
  std::ifstream in(test::source_dir() / "scenarios" / name);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(TrainingFields, ShippedScenariosSayTheirModeAndTies) {
  struct Expect {
    const char* file;
    const char* mode;
    bool tied;
  };
  for (const Expect& e : {Expect{"llama-3.2-1b.yaml", "qlora", true}, Expect{"qwen3-0.6b.yaml", "qlora", true},
                          Expect{"qwen3-0.6b-lsweep.yaml", "qlora", true}, Expect{"qwen3-14b.yaml", "qlora", false},
                          Expect{"qwen3-14b-qlora.yaml", "qlora", false}, Expect{"gpt-oss-20b.yaml", "lora", false}}) {
    SCOPED_TRACE(e.file);
    const scenario::Scenario s = scenario::load_scenario(test::source_dir() / "scenarios" / e.file);
    EXPECT_EQ(s.training.mode, e.mode);
    EXPECT_EQ(s.model.tie_word_embeddings, e.tied);
    // Checkpointing as Unsloth runs it by default: offloaded and recomputed.
    EXPECT_TRUE(s.offload);
    const std::string text = file_text(e.file);
    EXPECT_NE(text.find("Training mode"), std::string::npos) << "should say which mode the published figure used";
  }
  // The headline: packing at all 40 layers of Qwen3-14B QLoRA.
  const scenario::Scenario h = scenario::load_scenario(test::source_dir() / "scenarios" / "qwen3-14b-qlora.yaml");
  EXPECT_EQ(h.layers(), 40);
  ASSERT_EQ(h.fixes.size(), 1u);
  EXPECT_EQ(h.fixes[0].fix, fixes::packing::kFix);
  // prefetch's budget is pinned so that it offloads on an H200.
  const scenario::Scenario o = scenario::load_scenario(test::source_dir() / "scenarios" / "qwen3-14b.yaml");
  bool pinned = false;
  for (const auto& f : o.fixes)
    if (f.fix == fixes::offload::kFix)
      pinned = f.has_number("prefetch_budget_gib") &&
               f.number("prefetch_budget_gib") * 1024 * 1024 * 1024 < 40.0 * 2048 * 5120 * 2;
  EXPECT_TRUE(pinned);
  EXPECT_DOUBLE_EQ(scenario::load_scenario(test::source_dir() / "scenarios" / "gpt-oss-20b.yaml").model.swiglu_limit,
                   7.0);
}

// gradient_checkpointing: none | full | offload. Unset, the mode follows offload, as before
// the key existed; offload is offload: true; a contradiction with offload names the key.
TEST(TrainingFields, GradientCheckpointingModes) {
  std::string packing = kBase;
  const std::string fix = "offload:\n    variants: [single, prefetch]";
  packing.replace(packing.find(fix), fix.size(), "packing:\n    variants: [rebuild, cached]");
  scenario::Scenario s;
  ASSERT_EQ(training_error(packing, &s), "");
  EXPECT_EQ(s.training.gradient_checkpointing, "");
  EXPECT_FALSE(s.offload);
  ASSERT_EQ(training_error(packing + "gradient_checkpointing: full\n", &s), "");
  EXPECT_EQ(s.training.gradient_checkpointing, "full");
  EXPECT_FALSE(s.offload);
  ASSERT_EQ(training_error(packing + "gradient_checkpointing: offload\n", &s), "");
  EXPECT_TRUE(s.offload);
  std::string e = training_error(packing + "gradient_checkpointing: sometimes\n");
  EXPECT_NE(e.find("x.yaml:19:"), std::string::npos) << e;
  e = training_error(packing + "offload: true\ngradient_checkpointing: full\n");
  EXPECT_NE(e.find("gradient_checkpointing: expected offload while offload is on"), std::string::npos) << e;
  e = training_error(packing + "offload: false\ngradient_checkpointing: offload\n");
  EXPECT_NE(e.find("gradient_checkpointing: expected none or full with offload: false"), std::string::npos) << e;
  // The offload fix under test checkpoints in host memory: "none" contradicts it.
  e = training_error(with("gradient_checkpointing: none\n"));
  EXPECT_NE(e.find("gradient_checkpointing: expected offload while offload is on"), std::string::npos) << e;
}

}  // namespace
}  // namespace syncscope
