// scenarios/published/ simulated with the B200 profile (--device sim), each published
// figure beside the simulated one (model/published.hpp). What is asserted:
//  - structure that could break without anyone fitting anything: every figure has its run;
//    the pre-cache rebuild issues 3 syncs per rebuild, and the checkpoint recompute repeats
//    it (rebuild - cached = 3 (2L - 1) syncs per step), or L - 1 rebuilds without
//    checkpointing (the microbenchmark scenario);
//  - each gain ratio on the side of the goal (0.8-1.25) that model/README.md ("Published
//    figures") documents for today's model: within, above or below. A change to the model
//    that moves a figure across the goal's edge fails here and must update the README's
//    table and its explanation. These are not fitted: no scenario value comes from a
//    published speedup (the scenario headers give each value's source).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/published.hpp"
#include "syncscope/pipeline/run.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> published_scenarios() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(test::source_dir() / "scenarios" / "published"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// The shipped B200 profile with the host cost per framework op our H200 trace gives for eager
// PyTorch from Python (calibrate --from-trace on tests/fixtures/torch/item_loop_l8_h200.json.gz:
// 21.3 us up to the launch, 3.7 us after; model/README.md, "The simulator against a measured
// trace"): the rest of the step then runs at an eager host's pace too, as Unsloth's does.
// Not a B200 measurement: one H200 host, under the profiler.
std::string eager_b200_profile(const fs::path& dir) {
  model::GpuProfile p = model::load_gpu_profile("B200");
  p.name = "B200-eager-host";
  p.description += " + eager-PyTorch host cost per op from our H200 trace";
  p.host_launch_op_ns = 21'300;
  p.host_after_launch_ns = 3'700;
  const std::string src =
      "calibrate --from-trace on tests/fixtures/torch/item_loop_l8_h200.json.gz (H200, eager Python under "
      "torch.profiler; model/README.md 'The simulator against a measured trace'): not a B200 measurement";
  p.sources["host_launch_op_ns"] = src;
  p.sources["host_after_launch_ns"] = src;
  const fs::path file = dir / "B200-eager-host.yaml";
  write_file_atomic(file, model::gpu_profile_to_yaml(p), true);
  return file.string();
}

pipeline::RunOutcome run_published(const std::string& profile, const fs::path& out) {
  pipeline::RunRequest r;
  r.scenarios = published_scenarios();
  r.device = "sim";
  r.gpu_profile = profile;
  r.out = out.string();
  return pipeline::run(r);
}

void print_steps(const model::RunResults& results) {
  for (const auto& v : results.variants)
    std::printf("  %-36s %-12s %-8s step %9.2f ms  forward %9.2f ms  syncs/step %6.0f\n", v.scenario.c_str(),
                v.fix.c_str(), v.variant.c_str(), v.step_time_ns.value / 1e6, v.forward_time_ns.value / 1e6,
                v.syncs_per_step);
}

class PublishedFigures : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    outcome_ = new pipeline::RunOutcome(run_published("B200", *dir_ / "published"));
    eager_ = new pipeline::RunOutcome(run_published(eager_b200_profile(dir_->path()), *dir_ / "published-eager"));
  }
  static void TearDownTestSuite() {
    delete outcome_;
    delete eager_;
    delete dir_;
  }
  static const model::VariantResult& variant(const std::string& scenario, const std::string& name) {
    for (const auto& v : outcome_->results.variants)
      if (v.scenario == scenario && v.variant == name) return v;
    throw std::runtime_error("no variant " + scenario + "/" + name);
  }
  static test::TempDir* dir_;
  static pipeline::RunOutcome* outcome_;
  static pipeline::RunOutcome* eager_;
};
test::TempDir* PublishedFigures::dir_ = nullptr;
pipeline::RunOutcome* PublishedFigures::outcome_ = nullptr;
pipeline::RunOutcome* PublishedFigures::eager_ = nullptr;

TEST_F(PublishedFigures, EveryFigureHasItsSimulatedRun) {
  EXPECT_EQ(outcome_->results.mode, "simulated");
  const auto rows = model::published_figure_rows({outcome_->results});
  ASSERT_EQ(rows.size(), 10u);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.found) << r.figure;
    EXPECT_TRUE(std::isfinite(r.ratio)) << r.figure;
  }
  std::printf("%s", model::published_figure_table(rows, "simulated runs, shipped B200 profile", false).c_str());
  print_steps(outcome_->results);
  const auto eager_rows = model::published_figure_rows({eager_->results});
  for (const auto& r : eager_rows) EXPECT_TRUE(r.found) << r.figure;
  std::printf("%s", model::published_figure_table(eager_rows,
                                                  "simulated runs, B200 + eager host cost per op (H200 trace)", false)
                        .c_str());
  print_steps(eager_->results);
}

TEST_F(PublishedFigures, ValidateComparesEachPublishedScenarioOnlyWithItsOwnFigure) {
  // The microbenchmark scenario runs Llama-3.2-1B's shape without checkpointing: its step is
  // not the Llama step figure, and validate's per-model published lines must not say it is.
  int llama = 0;
  for (const auto& c : model::published_checks(outcome_->results)) {
    EXPECT_NE(c.scenario, "published-rebuild-microbench-2048");
    llama += c.scenario == "published-llama-3.2-1b-packing";
  }
  EXPECT_EQ(llama, 1);
}

TEST_F(PublishedFigures, TheReportHasThePublishedSection) {
  const std::string html = read_file(outcome_->out / "report.html", std::uint64_t{256} << 20);
  EXPECT_NE(html.find("<h2 id=\"published\">Published figures</h2>"), std::string::npos);
  EXPECT_NE(html.find("Qwen3-14B QLoRA packing cache, forward"), std::string::npos);
  EXPECT_NE(html.find("Simulated: our simulator on the assumptions listed"), std::string::npos);
}

TEST_F(PublishedFigures, PreCacheRebuildSyncsAndTheRecomputeRepeatsIt) {
  // Checkpointed: the baseline rebuilds in each layer's forward and again in its recompute
  // (2L), the cache once per step; 3 syncs per rebuild (max, sum, tolist).
  for (const auto& [scenario, L] : std::map<std::string, int>{{"published-llama-3.2-1b-packing", 16},
                                                              {"published-qwen3-0.6b-packing", 28},
                                                              {"published-qwen3-14b-qlora-packing", 40}}) {
    const auto& rebuild = variant(scenario, "rebuild");
    const auto& cached = variant(scenario, "cached");
    EXPECT_DOUBLE_EQ(rebuild.syncs_per_step - cached.syncs_per_step, 3.0 * (2 * L - 1)) << scenario;
  }
  // Without checkpointing (the microbenchmark scenario): L rebuilds against one.
  const auto& rebuild = variant("published-rebuild-microbench-2048", "rebuild");
  const auto& cached = variant("published-rebuild-microbench-2048", "cached");
  EXPECT_DOUBLE_EQ(rebuild.syncs_per_step - cached.syncs_per_step, 3.0 * 15);
}

// The side of the goal model/README.md documents for each figure today.
enum class Side { Below, Within, Above };
Side side(double ratio) {
  return ratio < model::kPublishedGoalLo ? Side::Below : ratio > model::kPublishedGoalHi ? Side::Above : Side::Within;
}

void expect_sides(const model::RunResults& results, const std::map<std::string, Side>& documented, const char* run) {
  for (const auto& r : model::published_figure_rows({results})) {
    auto it = documented.find(r.figure);
    ASSERT_NE(it, documented.end()) << r.figure;
    EXPECT_EQ(static_cast<int>(side(r.ratio)), static_cast<int>(it->second))
        << run << ": " << r.figure << ": ratio " << r.ratio << " moved across the goal's edge; update model/README.md";
  }
}

TEST_F(PublishedFigures, GainRatiosOnTheirDocumentedSide) {
  // model/README.md, "Published figures": the shipped B200 profile carries the eager host
  // cost per op fitted from our H200 trace (model/profiles/B200.yaml); the packing gains still
  // come out too large, and the 32B reload fell below the goal when those costs came in.
  expect_sides(outcome_->results,
               {
                   {"Llama-3.2-1B packing cache, step", Side::Above},
                   {"Qwen3-0.6B packing cache, step", Side::Above},
                   {"Qwen3-14B QLoRA packing cache, forward", Side::Above},
                   {"Qwen3-14B QLoRA packing cache, backward", Side::Above},
                   {"Qwen3-14B QLoRA packing cache, whole batch", Side::Above},
                   {"SDPA mask rebuild, 2048 tokens (ms, not a gain)", Side::Below},
                   {"Qwen3-8B double-buffered reload, step", Side::Below},
                   {"Qwen3-14B double-buffered reload, step", Side::Below},
                   {"Qwen3-32B double-buffered reload, step", Side::Below},
                   {"gpt-oss-20b sorted routing, step (10-15%)", Side::Above},
               },
               "B200");
  // With the eager host cost per op on every op, the ops a fitted profile skips included: the
  // same sides.
  expect_sides(eager_->results,
               {
                   {"Llama-3.2-1B packing cache, step", Side::Above},
                   {"Qwen3-0.6B packing cache, step", Side::Above},
                   {"Qwen3-14B QLoRA packing cache, forward", Side::Above},
                   {"Qwen3-14B QLoRA packing cache, backward", Side::Above},
                   {"Qwen3-14B QLoRA packing cache, whole batch", Side::Above},
                   {"SDPA mask rebuild, 2048 tokens (ms, not a gain)", Side::Below},
                   {"Qwen3-8B double-buffered reload, step", Side::Below},
                   {"Qwen3-14B double-buffered reload, step", Side::Below},
                   {"Qwen3-32B double-buffered reload, step", Side::Below},
                   {"gpt-oss-20b sorted routing, step (10-15%)", Side::Above},
               },
               "B200 + eager host");
}

TEST_F(PublishedFigures, RecomputeRepeatsTheRebuildSoBackwardSavesAboutWhatForwardSaves) {
  // The Qwen3-14B triple (forward +43.3%, backward +5.8%, batch +14.3%) implies, with
  // additive forward and backward times, backward = 2.52 x forward and a backward saving
  // 0.46 x the forward's. Our step program repeats the whole rebuild in every recompute
  // (Unsloth's code: the recompute calls the layer again with the captured kwargs), so the
  // backward saves about as much as the forward (40 rebuilds against 39): between 0.9 and
  // 1.3 here. A model that hid part of the recompute's rebuild would land nearer 0.46.
  for (const model::RunResults* r : {&outcome_->results, &eager_->results}) {
    const model::VariantResult* base = nullptr;
    const model::VariantResult* fix = nullptr;
    for (const auto& v : r->variants)
      if (v.scenario == "published-qwen3-14b-qlora-packing") (v.baseline ? base : fix) = &v;
    ASSERT_TRUE(base && fix);
    const double dF = base->forward_time_ns.value - fix->forward_time_ns.value;
    const double dB = (base->step_time_ns.value - base->forward_time_ns.value) -
                      (fix->step_time_ns.value - fix->forward_time_ns.value);
    ASSERT_GT(dF, 0);
    std::printf("backward saving / forward saving: %.3f (published triple: 0.457)\n", dB / dF);
    EXPECT_GT(dB / dF, 0.9);
    EXPECT_LT(dB / dF, 1.3);
  }
}

TEST(PublishedScenarioKey, RebuildFormIsCheckedAndOnlyUnderPacking) {
  const std::string base =
      "model: {name: m, num_hidden_layers: 2, hidden_size: 64, num_attention_heads: 4, num_key_value_heads: 4,\n"
      "        intermediate_size: 128, vocab_size: 256}\n"
      "batch: {packed_tokens: 64, distribution: fixed, max_len: 32}\n";
  const scenario::Scenario ok =
      scenario::parse_scenario(base + "fixes: {packing: {rebuild_form: unsloth_sdpa_mask}}\n", "ok.yaml");
  EXPECT_EQ(ok.fixes.at(0).word("rebuild_form"), "unsloth_sdpa_mask");
  EXPECT_EQ(scenario::parse_scenario(base + "fixes: {packing: {}}\n", "d.yaml").fixes.at(0).word("rebuild_form"),
            "reference");
  try {
    (void)scenario::parse_scenario(base + "fixes: {packing: {rebuild_form: python}}\n", "bad.yaml");
    FAIL() << "an unknown rebuild_form was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fixes.packing.rebuild_form"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unsloth_sdpa_mask"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)scenario::parse_scenario(base + "offload: true\nfixes: {offload: {rebuild_form: reference}}\n",
                                              "o.yaml"),
               InputError);
}

}  // namespace
}  // namespace syncscope
