// The fix registry (fixes/fix_spec.hpp): a fourth fix defined in this file alone, registered
// at run time, goes through scenario parsing, the run plan, the step program (its own
// operators in every layer) and both forms of predict without any shipped file naming it.
// And the shipped registry still says what the strings said.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/pipeline/summary.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

constexpr fixes::Fix kToy = static_cast<fixes::Fix>(42);

// The whole toy fix: names, variants, a step option kept in StepOptions::fix_variants (no
// hook), per-layer operators in the step program (the baseline reads a flag back to the
// host before each layer's attention, the fix keeps it on the device), a closed-form
// predictor (L x 1 ms saved per step) and a trace detector.
class ToyFix : public ::testing::Test {
 protected:
  void SetUp() override {
    fixes::FixSpec f;
    f.id = kToy;
    f.name = "toy_fix";
    f.aliases = {"toy"};
    f.variants = {"slow", "fast"};
    f.predicted_variants = {"fast"};
    f.scenario_keys = {"pace", "weight"};
    f.word_keys = {{"pace", {"steady", "brisk"}}};                        // a word from a list, the default first
    f.number_keys = {{"weight", {1, 5, "toys are light"}, true, "", 2}};  // an integer in 1..5, default 2
    f.build_program_layer = [](program::ProgramLayerBuilder& b, program::ProgramPoint at) {
      if (at != program::ProgramPoint::BeforeAttention) return;
      const auto it = b.options().fix_variants.find(kToy);
      const bool fast = it != b.options().fix_variants.end() && it->second == 1;
      // Step-wide state: how many layers this step has built so far.
      std::any& seen = b.fix_state(kToy);
      seen = seen.has_value() ? std::any_cast<int>(seen) + 1 : 0;
      b.push_range("toy_fix");
      if (fast) b.bookkeeping("toy::flag_on_device", 1, 4);
      else b.host_read(fmt::format("aten::item toy.flag layer {}", std::any_cast<int>(seen)), 4);
      b.pop_range();
    };
    f.has_inputs = [](const model::ExplicitPredictInputs& in) { return in.layers > 0; };
    // Its own predict options: a time per layer (default 1 ms) and a bounded count.
    f.predict_options = {
        {"toy-ms", fixes::PredictOption::Kind::Time, "toy: per-layer saving (ms)", {0, 0, ""}, "", ""},
        {"toy-count", fixes::PredictOption::Kind::Integer, "toy: a count", {1, 9, "toys come in ones"}, "1", ""}};
    f.predict = [](const model::ExplicitPredictInputs& in, model::PredictionReport& rep) {
      model::FixPrediction p;
      p.fix = "toy_fix";
      p.variant = "fast";
      p.formula = "L * s * count";
      const double s = in.given("toy-ms") ? in.interval("toy-ms", 1e6)->value : 1e6;
      p.saving_ns = model::Interval::exact(in.layers * s * in.integer("toy-count", 1));
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
    fixes::register_fix(std::move(f));
  }
  void TearDown() override { fixes::unregister_fix(kToy); }
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
  const scenario::Scenario s = scenario::parse_scenario(kScenario, "toy.yaml");
  ASSERT_EQ(s.fixes.size(), 2u);
  EXPECT_EQ(s.fixes[1].fix, kToy);
  EXPECT_EQ(s.fixes[1].variants, (std::vector<std::string>{"slow", "fast"}));
  EXPECT_DOUBLE_EQ(s.fixes[1].tolerance, 0.2);
  // Its variants and baseline are checked like the shipped ones', with the file position.
  std::string bad = kScenario;
  bad.replace(bad.find("[slow, fast]"), 12, "[slow, quick]");
  try {
    (void)scenario::parse_scenario(bad, "toy.yaml");
    FAIL() << "an unknown toy variant was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fixes.toy_fix.variants[1]: expected one of slow, fast"), std::string::npos)
        << e.what();
  }
  std::string no_base = kScenario;
  no_base.replace(no_base.find("[slow, fast]"), 12, "[fast]");
  EXPECT_THROW((void)scenario::parse_scenario(no_base, "toy.yaml"), InputError);
}

TEST_F(ToyFix, ItsWordKeyIsCheckedAgainstItsListAndDefaulted) {
  const scenario::Scenario plain = scenario::parse_scenario(kScenario, "toy.yaml");
  EXPECT_EQ(plain.fixes[1].word("pace"), "steady");  // not given: the fix's default
  EXPECT_THROW((void)plain.fixes[1].word("tempo"), std::out_of_range);
  std::string brisk = kScenario;
  brisk.replace(brisk.find("tolerance: 0.2"), 14, "tolerance: 0.2\n    pace: brisk");
  EXPECT_EQ(scenario::parse_scenario(brisk, "toy.yaml").fixes[1].word("pace"), "brisk");
  std::string bad = kScenario;
  bad.replace(bad.find("tolerance: 0.2"), 14, "tolerance: 0.2\n    pace: lazy");
  try {
    (void)scenario::parse_scenario(bad, "toy.yaml");
    FAIL() << "a word outside the toy's list was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fixes.toy_fix.pace: expected one of steady, brisk"), std::string::npos)
        << e.what();
  }
}

// A number key (FixSpec::number_keys) is checked against its range when the scenario loads, with
// the key's line and column, and defaults to the fix's value.
TEST_F(ToyFix, ItsNumberKeyIsCheckedAtLoadAndDefaulted) {
  EXPECT_EQ(scenario::parse_scenario(kScenario, "toy.yaml").fixes[1].number("weight"), 2);
  std::string three = kScenario;
  three.replace(three.find("tolerance: 0.2"), 14, "tolerance: 0.2\n    weight: 3");
  EXPECT_EQ(scenario::parse_scenario(three, "toy.yaml").fixes[1].number("weight"), 3);
  for (const auto& [value, want] : std::vector<std::pair<std::string, std::string>>{
           {"9", "toy.yaml:21:13: fixes.toy_fix.weight: expected an integer in 1..5 (toys are light), got 9"},
           {"2.5", "toy.yaml:21:13: fixes.toy_fix.weight: expected an integer in 1..5 (toys are light), got 2.5"},
           {"0", "toy.yaml:21:13: fixes.toy_fix.weight: expected a positive integer, got 0"}}) {
    std::string bad = kScenario;
    bad.replace(bad.find("tolerance: 0.2"), 14, "tolerance: 0.2\n    weight: " + value);
    try {
      (void)scenario::parse_scenario(bad, "toy.yaml");
      ADD_FAILURE() << "weight " << value << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), want);
    }
  }
}

// A fix says what selecting it implies for a file that does not say (imply_scenario) and which
// scenarios it cannot run in (check_scenario), refused at load with the field's line and column.
TEST_F(ToyFix, ItsScenarioImplicationAndCheckRunWhenTheScenarioLoads) {
  fixes::FixSpec& toy = fixes::mutable_fix_spec(kToy);
  toy.imply_scenario = [](scenario::Scenario& s, const std::function<bool(const std::string&)>& given) {
    if (!given("host")) s.host = "cpp";
  };
  toy.check_scenario = [](const scenario::Scenario& s) -> std::optional<fixes::ScenarioProblem> {
    if (s.batch.packed_tokens <= 4096) return std::nullopt;
    return fixes::ScenarioProblem{"batch.packed_tokens", "at most 4096 tokens for the toy",
                                  std::to_string(s.batch.packed_tokens)};
  };
  EXPECT_EQ(scenario::parse_scenario(kScenario, "toy.yaml").host, "cpp");
  const std::string eager = std::string(kScenario) + "host: eager\n";
  EXPECT_EQ(scenario::parse_scenario(eager, "toy.yaml").host, "eager");
  std::string big = kScenario;
  big.replace(big.find("packed_tokens: 128"), 18, "packed_tokens: 8192");
  try {
    (void)scenario::parse_scenario(big, "toy.yaml");
    FAIL() << "a scenario the toy cannot run in was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "toy.yaml:12:18: batch.packed_tokens: expected at most 4096 tokens for the toy, got 8192");
  }
}

TEST_F(ToyFix, PlanRunsEachVariantWithTheOthersAtTheirDefaults) {
  const scenario::Scenario s = scenario::parse_scenario(kScenario, "toy.yaml");
  const pipeline::RunPlan plan = pipeline::plan_jobs({s});
  ASSERT_EQ(plan.jobs.size(), 4u);  // packing x 2, toy x 2
  const pipeline::Job& fast = plan.jobs[3];
  EXPECT_EQ(fast.fix, kToy);
  EXPECT_EQ(fast.variant, "fast");
  EXPECT_FALSE(fast.baseline);
  EXPECT_EQ(fast.opts.fix_variants.at(kToy), 1);
  EXPECT_EQ(fixes::packing::variant(fast.opts),
            fixes::packing::Variant::Rebuild);  // the other fix stays at its baseline
  EXPECT_EQ(fast.key, "toy/L2/packing=rebuild/offload=off/moe=loop/toy_fix=fast");
  EXPECT_EQ(fast.base_key, "toy/L2/packing=rebuild/offload=off/moe=loop/toy_fix=slow");
  // The toy baseline and the packing baseline are one step: one trace serves both.
  EXPECT_EQ(plan.jobs[2].key, plan.jobs[0].key);
  EXPECT_EQ(plan.produce_order.size(), 3u);
  EXPECT_EQ(pipeline::job_label(s, fast), "toy toy_fix=fast");
  EXPECT_THROW((void)pipeline::step_options(s, kToy, "quick", 2), InputError);
}

TEST_F(ToyFix, StepProgramRunsItsLayerOpsAfterThePackingMetadata) {
  const scenario::Scenario s = scenario::parse_scenario(kScenario, "toy.yaml");
  const pipeline::RunPlan plan = pipeline::plan_jobs({s});
  const program::Program slow = program::build_step_program(plan.jobs[2].opts);
  const program::Program fast = program::build_step_program(plan.jobs[3].opts);
  // The baseline reads the flag back once per layer (2 layers, no checkpoint recompute
  // without offload); the fix does not.
  EXPECT_EQ(program::program_stats(slow).host_syncs - program::program_stats(fast).host_syncs, 2);
  EXPECT_EQ(program::program_stats(fast).kernels - program::program_stats(slow).kernels, 2);
  // In each layer, right after packing's metadata range, with the layer's index: the hooks
  // run in registry order at their point, and the step-wide state counts the layers.
  std::vector<std::pair<std::string, int>> reads;
  for (std::size_t i = 0; i < slow.ops.size(); ++i) {
    const program::Op& op = slow.ops[i];
    if (op.kind != program::OpKind::RangePush || op.name != "toy_fix") continue;
    ASSERT_GE(i, 1u);
    EXPECT_EQ(slow.ops[i - 1].kind, program::OpKind::RangePop);
    const auto open =
        std::find_if(slow.ops.rbegin() + static_cast<std::ptrdiff_t>(slow.ops.size() - i), slow.ops.rend(),
                     [](const program::Op& o) { return o.kind == program::OpKind::RangePush; });
    ASSERT_NE(open, slow.ops.rend());
    EXPECT_EQ(open->name, "packing_metadata");
    reads.emplace_back(slow.ops[i + 1].name, slow.ops[i + 1].layer);
  }
  EXPECT_EQ(reads, (std::vector<std::pair<std::string, int>>{{"aten::item toy.flag layer 0", 0},
                                                             {"aten::item toy.flag layer 1", 1}}));
  // Without the toy registered, options naming it are refused, and without it the program
  // is the shipped one: no toy operator.
  fixes::unregister_fix(kToy);
  EXPECT_THROW((void)program::build_step_program(plan.jobs[2].opts), InputError);
  program::StepOptions without = plan.jobs[2].opts;
  without.fix_variants.erase(kToy);
  const program::Program plain = program::build_step_program(without);
  EXPECT_EQ(program::program_stats(slow).host_syncs - program::program_stats(plain).host_syncs, 2);
  EXPECT_EQ(std::count_if(plain.ops.begin(), plain.ops.end(), [](const program::Op& o) { return o.name == "toy_fix"; }),
            0);
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
    EXPECT_NE(std::string(e.what()).find("expected packing, offload, moe, logging-syncs, toy or all"),
              std::string::npos)
        << e.what();
  }
}

// The options a fix declares reach its predictor by flag, checked against their declared kind
// and range before any fix runs; a flag no fix declares is refused.
TEST_F(ToyFix, ItsPredictOptionsAreCheckedAndReadByFlag) {
  model::ExplicitPredictInputs in;
  in.fixes = {"toy"};
  in.layers = 3;
  in.values["toy-ms"] = "2";
  in.values["toy-count"] = "2";
  EXPECT_DOUBLE_EQ(model::predict_explicit(in).fixes.at(0).saving_ns.value, 3 * 2e6 * 2);
  auto refused = [&](const std::string& want) {
    try {
      (void)model::predict_explicit(in);
      ADD_FAILURE() << "accepted; wanted: " << want;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  in.values["toy-count"] = "10";
  refused("--toy-count '10': expected an integer in 1..9 (toys come in ones)");
  in.values["toy-count"] = "1";
  in.values["toy-ms"] = "fast";
  refused("--toy-ms 'fast': expected a number, VALUE:LO:HI or VALUE+-DELTA");
  in.values.erase("toy-ms");
  in.values["nobodys-ms"] = "1";
  refused("predict: --nobodys-ms is no fix's option");
}

// A flag names one fix's value: a second fix declaring it, or one declaring it twice, is refused
// at registration.
TEST_F(ToyFix, PredictOptionFlagsAreUniqueAcrossFixes) {
  fixes::FixSpec f;
  f.id = static_cast<fixes::Fix>(43);
  f.name = "another_toy";
  f.variants = {"a", "b"};
  f.predict_options = {{"per-layer-ms", fixes::PredictOption::Kind::Time, "another: s", {0, 0, ""}, "", ""}};
  try {
    (void)fixes::register_fix(f);
    FAIL() << "a flag packing declares was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "predict option --per-layer-ms is taken by packing");
  }
  f.predict_options = {{"x", fixes::PredictOption::Kind::Time, "x", {0, 0, ""}, "", ""},
                       {"x", fixes::PredictOption::Kind::Time, "x", {0, 0, ""}, "", ""}};
  EXPECT_THROW((void)fixes::register_fix(f), std::invalid_argument);
  f.predict_options = {{"n", fixes::PredictOption::Kind::Integer, "n without a range", {0, 0, ""}, "", ""}};
  EXPECT_THROW((void)fixes::register_fix(f), std::invalid_argument);
  EXPECT_FALSE(fixes::find_fix("another_toy"));
}

TEST_F(ToyFix, PredictFromATraceRunsItsDetectorAfterTheShippedOnes) {
  const Trace t = read_trace(test::source_dir() / "tests" / "fixtures" / "torch" / "item_loop_l8_h200.json.gz");
  const model::PredictionReport rep = model::predict_from_trace(t, {}, "item_loop");
  ASSERT_FALSE(rep.fixes.empty());
  EXPECT_EQ(rep.fixes.back().fix, "toy_fix");
  EXPECT_EQ(rep.fixes.back().reason, "the toy detector finds nothing");
  EXPECT_EQ(rep.fixes.front().fix, "packing");
}

// A run's prediction from its baseline's trace (pipeline/src/prediction.cpp): the scenario's
// numbers for a fix reach its detector, and its trace_predict_options hook runs after them, so
// what it sets wins (it used to run first and have the scenario's map replace what it set).
TEST_F(ToyFix, RunPredictionTakesTheScenarioNumbersThenItsHook) {
  fixes::FixSpec& f = fixes::mutable_fix_spec(kToy);
  f.trace_predict_options = [](const scenario::FixSelection&, const program::StepOptions&,
                               model::TracePredictOptions& po) {
    po.fix_numbers["toy_fix"]["weight"] = 5;  // the scenario gives 3
    po.fix_numbers["toy_fix"]["extra"] = 1;   // the scenario gives none
  };
  std::map<std::string, double> seen;
  f.detect = [&seen](const model::detail::TraceFacts& facts, model::PredictionReport&) {
    if (const auto it = facts.opt.fix_numbers.find("toy_fix"); it != facts.opt.fix_numbers.end()) seen = it->second;
  };
  std::string three = kScenario;
  three.replace(three.find("tolerance: 0.2"), 14, "tolerance: 0.2\n    weight: 3");
  const scenario::Scenario s = scenario::parse_scenario(three, "toy.yaml");
  const pipeline::RunPlan plan = pipeline::plan_jobs({s});
  const Trace t = read_trace(test::source_dir() / "tests" / "fixtures" / "torch" / "item_loop_l8_h200.json.gz");
  model::Environment env;
  (void)pipeline::predict_baseline(t, "item_loop", plan.jobs.front(), s, "simulated", std::nullopt, nullptr, env);
  EXPECT_EQ(seen, (std::map<std::string, double>{{"extra", 1}, {"weight", 5}}));
}

TEST(FixRegistry, ShippedFixesKeepTheirNamesVariantsAndOrder) {
  const auto& r = fixes::fix_registry();
  ASSERT_GE(r.size(), 3u);
  EXPECT_EQ(r[0].name, "packing");
  EXPECT_EQ(r[1].name, "offload");
  EXPECT_EQ(r[2].name, "moe_routing");
  EXPECT_EQ(scenario::fix_variants(fixes::packing::kFix), (std::vector<std::string>{"rebuild", "cached", "device"}));
  EXPECT_EQ(scenario::fix_variants(fixes::offload::kFix), (std::vector<std::string>{"single", "double", "prefetch"}));
  EXPECT_EQ(scenario::fix_variants(fixes::moe_routing::kFix), (std::vector<std::string>{"loop", "sorted", "device"}));
  // The typed enums index the registry's names.
  EXPECT_EQ(fixes::packing::variant_name(fixes::packing::Variant::Device), "device");
  EXPECT_EQ(fixes::offload::variant_name(fixes::offload::Variant::Prefetch), "prefetch");
  EXPECT_EQ(fixes::moe_routing::variant_name(fixes::moe_routing::Variant::Sorted), "sorted");
  EXPECT_EQ(fixes::find_fix("moe"), fixes::moe_routing::kFix);
  EXPECT_EQ(fixes::find_fix("moe-routing"), fixes::moe_routing::kFix);
  EXPECT_FALSE(fixes::find_fix("mask"));
  EXPECT_THROW((void)fixes::packing::to_variant("lazy"), InputError);
  EXPECT_THROW(fixes::register_fix(fixes::FixSpec{}), std::invalid_argument);  // id 0 is packing's
  fixes::unregister_fix(fixes::packing::kFix);                                 // the shipped ones stay
  EXPECT_EQ(fixes::fix_registry()[0].name, "packing");
}

// Each fix folder installs every hook the layers call for it (fixes/<name>/src/
// registry_entry.cpp): one it forgot would leave a layer silently without the fix (a step
// without its operators, a trace never searched for it, an edit that no longer parses).
TEST(FixRegistry, EachFixFolderInstallsItsHooks) {
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(f.set_step_option);
    EXPECT_TRUE(f.step_option_name);
    EXPECT_TRUE(f.build_program_layer || f.build_program_schedule);
    EXPECT_TRUE(f.detect);
    EXPECT_TRUE(f.replay_edit);
    EXPECT_FALSE(f.what_if_edits.empty());
    for (const auto& w : f.what_if_edits) EXPECT_TRUE(f.variant_index(w.variant)) << w.edit;
    for (const auto& w : f.word_keys)
      EXPECT_NE(std::find(f.scenario_keys.begin(), f.scenario_keys.end(), w.key), f.scenario_keys.end()) << w.key;
  }
  // Each also predicts from explicit values, through options it declares (the CLI adds them by
  // looping over the registry), and says what a scenario implies for them.
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(f.has_inputs);
    EXPECT_TRUE(f.predict);
    EXPECT_FALSE(f.predict_options.empty());
    EXPECT_TRUE(f.predict_from_scenario);
  }
  // predict's default what-if list: every fix's edits, in registry order.
  EXPECT_EQ(replay::registered_what_if_edits(),
            (std::vector<std::string>{"packing-cache", "packing-device", "double-buffer", "prefetch", "moe-sorted",
                                      "moe-device", "logging-every", "logging-deferred"}));
}

}  // namespace
}  // namespace syncscope
