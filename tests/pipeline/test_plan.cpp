// Planning a run: scenarios with overrides, jobs, shared traces, produce order.
#include <gtest/gtest.h>

#include "pipeline_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "test_paths.hpp"

namespace syncscope::pipeline {
namespace {

TEST(PipelinePlan, OverridesApplyAndNamesMustDiffer) {
  test::TempDir dir;
  RunRequest r;
  r.scenarios = {test::write_scenario(dir.path(), "a.yaml").string()};
  r.layers = 2;
  r.repeats = 7;
  r.warmup = 3;
  std::vector<scenario::Scenario> s = load_run_scenarios(r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].layers(), 2);
  EXPECT_EQ(s[0].measure.repeat_steps, 7);
  EXPECT_EQ(s[0].measure.warmup_steps, 3);

  r.scenarios.push_back(test::write_scenario(dir.path(), "b.yaml").string());  // same name "tiny"
  try {
    load_run_scenarios(r);
    FAIL() << "two scenarios named tiny were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scenario name tiny given twice"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("b.yaml"), std::string::npos) << e.what();
  }
}

TEST(PipelinePlan, LayersOverrideClearsTheSweep) {
  test::TempDir dir;
  std::string text = test::tiny_scenario();
  text += "  layer_sweep: [2, 4]\n";
  RunRequest r;
  r.scenarios = {test::write_scenario(dir.path(), "s.yaml", text).string()};
  EXPECT_EQ(load_run_scenarios(r)[0].measure.layer_sweep.size(), 2u);
  r.layers = 3;
  const scenario::Scenario s = load_run_scenarios(r)[0];
  EXPECT_TRUE(s.measure.layer_sweep.empty());
  EXPECT_EQ(s.layers(), 3);
}

TEST(PipelinePlan, JobsShareTracesOfIdenticalStepsAndBaselinesComeFirst) {
  test::TempDir dir;
  RunRequest r;
  r.scenarios = {test::write_scenario(dir.path(), "a.yaml").string()};
  const std::vector<scenario::Scenario> scenarios = load_run_scenarios(r);
  const RunPlan plan = plan_jobs(scenarios);
  ASSERT_EQ(plan.jobs.size(), 4u);  // packing x2, offload x2
  // packing=rebuild reloads as Unsloth does by default (double buffering), and
  // offload=double runs packing at its baseline (rebuild): one step, one trace.
  const Job& rebuild = plan.jobs[0];
  const Job& single = plan.jobs[2];
  const Job& dbl = plan.jobs[3];
  EXPECT_EQ(rebuild.variant, "rebuild");
  EXPECT_TRUE(rebuild.baseline);
  EXPECT_EQ(single.variant, "single");
  EXPECT_TRUE(single.baseline);
  EXPECT_EQ(dbl.variant, "double");
  EXPECT_EQ(rebuild.key, dbl.key);
  EXPECT_NE(rebuild.key, single.key);
  EXPECT_EQ(plan.first_job_of_key.size(), 3u);
  ASSERT_EQ(plan.produce_order.size(), 3u);
  EXPECT_EQ(plan.produce_order[0], 0u);  // baselines first: packing's (shared with double), offload's
  EXPECT_EQ(plan.produce_order[1], 2u);
  EXPECT_TRUE(plan.baseline_keys.count(plan.jobs[plan.produce_order[0]].key));
  EXPECT_TRUE(plan.baseline_keys.count(plan.jobs[plan.produce_order[1]].key));
  EXPECT_FALSE(plan.baseline_keys.count(plan.jobs[plan.produce_order[2]].key));
  for (const Job& j : plan.jobs) {
    EXPECT_EQ(j.layers, 4);
    EXPECT_EQ(j.base_key, j.fix == fixes::packing::kFix ? rebuild.key : single.key);
    ASSERT_TRUE(j.network.has_value());  // the network each step builds
    // tiny.yaml by hand (full training, untied LM head, no q/k norms: not a Qwen3 name):
    //   embedding and LM head 2 x 1000 x 256                       =   512,000
    //   per layer: q 256x(4x64) 65,536 + k, v 2 x 256x(2x64) 65,536 + o 65,536
    //              + gate, up, down 3 x 256x512 393,216 + 2 norms 512 =   590,336
    //   4 layers                                                    = 2,361,344
    //   final norm                                                  =       256
    //   total                                                       = 2,873,600, all trainable
    EXPECT_EQ(j.network->parameters, 2873600);
    EXPECT_EQ(j.network->trainable_parameters, 2873600);
    EXPECT_FALSE(j.network->tied_embeddings);
  }
}

// A shipped scenario's network against the model's published size. Qwen3-0.6B's model card
// (huggingface.co/Qwen/Qwen3-0.6B) gives 0.6B parameters, 0.44B without embeddings, from
// its config.json (hidden 1024, 28 layers, 16 query / 8 key-value heads of 128, MLP 3072,
// vocabulary 151,936, tied embeddings). By hand:
//   embedding (the LM head is tied to it) 151,936 x 1024         =   155,582,464
//   per layer: q 1024x2048 2,097,152 + k, v 2 x 1024x1024 2,097,152 + o 2048x1024 2,097,152
//              + gate, up, down 3 x 1024x3072 9,437,184 + q/k norms 2 x 128
//              + 2 layer norms 2 x 1024                       =    15,730,944
//   28 layers                                                 =   440,466,432 (the card's 0.44B)
//   final norm                                                =         1,024
//   base                                                      =   596,049,920
// QLoRA adapters, r = 16 on q, k, v, o, gate, up, down (scenario: Unsloth's example), r x
// (in + out) each: 16 x (3072 + 2048 + 2048 + 3072 + 4096 x 3) = 360,448 per layer,
// x 28 = 10,092,544, the only trainable elements; total 606,142,464.
TEST(PipelinePlan, ShippedQwen3NetworkHasThePublishedParameterCount) {
  RunRequest r;
  r.scenarios = {(test::source_dir() / "scenarios/qwen3-0.6b.yaml").string()};
  const RunPlan plan = plan_jobs(load_run_scenarios(r));
  ASSERT_FALSE(plan.jobs.empty());
  for (const Job& j : plan.jobs) {
    ASSERT_TRUE(j.network.has_value());
    EXPECT_EQ(j.network->parameters, 606142464);
    EXPECT_EQ(j.network->parameters - j.network->trainable_parameters, 596049920);
    EXPECT_EQ(j.network->trainable_parameters, 10092544);
    EXPECT_TRUE(j.network->tied_embeddings);
    EXPECT_EQ(j.network->training, "qlora");
  }
}

TEST(PipelinePlan, StepOptionsKeepOtherFixesAtBaselineAndOffloadEveryLayer) {
  test::TempDir dir;
  RunRequest r;
  r.scenarios = {test::write_scenario(dir.path(), "a.yaml").string()};
  const scenario::Scenario s = load_run_scenarios(r)[0];
  const program::StepOptions o = step_options(s, fixes::offload::kFix, "double", 3);
  EXPECT_EQ(o.layers, 3);
  EXPECT_EQ(fixes::offload::variant(o), fixes::offload::Variant::Double);
  EXPECT_EQ(fixes::packing::variant(o), fixes::packing::Variant::Rebuild);
  EXPECT_EQ(fixes::moe_routing::variant(o), fixes::moe_routing::Variant::Loop);
  EXPECT_EQ(fixes::offload::budget_bytes(o), 0);
  EXPECT_EQ(fixes::offload::prefetch_depth(o), 2);
  EXPECT_EQ(variant_option_key(o), "L3/packing=rebuild/offload=double/moe=loop");
  scenario::Scenario no_offload = s;
  no_offload.offload = false;
  EXPECT_FALSE(fixes::offload::variant(step_options(no_offload, fixes::packing::kFix, "cached", 3)));
}

// Issue 39: a 127-character name of 2-byte characters (254 bytes, a valid name) made a trace
// file name over 255 bytes ("File name too long" at write): the stem is cut, with a hash.
TEST(PipelinePlan, LongFileStemsAreCutWithAHashOfTheWhole) {
  Job j;
  j.fix = fixes::packing::kFix;
  j.variant = "rebuild";
  std::string a;
  for (int i = 0; i < 127; ++i) a += "\u00e9";
  const std::string b = a.substr(0, a.size() - 2) + "e";  // differs in its last character only
  const std::string sa = file_stem(a, j, true), sb = file_stem(b, j, true);
  EXPECT_EQ(sa.size(), kMaxFileStem);
  EXPECT_EQ(sb.size(), kMaxFileStem);
  EXPECT_NE(sa, sb);
  EXPECT_EQ(sa.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."),
            std::string::npos);
  EXPECT_EQ(file_stem(std::string(150, 'x'), j, false), std::string(150, 'x') + "__packing-rebuild");  // fits: kept
}

TEST(PipelinePlan, FileStemsAreSafeAndLabelsNameTheDepthInSweeps) {
  Job j;
  j.fix = fixes::moe_routing::kFix;
  j.variant = "device";
  j.layers = 8;
  EXPECT_EQ(file_stem("my scen/x", j, false), "my_scen_x__moe_routing-device");
  EXPECT_EQ(file_stem("s", j, true), "s__moe_routing-device__L8");
  scenario::Scenario s;
  s.name = "s";
  EXPECT_EQ(job_label(s, j), "s moe_routing=device");
  s.measure.layer_sweep = {4, 8};
  EXPECT_EQ(job_label(s, j), "s moe_routing=device L=8");
}

}  // namespace
}  // namespace syncscope::pipeline
