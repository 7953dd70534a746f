// The logging fix (fixes/logging/logging.hpp) end to end from its own folder: scenario keys,
// the run plan, the step program (its reads and where they sit), the simulator over steps,
// and predict --trace on the simulated traces. The simulator and the closed form share
// assumptions (the GPU idles behind a read until the host queues more): agreement between
// them is consistency, not accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope {
namespace {

using fixes::logging::kLogging;

const char* kTiny = R"(name: tiny-logging
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
  logging:
    variants: [item, every, deferred]
    logging_steps: 4
measure:
  repeat_steps: 8
)";

class LoggingFix : public ::testing::Test {
 protected:
  void SetUp() override { fixes::logging::register_logging_fix(); }

  static const pipeline::Job& job(const pipeline::RunPlan& plan, const std::string& variant) {
    for (const auto& j : plan.jobs)
      if (j.fix == kLogging && j.variant == variant) return j;
    throw std::runtime_error("no logging job " + variant);
  }
  // Ops after the optimizer's range closes.
  static std::vector<program::Op> after_optimizer(const program::Program& p) {
    std::size_t i = 0, open = 0;
    for (; i < p.ops.size(); ++i)
      if (p.ops[i].kind == program::OpKind::RangePush && p.ops[i].name == "optimizer") break;
    for (open = 0; i < p.ops.size(); ++i) {
      if (p.ops[i].kind == program::OpKind::RangePush) ++open;
      if (p.ops[i].kind == program::OpKind::RangePop && --open == 0) break;
    }
    return {p.ops.begin() + static_cast<std::ptrdiff_t>(std::min(i + 1, p.ops.size())), p.ops.end()};
  }
  // The shipped scenario's `variant` at 2 layers (the pattern, not the depth: keeps the tests
  // fast), simulated for `steps` steps on the H200 profile.
  static Trace shipped_scenario_trace(const std::string& variant, int steps) {
    scenario::Scenario s = scenario::load_scenario(SYNCSCOPE_LOGGING_SCENARIO);
    s.measure.layers_override = 2;
    const pipeline::RunPlan plan = pipeline::plan_jobs({s});
    sim::SimOptions so;
    so.steps = steps;
    return sim::simulate(program::build_step_program(job(plan, variant).opts), model::load_gpu_profile("H200"), so);
  }
  static int count(const std::vector<program::Op>& ops, program::OpKind kind) {
    return static_cast<int>(
        std::count_if(ops.begin(), ops.end(), [&](const program::Op& o) { return o.kind == kind; }));
  }
};

TEST_F(LoggingFix, ScenarioKeysAndTheirBounds) {
  const scenario::Scenario s = scenario::parse_scenario(kTiny, "tiny.yaml");
  ASSERT_EQ(s.fixes.size(), 2u);
  EXPECT_EQ(s.fixes[1].fix, kLogging);
  EXPECT_EQ(s.fixes[1].numbers.at("logging_steps"), 4);
  std::string bad = kTiny;
  bad.replace(bad.find("logging_steps: 4"), 16, "logging_steps: 0.5");
  EXPECT_THROW((void)pipeline::plan_jobs({scenario::parse_scenario(bad, "tiny.yaml")}), InputError);
  // A run of 8 steps with a read every 3 would not hold whole windows.
  std::string odd = kTiny;
  odd.replace(odd.find("logging_steps: 4"), 16, "logging_steps: 3");
  try {
    (void)pipeline::plan_jobs({scenario::parse_scenario(odd, "tiny.yaml")});
    FAIL() << "a window that does not divide repeat_steps was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not divide measure.repeat_steps 8"), std::string::npos) << e.what();
  }
}

TEST_F(LoggingFix, OtherFixesRunsAndKeysStayAsTheyWere) {
  const pipeline::RunPlan plan = pipeline::plan_jobs({scenario::parse_scenario(kTiny, "tiny.yaml")});
  ASSERT_EQ(plan.jobs.size(), 5u);  // packing x 2, logging x 3
  EXPECT_EQ(plan.jobs[0].key, "tiny-logging/L2/packing=rebuild/offload=off/moe=loop");
  EXPECT_EQ(plan.jobs[0].opts.fix_variants.count(kLogging), 0u);
  EXPECT_EQ(job(plan, "deferred").key, "tiny-logging/L2/packing=rebuild/offload=off/moe=loop/logging=deferred");
  EXPECT_EQ(job(plan, "every").base_key, "tiny-logging/L2/packing=rebuild/offload=off/moe=loop/logging=item");
}

TEST_F(LoggingFix, StepProgramReadsAfterTheOptimizerAsEachVariantDoes) {
  const pipeline::RunPlan plan = pipeline::plan_jobs({scenario::parse_scenario(kTiny, "tiny.yaml")});
  const program::Program plain = program::build_step_program(plan.jobs[0].opts);
  const program::Program item = program::build_step_program(job(plan, "item").opts);
  const program::Program every = program::build_step_program(job(plan, "every").opts);
  const program::Program deferred = program::build_step_program(job(plan, "deferred").opts);
  // Without the fix under test: one loss read after the optimizer, as before the fix existed.
  EXPECT_EQ(count(after_optimizer(plain), program::OpKind::StreamSync), 1);
  // item: the loss and the gradient norm, each a stream sync, and no other read.
  const auto a = after_optimizer(item);
  EXPECT_EQ(count(a, program::OpKind::StreamSync), 2);
  EXPECT_EQ(program::program_stats(item).host_syncs - program::program_stats(plain).host_syncs, 1);
  // every: the same two reads, issued once every 4 steps.
  const auto e = after_optimizer(every);
  EXPECT_EQ(count(e, program::OpKind::StreamSync), 2);
  for (const auto& op : e)
    if (op.kind == program::OpKind::StreamSync) {
      EXPECT_EQ(op.period, 4);
    }
  EXPECT_NEAR(program::program_stats(item).mean_host_syncs - program::program_stats(every).mean_host_syncs, 2 - 2.0 / 4,
              1e-12);
  // deferred: no stream sync; a wait on the event the step before recorded, then the record.
  const auto d = after_optimizer(deferred);
  EXPECT_EQ(count(d, program::OpKind::StreamSync), 0);
  EXPECT_EQ(count(d, program::OpKind::EventSync), 1);
  EXPECT_EQ(count(d, program::OpKind::EventRecord), 1);
  EXPECT_EQ(deferred.num_events, plain.num_events + 1);
  // Every variant clips the gradients before the optimizer; the plain step does not.
  for (const program::Program* p : {&item, &every, &deferred})
    EXPECT_EQ(std::count_if(p->ops.begin(), p->ops.end(), [](const auto& o) { return o.name == "clip_grad_norm_"; }),
              1);
  EXPECT_EQ(std::count_if(plain.ops.begin(), plain.ops.end(),
                          [](const auto& o) { return o.name == "clip_grad_norm_"; }),
            0);
  for (const program::Program* p : {&item, &every, &deferred}) EXPECT_TRUE(program::check_buffer_safety(*p).empty());
}

// The scenario shipped in this folder, simulated on the H200 profile: per-step reads show as
// syncs in the trace, `every` reads on 1 step in 5, and predict --trace finds the pattern in
// the baseline's trace and not in the fixed ones.
TEST_F(LoggingFix, SimulatedRunsAndPredictFromTheirTraces) {
  scenario::Scenario s = scenario::load_scenario(SYNCSCOPE_LOGGING_SCENARIO);
  s.measure.layers_override = 2;  // the pattern, not the depth: keep the test fast
  const pipeline::RunPlan plan = pipeline::plan_jobs({s});
  const model::GpuProfile h200 = model::load_gpu_profile("H200");
  sim::SimOptions so;
  so.steps = s.measure.repeat_steps;
  std::map<std::string, Trace> traces;
  std::map<std::string, double> step_ns;
  for (const char* v : {"item", "every", "deferred"}) {
    Trace t = sim::simulate(program::build_step_program(job(plan, v).opts), h200, so);
    const model::PredictionReport rep = model::predict_from_trace(t, {}, v);
    const auto it = std::find_if(rep.fixes.begin(), rep.fixes.end(),
                                 [](const model::FixPrediction& f) { return f.fix == "logging"; });
    ASSERT_NE(it, rep.fixes.end()) << v;
    if (std::string(v) == "item") {
      EXPECT_TRUE(it->applicable) << it->reason;
      EXPECT_GT(it->saving_ns.value, 0);
      EXPECT_NEAR(it->parameters.at("reads_per_step").value, 2, 1e-9);
      step_ns[v] = it->step_time_ns ? it->step_time_ns->value : 0;
    } else {
      // every reads in 1 iteration of 5, deferred in none: no per-step pattern left.
      EXPECT_FALSE(it->applicable) << v;
      EXPECT_NE(it->reason.find("no per-step logging reads"), std::string::npos) << it->reason;
    }
    traces.emplace(v, std::move(t));
  }
  // The simulated steps: both fixes are faster than the baseline.
  auto mean_step = [](const Trace& t) {
    const model::PredictionReport rep = model::predict_from_trace(t, {}, "t");
    for (const auto& f : rep.fixes)
      if (f.step_time_ns) return f.step_time_ns->value;
    return 0.0;
  };
  const double item = mean_step(traces.at("item")), every = mean_step(traces.at("every")),
               deferred = mean_step(traces.at("deferred"));
  ASSERT_GT(item, 0);
  EXPECT_LT(deferred, item);
  EXPECT_LT(every, item);
}

// The fix's what-if edits, from its folder through the registry (FixSpec::replay_edit): on
// the baseline's simulated trace, deferred removes every read, every:N all but those of each
// N-th iteration; both save step time in the replay, deferred more; predict's default list
// carries them beside the closed forms.
TEST_F(LoggingFix, ReplayEditsOnTheBaselineTrace) {
  const Trace t = shipped_scenario_trace("item", 8);
  const model::TracePredictOptions opts;
  const model::PredictionReport closed = model::predict_from_trace(t, opts, "item");

  const replay::WhatIfEdit e = replay::parse_what_if("logging-every:4");
  EXPECT_EQ(e.kind, replay::WhatIfEdit::Kind::Registered);
  EXPECT_EQ(e.fix, kLogging);
  EXPECT_EQ(e.variant, "every");
  EXPECT_EQ(e.argument, "4");
  // The edit checks its own argument when applied (N = 1 is the baseline); one that takes
  // none refuses one at parse time.
  {
    replay::ReplayGraph g = replay::build_replay_graph(t);
    EXPECT_THROW((void)replay::apply_what_if(t, g, replay::parse_what_if("logging-every:1"), opts), InputError);
    EXPECT_THROW((void)replay::apply_what_if(t, g, replay::parse_what_if("logging-every:x"), opts), InputError);
  }
  EXPECT_THROW((void)replay::parse_what_if("logging-deferred:3"), InputError);
  EXPECT_NE(replay::what_if_forms().find("logging-every[:N]"), std::string::npos) << replay::what_if_forms();

  const replay::ReplayReport rep =
      replay::replay_what_if(t, {"logging-deferred", "logging-every:4", "logging-every:2"}, opts, closed);
  ASSERT_EQ(rep.what_if.size(), 3u);
  const auto& deferred = rep.what_if[0];
  const auto& every4 = rep.what_if[1];
  const auto& every2 = rep.what_if[2];
  for (const auto* w : {&deferred, &every4, &every2}) {
    EXPECT_TRUE(w->applicable) << w->edit << ": " << w->reason;
    ASSERT_TRUE(w->saving_ns.has_value()) << w->edit;
    EXPECT_GT(*w->saving_ns, 0) << w->edit;
  }
  // Beside each edit: the logging fix's own closed form.
  EXPECT_NE(deferred.closed_form.find("logging deferred"), std::string::npos) << deferred.closed_form;
  // The same edit through the graph: 2 reads per step, all 16 removed by deferred; every:4
  // keeps iterations 4 and 8 (4 reads), every:2 keeps 4 iterations (8 reads).
  auto selected = [&](const std::string& text) {
    replay::ReplayGraph g = replay::build_replay_graph(t);
    return replay::apply_what_if(t, g, replay::parse_what_if(text), opts).selected;
  };
  EXPECT_EQ(selected("logging-deferred"), 16u);
  EXPECT_EQ(selected("logging-every:4"), 12u);
  EXPECT_EQ(selected("logging-every:2"), 8u);
  // The median step: every:4 removes the reads of 6 of 8 steps, so its median step saves as
  // deferred's (no read) does; every:2 of half the steps, so its median lies between.
  EXPECT_LE(static_cast<double>(*every2.saving_ns), 1.01 * static_cast<double>(*deferred.saving_ns));
  // The default list (no explicit edit) carries the fix's edits.
  const replay::ReplayReport all = replay::replay_what_if(t, {}, opts, closed);
  EXPECT_TRUE(std::any_of(all.what_if.begin(), all.what_if.end(),
                          [](const auto& w) { return w.edit == "logging-deferred" && w.applicable; }));
}

// The scenario's logging_steps reaches the closed form (TracePredictOptions::fix_numbers, as
// the run pipeline passes it): every saves S (N - 1) / N with that N.
TEST_F(LoggingFix, TheScenariosWindowReachesTheClosedForm) {
  const Trace t = shipped_scenario_trace("item", 4);
  auto every = [&](const model::TracePredictOptions& o) {
    const model::PredictionReport rep = model::predict_from_trace(t, o, "item");
    for (const auto& f : rep.fixes)
      if (f.fix == "logging" && f.variant == "every") return f;
    throw std::runtime_error("no logging every prediction");
  };
  model::TracePredictOptions five;
  five.fix_numbers["logging"]["logging_steps"] = 5;
  const model::FixPrediction by_default = every({}), from_scenario = every(five);
  ASSERT_TRUE(by_default.applicable && from_scenario.applicable);
  EXPECT_EQ(by_default.parameters.at("N").value, fixes::logging::kDefaultLoggingSteps);
  EXPECT_EQ(from_scenario.parameters.at("N").value, 5);
  const double S = by_default.parameters.at("S_ns").value;
  EXPECT_NEAR(by_default.saving_ns.value, S * 9 / 10, 1e-6 * S);
  EXPECT_NEAR(from_scenario.saving_ns.value, S * 4 / 5, 1e-6 * S);
}

// predict --fix logging from explicit values, through the options the fix declares in its folder
// (FixSpec::predict_options): the same closed form as from a trace, S (N - 1) / N and
// max(S - r, 0); the scenario's logging_steps fills N when --logging-steps is not given.
TEST_F(LoggingFix, PredictFromValuesThroughTheOptionsItDeclares) {
  model::ExplicitPredictInputs in;
  in.fixes = {"logging"};
  in.values["logging-read-ms"] = "2";
  in.values["logging-steps"] = "4";
  in.round_trip_us = "30";
  const model::PredictionReport rep = model::predict_explicit(in);
  ASSERT_EQ(rep.fixes.size(), 2u);
  EXPECT_EQ(rep.fixes[0].variant, "every");
  EXPECT_NEAR(rep.fixes[0].saving_ns.value, 2e6 * 3 / 4, 1);
  EXPECT_EQ(rep.fixes[1].variant, "deferred");
  EXPECT_NEAR(rep.fixes[1].saving_ns.value, 2e6 - 30e3, 1);
  // Without --fix, its inputs choose it; without a round trip it says what to give.
  in.fixes.clear();
  in.round_trip_us.clear();
  try {
    (void)model::predict_explicit(in);
    FAIL() << "logging predicted without a round trip";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--round-trip-us R or --gpu"), std::string::npos) << e.what();
  }
  // --logging-steps is bounded as the scenario key is.
  in.round_trip_us = "30";
  in.values["logging-steps"] = "0";
  try {
    (void)model::predict_explicit(in);
    FAIL() << "--logging-steps 0 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--logging-steps '0': expected an integer in 1..100000"), std::string::npos)
        << e.what();
  }
  // From the scenario: its fixes.logging.logging_steps is N.
  in.values.erase("logging-steps");
  in.scenario = SYNCSCOPE_LOGGING_SCENARIO;
  const scenario::Scenario sc = scenario::load_scenario(SYNCSCOPE_LOGGING_SCENARIO);
  const double n = sc.fixes.front().numbers.at("logging_steps");
  const model::PredictionReport from_scenario = model::predict_explicit(in);
  bool found = false;
  for (const auto& f : from_scenario.fixes)
    if (f.fix == "logging" && f.variant == "every") {
      found = true;
      EXPECT_EQ(f.parameters.at("N").value, n);
      EXPECT_NEAR(f.saving_ns.value, 2e6 * (n - 1) / n, 1);
    }
  EXPECT_TRUE(found);
}

// A trace without the pattern: the edit selects nothing and says what the trace holds
// (explicit edits refuse, exit 2 in the CLI).
TEST_F(LoggingFix, ReplayEditOnATraceWithoutReadsSaysSo) {
  const Trace t = shipped_scenario_trace("deferred", 4);
  replay::ReplayGraph g = replay::build_replay_graph(t);
  const replay::EditResult r = replay::apply_what_if(t, g, replay::parse_what_if("logging-deferred"), {});
  EXPECT_EQ(r.selected, 0u);
  EXPECT_NE(r.nothing_selected.find("no .item() sync after the optimizer"), std::string::npos) << r.nothing_selected;
  const model::PredictionReport closed = model::predict_from_trace(t, {}, "deferred");
  EXPECT_THROW((void)replay::replay_what_if(t, {"logging-deferred"}, {}, closed), InputError);
}

}  // namespace
}  // namespace syncscope
