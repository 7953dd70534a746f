// api/: the one library under the CLI and Python. What both front ends rely on: the
// renderings of one outcome agree with each other, the request's options reach the analysis
// and the replay, a bound refuses with the option spelled as the caller writes it, and the
// defaults are the ones the CLI documents.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "syncscope/api/analyze.hpp"
#include "syncscope/api/defaults.hpp"
#include "syncscope/api/predict.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/io/trace_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

const char* kH200 = "torch/item_loop_l8_h200.json.gz";

Trace h200() { return read_trace(test::fixture(kH200)); }

TEST(Api, AnalyzeRendersOneOutcomeInEveryFormat) {
  api::AnalyzeRequest req;
  const api::AnalyzeOutcome out = api::analyze_trace(h200(), "h200", req);
  ASSERT_GT(out.result.sync_points.size(), 0u);
  EXPECT_GT(out.counts.kernels, 0u);
  const auto j = nlohmann::json::parse(api::render_analysis(out, "json"));
  EXPECT_EQ(j["source"], "h200");
  EXPECT_EQ(j["totals"]["syncs"]["total"].get<std::uint64_t>(), out.result.totals.syncs.total);
  // The replayed removal savings reach the JSON (the Python module's removal_saving_ns).
  ASSERT_FALSE(out.removals.empty());
  EXPECT_TRUE(j["worst"][0].contains("removal_saving_ns"));
  EXPECT_NE(api::render_analysis(out, "csv").find("window_kind,window_name"), std::string::npos);
  EXPECT_NE(api::render_analysis(out, "table").find("aten::"), std::string::npos);
  EXPECT_THROW(api::render_analysis(out, "yaml"), InputError);
}

TEST(Api, AnalyzeRequestReachesTheAnalysis) {
  api::AnalyzeRequest none;  // the fixture's ranges are layer_00..layer_07, three times each
  none.replay_causes = 0;
  const api::AnalyzeOutcome a = api::analyze_trace(h200(), "h200", none);
  EXPECT_TRUE(a.result.layers.empty());
  EXPECT_TRUE(a.removals.empty());
  api::AnalyzeRequest layers;
  layers.layer_range = "layer_*";
  layers.step_range = "layer_0[0]";
  const api::AnalyzeOutcome b = api::analyze_trace(h200(), "h200", layers);
  EXPECT_EQ(b.result.layers.size(), 24u);
  EXPECT_EQ(b.result.steps.size(), 3u);
  api::AnalyzeRequest other_pid;
  other_pid.pid = 123456789;  // no such process in the trace: refused, naming it
  EXPECT_THROW(api::analyze_trace(h200(), "h200", other_pid), InputError);
}

TEST(Api, PredictBoundsSpeakTheCallersSpelling) {
  api::PredictTraceRequest r;
  r.fix_options["prefetch-depth"] = "1";  // offload's, declared for traces (2..1024)
  try {
    api::check(r, api::Spelling::Python);
    FAIL() << "prefetch_depth 1 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("prefetch_depth 1"), std::string::npos) << e.what();
  }
  try {
    api::check(r, api::Spelling::Cli);
    FAIL() << "--prefetch-depth 1 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--prefetch-depth 1"), std::string::npos) << e.what();
  }
  r.fix_options["prefetch-depth"] = "3";
  r.samples = 10;
  EXPECT_THROW(api::check(r, api::Spelling::Python), InputError);
  r.samples = api::kDefaultSamples;
  r.fix_options["top-k"] = "0";
  EXPECT_THROW(api::check(r, api::Spelling::Python), InputError);
  r.fix_options["top-k"] = "2.5";  // an integer option
  EXPECT_THROW(api::check(r, api::Spelling::Python), InputError);
  r.fix_options["top-k"] = "2";
  EXPECT_NO_THROW(api::check(r, api::Spelling::Python));
  // An option no fix declares for traces (packing's --per-layer-ms is explicit-only): refused,
  // naming those that are.
  r.fix_options["per-layer-ms"] = "13.7";
  try {
    api::check(r, api::Spelling::Cli);
    FAIL() << "--per-layer-ms accepted with a trace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--per-layer-ms: no fix takes this option with a trace"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--prefetch-depth"), std::string::npos) << e.what();
  }
}

// The fixes' options for traces come from the registry: each one's fix, flag and key.
TEST(Api, TraceOptionsAreTheFixesDeclarations) {
  std::map<std::string, std::string> fix_of, key_of;
  for (const api::FixTraceOption& d : api::trace_options()) {
    fix_of[d.option->flag] = d.fix;
    key_of[d.option->flag] = d.option->trace_key;
  }
  EXPECT_EQ(fix_of["prefetch-depth"], "offload");
  EXPECT_EQ(key_of["prefetch-depth"], "prefetch_depth");
  EXPECT_EQ(fix_of["top-k"], "moe_routing");
  EXPECT_EQ(fix_of["logging-steps"], "logging");
  EXPECT_EQ(fix_of.count("per-layer-ms"), 0u);
  EXPECT_EQ(api::python_name("prefetch-depth"), "prefetch_depth");
}

TEST(Api, PredictTraceReplaysTheEditsItIsGiven) {
  fixes::register_shipped_fixes();
  api::PredictTraceRequest r;
  r.what_if = {"remove-syncs:cause=aten::item"};
  const auto both = api::predict_trace(h200(), "h200", r, api::Spelling::Cli);
  const auto j = nlohmann::json::parse(api::render_prediction(both.prediction, &both.replay, "json"));
  ASSERT_TRUE(j.contains("what_if"));
  EXPECT_NE(j["what_if"].dump().find("aten::item"), std::string::npos);
  EXPECT_THROW(api::render_prediction(both.prediction, &both.replay, "csv"), InputError);
}

TEST(Api, DefaultsAreTheDocumentedOnes) {
  // README / docs/python.md name these; a change here changes both front ends at once.
  EXPECT_STREQ(api::kDefaultStepRange, "ProfilerStep#*");
  EXPECT_EQ(api::kDefaultReplayCauses, 6u);
  EXPECT_EQ(api::kDefaultMaxSyncPoints, 10000u);
  EXPECT_EQ(api::kDefaultSamples, 4000);
  EXPECT_EQ(api::option_name(api::Spelling::Cli, "max_sync_points"), "--max-sync-points");
  EXPECT_EQ(api::option_name(api::Spelling::Python, "max_sync_points"), "max_sync_points");
}

}  // namespace
}  // namespace syncscope
