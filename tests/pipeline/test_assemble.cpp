// From summaries to result rows, speedup intervals and L-sweep fits.
#include <gtest/gtest.h>

#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/pipeline/assemble.hpp"

namespace syncscope::pipeline {
namespace {

model::Estimate est(double v, double lo, double hi, int n) { return model::Estimate{v, lo, hi, n}; }

TEST(PipelineAssemble, SpeedupIntervalComesFromBothRanges) {
  const model::Estimate s = speedup_estimate(est(100, 90, 110, 5), est(50, 40, 55, 3));
  EXPECT_DOUBLE_EQ(s.value, 2.0);
  EXPECT_DOUBLE_EQ(s.lo, 90.0 / 55);
  EXPECT_DOUBLE_EQ(s.hi, 110.0 / 40);
  EXPECT_EQ(s.n, 3);
  // No step time: no speedup rather than a division by zero.
  const model::Estimate none = speedup_estimate(est(100, 90, 110, 5), est(0, 0, 0, 0));
  EXPECT_EQ(none.value, 0);
  EXPECT_EQ(none.n, 0);
}

struct Fixture {
  std::vector<scenario::Scenario> scenarios;
  std::vector<Job> jobs;
  std::map<std::string, TraceSummary> summaries;
};

Fixture two_variants() {
  Fixture f;
  scenario::Scenario s;
  s.name = "s";
  f.scenarios.push_back(s);
  Job base;
  base.fix = fixes::packing::kFix;
  base.variant = "rebuild";
  base.baseline = true;
  base.layers = 4;
  base.key = base.base_key = "s/base";
  Job fixed = base;
  fixed.variant = "cached";
  fixed.baseline = false;
  fixed.key = "s/cached";
  fixed.tolerance = 0.05;
  Job dev = fixed;
  dev.variant = "device";
  dev.key = "s/device";
  f.jobs = {base, fixed, dev};
  TraceSummary b;
  b.trace_file = "traces/base.json.gz";
  b.step_ns = est(100, 90, 110, 5);
  b.syncs = 12;
  model::PredictionReport p;
  model::FixPrediction fp;
  fp.fix = "packing";
  fp.variant = "cached";
  fp.applicable = true;
  fp.speedup = model::Interval{1.8, 1.7, 1.9};
  fp.saving_ns = model::Interval{40, 40, 40};
  fp.parameters["s_ns"] = model::Interval{10, 9, 11};
  p.fixes.push_back(fp);
  b.prediction = p;
  TraceSummary c;
  c.trace_file = "traces/cached.json.gz";
  c.step_ns = est(50, 45, 55, 5);
  c.warnings = {"odd argument", "odd argument"};
  TraceSummary d = c;
  d.trace_file = "traces/device.json.gz";
  d.warnings.clear();
  f.summaries = {{"s/base", b}, {"s/cached", c}, {"s/device", d}};
  return f;
}

TEST(PipelineAssemble, RowsCarryMeasuredAndPredictedSpeedupsAndNotesOnce) {
  Fixture f = two_variants();
  model::RunResults r;
  r.notes = {"earlier note"};
  assemble_variants(f.scenarios, f.jobs, f.summaries, r);
  ASSERT_EQ(r.variants.size(), 3u);
  const model::VariantResult& base = r.variants[0];
  EXPECT_TRUE(base.baseline);
  EXPECT_EQ(base.measured_speedup.value, 1);
  EXPECT_EQ(base.measured_speedup.n, 5);
  EXPECT_EQ(base.predicted_speedup.value, 1);
  EXPECT_EQ(base.syncs_per_step, 12);
  const model::VariantResult& cached = r.variants[1];
  EXPECT_DOUBLE_EQ(cached.measured_speedup.value, 2.0);
  EXPECT_DOUBLE_EQ(cached.predicted_speedup.value, 1.8);
  EXPECT_EQ(cached.predicted_speedup.n, 5);
  EXPECT_EQ(cached.predicted_saving_ns, 40);
  EXPECT_EQ(cached.tolerance, 0.05);
  EXPECT_EQ(cached.model_parameters.at("s_ns"), 10);
  EXPECT_EQ(cached.model_parameters.at("s_ns_lo"), 9);
  EXPECT_EQ(cached.model_parameters.at("s_ns_hi"), 11);
  EXPECT_EQ(cached.trace_file, "traces/cached.json.gz");
  // device has no prediction in the baseline's report: predicted stays 0, noted once.
  EXPECT_EQ(r.variants[2].predicted_speedup.value, 0);
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_EQ(r.notes[0], "earlier note");
  EXPECT_EQ(r.notes[1], "traces/cached.json.gz: odd argument");
  EXPECT_EQ(r.notes[2], "s packing=device: the model has no prediction for this variant");
}

TEST(PipelineAssemble, InapplicablePredictionIsANoteWithItsReason) {
  Fixture f = two_variants();
  auto& fp = f.summaries.at("s/base").prediction->fixes[0];
  fp.applicable = false;
  fp.reason = "no repeated per-layer syncs";
  model::RunResults r;
  assemble_variants(f.scenarios, f.jobs, f.summaries, r);
  EXPECT_EQ(r.variants[1].predicted_speedup.value, 0);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0], "s packing=cached L=4: no prediction: no repeated per-layer syncs");
}

model::VariantResult row(const std::string& variant, int layers, double step_ns) {
  model::VariantResult v;
  v.scenario = "s";
  v.fix = "packing";
  v.variant = variant;
  v.layers = layers;
  v.step_time_ns.value = step_ns;
  return v;
}

TEST(PipelineAssemble, LayerSweepFitsThePerLayerSaving) {
  scenario::Scenario s;
  s.name = "s";
  s.fixes.push_back(scenario::FixSelection{fixes::packing::kFix, {"rebuild", "cached"}, 0.1, {}, {}});
  s.measure.layer_sweep = {2, 4, 8};
  model::RunResults r;
  for (int L : {2, 4, 8}) {
    r.variants.push_back(row("rebuild", L, 1000 + 100.0 * L));
    r.variants.push_back(row("cached", L, 1000 + 60.0 * L));
  }
  fit_layer_sweeps({s}, r);
  for (const auto& v : r.variants) {
    if (v.variant == "rebuild") {
      EXPECT_EQ(v.model_parameters.count("fit_per_layer_saving_ns"), 0u);
      continue;
    }
    EXPECT_NEAR(v.model_parameters.at("fit_per_layer_saving_ns"), 40, 1e-6);
    EXPECT_NEAR(v.model_parameters.at("fit_intercept_difference_ns"), 0, 1e-6);
  }
  EXPECT_TRUE(r.notes.empty());
}

TEST(PipelineAssemble, LayerSweepFitFailureIsANote) {
  scenario::Scenario s;
  s.name = "s";
  s.fixes.push_back(scenario::FixSelection{fixes::packing::kFix, {"rebuild", "cached"}, 0.1, {}, {}});
  s.measure.layer_sweep = {2, 4};
  model::RunResults r;
  r.variants = {row("rebuild", 2, 1200), row("cached", 2, 1100)};  // one depth: nothing to fit
  fit_layer_sweeps({s}, r);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("s packing=cached: L-sweep fit failed: "), std::string::npos) << r.notes[0];
  // Scenarios without a sweep are left alone.
  scenario::Scenario flat = s;
  flat.measure.layer_sweep.clear();
  model::RunResults r2;
  r2.variants = {row("rebuild", 2, 1200), row("cached", 2, 1100)};
  fit_layer_sweeps({flat}, r2);
  EXPECT_TRUE(r2.notes.empty());
}

}  // namespace
}  // namespace syncscope::pipeline
