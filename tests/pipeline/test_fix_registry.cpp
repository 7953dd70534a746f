// The fix registry (model/fix_spec.hpp): a fourth fix defined in this file alone, registered
// at run time, goes through scenario parsing, the run plan and both forms of predict without
// any shipped file naming it. And the shipped registry still says what the strings said.
#include <gtest/gtest.h>

#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/kernels/step_options.hpp"
#include "syncscope/model/fix_spec.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

constexpr Fix kToy = static_cast<Fix>(42);

// The whole toy fix: names, variants, a step option kept in StepOptions::other_fixes (no
// hook), a closed-form predictor (L x 1 ms saved per step) and a trace detector.
class ToyFix : public ::testing::Test {
 protected:
  void SetUp() override {
    FixSpec f;
    f.id = kToy;
    f.name = "toy_fix";
    f.aliases = {"toy"};
    f.variants = {"slow", "fast"};
    f.predicted_variants = {"fast"};
    f.has_inputs = [](const model::ExplicitPredictInputs& in) { return in.layers > 0; };
    f.predict = [](const model::ExplicitPredictInputs& in, model::PredictionReport& rep) {
      model::FixPrediction p;
      p.fix = "toy_fix";
      p.variant = "fast";
      p.formula = "L * 1 ms";
      p.saving_ns = model::Interval::exact(in.layers * 1e6);
      rep.fixes.push_back(p);
    };
    f.detect = [](const model::detail::TraceFacts&, model::PredictionReport& rep) {
      model::FixPrediction p;
      p.fix = "toy_fix";
      p.variant = "fast";
      p.applicable = false;
      p.reason = "the toy detector finds nothing";
      rep.fixes.push_back(p);
    };
    register_fix(std::move(f));
  }
  void TearDown() override { unregister_fix(kToy); }
};

const char* kScenario = R"(name: toy
model:
  name: Tiny
  num_hidden_layers: 2
  hidden_size: 64
  num_attention_heads: 2
  num_key_value_heads: 1
  head_dim: 32
  intermediate_size: 128
  vocab_size: 100
batch:
  packed_tokens: 128
  min_len: 16
  max_len: 64
fixes:
  packing:
    variants: [rebuild, cached]
  toy_fix:
    variants: [slow, fast]
    tolerance: 0.2
)";

TEST_F(ToyFix, ScenarioParsesIt) {
  const Scenario s = parse_scenario(kScenario, "toy.yaml");
  ASSERT_EQ(s.fixes.size(), 2u);
  EXPECT_EQ(s.fixes[1].fix, kToy);
  EXPECT_EQ(s.fixes[1].variants, (std::vector<std::string>{"slow", "fast"}));
  EXPECT_DOUBLE_EQ(s.fixes[1].tolerance, 0.2);
  // Its variants and baseline are checked like the shipped ones', with the file position.
  std::string bad = kScenario;
  bad.replace(bad.find("[slow, fast]"), 12, "[slow, quick]");
  try {
    (void)parse_scenario(bad, "toy.yaml");
    FAIL() << "an unknown toy variant was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fixes.toy_fix.variants[1]: expected one of slow, fast"), std::string::npos)
        << e.what();
  }
  std::string no_base = kScenario;
  no_base.replace(no_base.find("[slow, fast]"), 12, "[fast]");
  EXPECT_THROW((void)parse_scenario(no_base, "toy.yaml"), InputError);
}

TEST_F(ToyFix, PlanRunsEachVariantWithTheOthersAtTheirDefaults) {
  const Scenario s = parse_scenario(kScenario, "toy.yaml");
  const pipeline::RunPlan plan = pipeline::plan_jobs({s});
  ASSERT_EQ(plan.jobs.size(), 4u);  // packing x 2, toy x 2
  const pipeline::Job& fast = plan.jobs[3];
  EXPECT_EQ(fast.fix, kToy);
  EXPECT_EQ(fast.variant, "fast");
  EXPECT_FALSE(fast.baseline);
  EXPECT_EQ(fast.opts.other_fixes.at(kToy), 1);
  EXPECT_EQ(fast.opts.packing, PackingVariant::Rebuild);  // the other fix stays at its baseline
  EXPECT_EQ(fast.key, "toy/L2/packing=rebuild/offload=off/moe=loop/toy_fix=fast");
  EXPECT_EQ(fast.base_key, "toy/L2/packing=rebuild/offload=off/moe=loop/toy_fix=slow");
  // The toy baseline and the packing baseline are one step: one trace serves both.
  EXPECT_EQ(plan.jobs[2].key, plan.jobs[0].key);
  EXPECT_EQ(plan.produce_order.size(), 3u);
  EXPECT_EQ(pipeline::job_label(s, fast), "toy toy_fix=fast");
  EXPECT_THROW((void)pipeline::step_options(s, kToy, "quick", 2, 2), InputError);
}

TEST_F(ToyFix, PredictFromValuesByAliasAndByInputs) {
  model::ExplicitPredictInputs in;
  in.fixes = {"toy"};
  in.layers = 3;
  const model::PredictionReport rep = model::predict_explicit(in);
  ASSERT_EQ(rep.fixes.size(), 1u);
  EXPECT_EQ(rep.fixes[0].fix, "toy_fix");
  EXPECT_DOUBLE_EQ(rep.fixes[0].saving_ns.value, 3e6);
  // Without --fix: every fix whose inputs are given (the toy's: layers only).
  in.fixes.clear();
  EXPECT_EQ(model::predict_explicit(in).fixes.size(), 1u);
  in.fixes = {"toys"};
  try {
    (void)model::predict_explicit(in);
    FAIL() << "an unknown --fix was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected packing, offload, moe, toy or all"), std::string::npos) << e.what();
  }
}

TEST_F(ToyFix, PredictFromATraceRunsItsDetectorAfterTheShippedOnes) {
  const Trace t = read_trace(test::source_dir() / "tests" / "fixtures" / "torch" / "item_loop_l8_h200.json.gz");
  const model::PredictionReport rep = model::predict_from_trace(t, {}, "item_loop");
  ASSERT_FALSE(rep.fixes.empty());
  EXPECT_EQ(rep.fixes.back().fix, "toy_fix");
  EXPECT_EQ(rep.fixes.back().reason, "the toy detector finds nothing");
  EXPECT_EQ(rep.fixes.front().fix, "packing");
}

TEST(FixRegistry, ShippedFixesKeepTheirNamesVariantsAndOrder) {
  const auto& r = fix_registry();
  ASSERT_GE(r.size(), 3u);
  EXPECT_EQ(r[0].name, "packing");
  EXPECT_EQ(r[1].name, "offload");
  EXPECT_EQ(r[2].name, "moe_routing");
  EXPECT_EQ(fix_variants(Fix::Packing), (std::vector<std::string>{"rebuild", "cached", "device"}));
  EXPECT_EQ(fix_variants(Fix::Offload), (std::vector<std::string>{"single", "double", "prefetch"}));
  EXPECT_EQ(fix_variants(Fix::MoeRouting), (std::vector<std::string>{"loop", "sorted", "device"}));
  // The typed enums index the registry's names.
  EXPECT_EQ(variant_name(PackingVariant::Device), "device");
  EXPECT_EQ(variant_name(OffloadVariant::Prefetch), "prefetch");
  EXPECT_EQ(variant_name(MoeVariant::Sorted), "sorted");
  EXPECT_EQ(find_fix("moe"), Fix::MoeRouting);
  EXPECT_EQ(find_fix("moe-routing"), Fix::MoeRouting);
  EXPECT_FALSE(find_fix("mask"));
  EXPECT_THROW((void)packing_variant("lazy"), InputError);
  EXPECT_THROW(register_fix(FixSpec{}), std::invalid_argument);  // id 0 is packing's
  unregister_fix(Fix::Packing);                                  // the shipped ones stay
  EXPECT_EQ(fix_registry()[0].name, "packing");
}

}  // namespace
}  // namespace syncscope
