// `predict --scenario` (predict_explicit): what the scenario's model implies for the closed
// forms, against counts worked out by hand from the configs (tests/fixtures/hf).
#include <gtest/gtest.h>

#include <string>

#include "syncscope/model/predict_inputs.hpp"
#include "test_paths.hpp"

namespace m = syncscope::model;
namespace test = syncscope::test;

namespace {

std::string scenario(const std::string& name) { return (test::source_dir() / "scenarios" / name).string(); }
std::string config(const std::string& dir) { return test::fixture("hf/" + dir + "/config.json").string(); }

const m::FixPrediction& find(const m::PredictionReport& r, const std::string& variant) {
  for (const auto& f : r.fixes)
    if (f.variant == variant) return f;
  throw std::runtime_error("no prediction for " + variant);
}

}  // namespace

// Gemma-3-1b: 26 layers, sliding_window_pattern 6, so layers 5, 11, 17 and 23 are full and
// the rest slide. Unsloth's one-entry (dtype, window) mask cache misses at layer 0 and at
// each change: 0, 5, 6, 11, 12, 17, 18, 23, 24 = 9 of the 26 layers rebuild, so with
// s = 1 ms the cached variant saves (26 - 9) x 1 ms = 17 ms, not (26 - 1) x 1 = 25 ms.
TEST(PredictScenario, Gemma3CachedPackingRebuildsAtEachWindowChange) {
  m::ExplicitPredictInputs in;
  in.scenario = scenario("qwen3-0.6b.yaml");
  in.hf_config = config("gemma-3-1b-pt");
  in.fixes = {"packing"};
  in.values["per-layer-ms"] = "1";
  const m::PredictionReport r = m::predict_explicit(in);
  const m::FixPrediction& f = find(r, "cached");
  EXPECT_EQ(f.parameters.at("L").value, 26);
  EXPECT_EQ(f.parameters.at("m").value, 9);
  EXPECT_NEAR(f.saving_ns.value, 17e6, 1);
  EXPECT_EQ(f.formula, "(L-m)*s");
  EXPECT_NEAR(f.alternatives.at("published (L-1)*s").value, 25e6, 1);
}

// Qwen3-0.6B: full attention on all 28 layers: one miss, the published (L-1) s = 27 ms.
TEST(PredictScenario, OneWindowKeepsThePublishedForm) {
  m::ExplicitPredictInputs in;
  in.scenario = scenario("qwen3-0.6b.yaml");
  in.fixes = {"packing"};
  in.values["per-layer-ms"] = "1";
  const m::PredictionReport r = m::predict_explicit(in);
  const m::FixPrediction& f = find(r, "cached");
  EXPECT_EQ(f.parameters.count("m"), 0u);
  EXPECT_NEAR(f.saving_ns.value, 27e6, 1);
  EXPECT_EQ(f.formula, "(L-1)*s");
}

// DeepSeek-V2-Lite: 27 layers, first_k_dense_replace 1 and moe_layer_freq 1, so layer 0 is
// a dense MLP (no router) and 26 route over 64 experts. The sorted variant saves
// N x passes x (E - 3) x q = 26 x 1 x 61 x 10 us = 15.86 ms; counting all 27 layers would
// give 16.47 ms.
TEST(PredictScenario, MoeSavingsCountOnlyTheRoutedLayers) {
  m::ExplicitPredictInputs in;
  in.scenario = scenario("gpt-oss-20b.yaml");
  in.hf_config = config("deepseek-v2-lite");
  in.fixes = {"moe"};
  in.values["per-expert-us"] = "10";
  const m::PredictionReport r = m::predict_explicit(in);
  const m::FixPrediction& f = find(r, "sorted");
  EXPECT_EQ(f.parameters.at("E").value, 64);
  EXPECT_EQ(f.parameters.at("moe_layers").value, 26);
  EXPECT_NEAR(f.saving_ns.value, 15.86e6, 1);
  bool noted = false;
  for (const auto& n : r.notes)
    noted = noted || n == "moe: 26 of the 27 layers route (the others are dense MLPs): N = 26";
  EXPECT_TRUE(noted);
  // gpt-oss-20b routes in all of its 24 layers: N = 24 and no note.
  in.hf_config.clear();
  const m::PredictionReport g = m::predict_explicit(in);
  EXPECT_EQ(find(g, "sorted").parameters.at("moe_layers").value, 24);
  for (const auto& n : g.notes) EXPECT_EQ(n.find("layers route"), std::string::npos) << n;
}
