// A Hugging Face config through the run pipeline: a --hf-config model is named in the directory, the CSV,
// the report and results.json, and a step that cannot fit the GPU profile's memory is
// refused before anything runs.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/validate.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/pipeline/results_dir.hpp"
#include "syncscope/pipeline/run.hpp"
#include "syncscope/reports/model_printers.hpp"
#include "syncscope/sim/memory_estimate.hpp"
#include "test_paths.hpp"

namespace syncscope::pipeline {
namespace {

namespace fs = std::filesystem;

std::string scenario(const std::string& name) { return (test::source_dir() / "scenarios" / name).string(); }
std::string config(const std::string& dir) { return test::fixture("hf/" + dir + "/config.json").string(); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs in a fresh directory: the default results directory is relative to it.
class InTempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    old_ = fs::current_path();
    fs::current_path(dir_.path());
  }
  void TearDown() override { fs::current_path(old_); }
  test::TempDir dir_;
  fs::path old_;
};

TEST(HfRunNames, DefaultDirectoryNamesTheModelAndStaysUnderOut) {
  EXPECT_EQ(default_results_dir("qwen3-0.6b", "", "simulated"), fs::path("out/qwen3-0.6b-simulated"));
  EXPECT_EQ(default_results_dir("qwen3-0.6b", "Mistral-7B-v0.1", "simulated"),
            fs::path("out/qwen3-0.6b--Mistral-7B-v0.1-simulated"));
  EXPECT_EQ(safe_file_name("Qwen/Qwen3 0.6B"), "Qwen-Qwen3-0.6B");
  EXPECT_EQ(safe_file_name("../../etc/passwd"), "etc-passwd");
  EXPECT_EQ(safe_file_name(".."), "model");
  EXPECT_EQ(safe_file_name(""), "model");
  EXPECT_EQ(safe_file_name("-rf"), "rf");
  const fs::path p = default_results_dir("../x", "/abs/../model", "simulated");
  EXPECT_EQ(p, fs::path("out/x--abs-..-model-simulated"));
  EXPECT_EQ(std::distance(p.begin(), p.end()), 2);  // out/<one name>
}

// Equal predictions (double and prefetch at 1.042 on the offload scenario) are a
// tie, printed as one, not as the order "double > prefetch".
TEST(HfRunNames, EqualSpeedupsArePrintedAsTies) {
  model::RunResults r;
  r.mode = "simulated";
  auto variant = [](const char* name, bool baseline, double speedup) {
    model::VariantResult v;
    v.scenario = "qwen3-14b";
    v.fix = "offload";
    v.variant = name;
    v.baseline = baseline;
    v.layers = 40;
    v.step_time_ns = {1e6, 1e6, 1e6, 3};
    v.measured_speedup = {speedup, speedup, speedup, 3};
    v.predicted_speedup = {speedup, speedup, speedup, 0};
    return v;
  };
  r.variants = {variant("single", true, 1.0), variant("double", false, 1.042), variant("prefetch", false, 1.042)};
  const std::string table = validation_to_table(model::validate_results(r, "test"));
  EXPECT_TRUE(contains(table, "double = prefetch") || contains(table, "prefetch = double")) << table;
  EXPECT_FALSE(contains(table, "double > prefetch")) << table;
}

// Shipped scenarios fit the H200 profile (so the check costs them nothing) ...
TEST(HfRunMemory, ShippedScenariosFitTheH200Profile) {
  const model::GpuProfile h200 = model::load_gpu_profile("H200");
  for (const char* f : {"llama-3.2-1b.yaml", "qwen3-0.6b.yaml", "qwen3-14b.yaml", "qwen3-14b-qlora.yaml",
                        "gpt-oss-20b.yaml", "qwen3-0.6b-lsweep.yaml"}) {
    SCOPED_TRACE(f);
    RunRequest r;
    r.scenarios = {scenario(f)};
    const auto scenarios = load_run_scenarios(r);
    for (const auto& j : plan_jobs(scenarios).jobs) {
      const auto m = sim::estimate_step_memory(j.opts);
      EXPECT_LT(m.total(), h200.memory_bytes);
      EXPECT_GT(m.total(), 0);
      EXPECT_EQ(sim::check_step_memory(j.opts, h200.memory_bytes, "H200", f, false), "");
    }
  }
}

// ... and gpt-oss-120b under LoRA (a bf16 base of ~234 GB) does not: exit 2 with the
// estimate and what would fit.
TEST(HfRunMemory, GptOss120bLoraOnTheH200ProfileIsRefusedWithAnExplanation) {
  RunRequest r;
  r.scenarios = {scenario("gpt-oss-20b.yaml")};
  r.hf_config = config("gpt-oss-120b");
  const auto scenarios = load_run_scenarios(r);
  const RunPlan plan = plan_jobs(scenarios);
  const auto& o = plan.jobs.front().opts;
  const auto need = sim::estimate_step_memory(o);
  EXPECT_GT(need.parts.front().second, 233e9);  // weights: 116.8e9 values x 2 bytes
  const model::GpuProfile h200 = model::load_gpu_profile("H200");
  try {
    sim::check_step_memory(o, h200.memory_bytes, "H200", "gpt-oss-20b", false);
    ADD_FAILURE() << "gpt-oss-120b LoRA fit the H200 profile";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(contains(what, "gpt-oss-20b: the step needs about 23")) << what;
    EXPECT_TRUE(contains(what, "more than the H200 profile's 150.8 GB")) << what;
    EXPECT_TRUE(contains(what, "weights 233.")) << what;
    EXPECT_TRUE(contains(what, "training: qlora needs")) << what;
    EXPECT_TRUE(contains(what, "experts' 3-D tensors stay in the compute dtype")) << what;
    EXPECT_TRUE(contains(what, "--layers ")) << what;
    EXPECT_TRUE(contains(what, "--force-memory")) << what;
  }
  // Forced, the same explanation comes back for the outputs to carry.
  EXPECT_TRUE(contains(sim::check_step_memory(o, h200.memory_bytes, "H200", "gpt-oss-20b", true), "needs about"));
}

TEST_F(InTempDir, GptOss120bRunStopsBeforeWritingAnything) {
  RunRequest r;
  r.scenarios = {scenario("gpt-oss-20b.yaml")};
  r.hf_config = config("gpt-oss-120b");
  r.device = "sim";
  EXPECT_THROW(run(r), InputError);
  EXPECT_FALSE(fs::exists("out"));
}

TEST_F(InTempDir, HfConfigRunNamesTheModelEverywhere) {
  RunRequest r;
  r.scenarios = {scenario("qwen3-0.6b.yaml")};
  r.hf_config = config("mistral-7b-v0.1");
  r.device = "sim";
  r.layers = 2;
  r.repeats = 1;
  r.warmup = 0;
  const RunOutcome o = run(r);
  EXPECT_EQ(o.out, fs::path("out/qwen3-0.6b--mistral-7b-v0.1-simulated"));
  // The terminal summary's lines name it, with its size as its config class defines it.
  ASSERT_FALSE(o.model_notes.empty());
  EXPECT_TRUE(contains(o.model_notes.front(), "model mistral-7b-v0.1 from ")) << o.model_notes.front();
  EXPECT_TRUE(contains(o.model_notes.front(), "mistral family, 7,241,732,096 parameters")) << o.model_notes.front();
  // results.json: the config's path and hash; every variant's network names the model.
  EXPECT_EQ(o.results.env.extra.at("model_config"), r.hf_config);
  EXPECT_EQ(o.results.env.extra.at("model_config_sha256"), calibrate::sha256_file(r.hf_config));
  for (const auto& v : o.results.variants) {
    ASSERT_TRUE(v.network);
    EXPECT_EQ(v.network->model, "mistral-7b-v0.1");
    EXPECT_EQ(v.network->family, "mistral");
    EXPECT_GT(v.network->base_parameters, 0);
    // Every layer is windowed, so Unsloth's mask cache hits: 3 syncs per batch + the loss.
    if (v.variant == "cached") {
      EXPECT_EQ(v.syncs_per_step, 4);
    }
  }
  // results.csv: a model column, last.
  const auto rows = csv_parse(read_file(o.out / "results.csv"), "results.csv");
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0].back(), "model");
  EXPECT_EQ(rows[1].back(), "mistral-7b-v0.1");
  // report.html: title and provenance.
  const std::string html = read_file(o.out / "report.html");
  EXPECT_TRUE(contains(html, "<title>syncscope run: qwen3-0.6b \u2014 mistral-7b-v0.1 (simulated)</title>"));
  EXPECT_TRUE(contains(html, "model mistral-7b-v0.1 from "));
  EXPECT_TRUE(contains(html, "Analytical model inputs"));
  // A second config against the same scenario does not collide with the first.
  r.hf_config = config("qwen2.5-7b");
  EXPECT_EQ(run(r).out, fs::path("out/qwen3-0.6b--qwen2.5-7b-simulated"));
}

// One scenario, one model: results.json names it as env.extra.model (docs/validate-a-model.md),
// with or without --hf-config, and not under a per-scenario key.
TEST_F(InTempDir, OneScenarioRunsResultsJsonHasEnvExtraModel) {
  RunRequest r;
  r.scenarios = {scenario("qwen3-0.6b.yaml")};
  r.device = "sim";
  r.layers = 2;
  r.repeats = 1;
  r.warmup = 0;
  for (const std::string cfg : {"", "mistral-7b-v0.1"}) {
    SCOPED_TRACE(cfg.empty() ? "the scenario's model" : cfg);
    r.hf_config = cfg.empty() ? "" : config(cfg);
    const RunOutcome o = run(r);
    const std::string model = cfg.empty() ? "Qwen3-0.6B" : cfg;  // the scenario names its model so
    const auto doc = nlohmann::json::parse(read_file(o.out / "results.json"));
    const auto& extra = doc.at("env").at("extra");
    ASSERT_TRUE(extra.contains("model")) << extra.dump();
    EXPECT_EQ(extra.at("model"), model);
    EXPECT_FALSE(extra.contains("model.qwen3-0.6b")) << extra.dump();
    // The memory estimate names the checkpointing it counted (the scenario offloads).
    ASSERT_TRUE(extra.contains("gradient_checkpointing")) << extra.dump();
    EXPECT_EQ(extra.at("gradient_checkpointing"), "offload");
    EXPECT_TRUE(contains(extra.at("memory_estimate").get<std::string>(), "gradient checkpointing offload"))
        << extra.dump();
  }
}

// Llama 4's chunked layers are charged as transformers' sdpa path runs them (a mask over the
// whole sequence): the run says so, where it once printed only the chunk layout.
TEST_F(InTempDir, ChunkedAttentionSaysWhichCostIsCharged) {
  RunRequest r;
  r.scenarios = {scenario("qwen3-0.6b.yaml")};
  r.hf_config = config("llama-4-scout-17b-16e");
  r.device = "sim";
  r.layers = 1;
  r.repeats = 1;
  r.warmup = 0;
  const RunOutcome o = run(r);
  bool said = false;
  for (const auto& n : o.model_notes) said |= contains(n, "chunked layers are charged as transformers' sdpa path");
  EXPECT_TRUE(said);
}

// Gemma-3-1b (5 sliding layers of 6, then a full one): Unsloth's mask cache holds one
// (dtype, window) entry, so the cached variant rebuilds the mask at every window change of
// the step's builds (9 in the forward's 26 layers, 8 in the checkpoint recompute's reverse
// order: 17 x 2 host reads + the metadata's one + the loss = 36 syncs). The forecast beside
// the simulated result counts those rebuilds from the same layer windows: both variants
// within the simulator tolerance, and the ranking the simulator's.
TEST_F(InTempDir, Gemma3PackingForecastCountsTheRebuildsAtWindowChanges) {
  RunRequest r;
  r.scenarios = {scenario("qwen3-0.6b.yaml")};
  r.hf_config = config("gemma-3-1b-pt");
  r.device = "sim";
  r.repeats = 1;
  r.warmup = 0;
  const RunOutcome o = run(r);
  int compared = 0;
  for (const auto& v : o.validation.variants) {
    if (v.baseline) continue;
    SCOPED_TRACE(v.variant);
    ASSERT_TRUE(v.has_prediction);
    EXPECT_LE(std::fabs(v.error), v.tolerance) << v.predicted.value << " vs " << v.measured.value;
    ++compared;
  }
  EXPECT_EQ(compared, 2);
  for (const auto& v : o.results.variants)
    if (v.variant == "cached") {
      EXPECT_EQ(v.syncs_per_step, 36);
      // m = 17 rebuilds kept of the 52 builds per step, from the layer windows.
      ASSERT_TRUE(v.model_parameters.count("m"));
      EXPECT_EQ(v.model_parameters.at("m"), 17);
    }
  EXPECT_TRUE(o.validation.ranking_matches) << validation_to_table(o.validation);
}

}  // namespace
}  // namespace syncscope::pipeline
