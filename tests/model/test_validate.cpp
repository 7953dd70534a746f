#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "syncscope/model/validate.hpp"
#include "syncscope/reports/model_printers.hpp"

namespace m = syncscope::model;
namespace model = syncscope::model;
using syncscope::model::Estimate;
using syncscope::model::RunResults;
using syncscope::model::VariantResult;

namespace {

model::VariantResult variant(std::string name, bool baseline, model::Estimate measured, model::Estimate predicted,
                             double tol = 0.10) {
  model::VariantResult v;
  v.scenario = "qwen3-0.6b";
  v.fix = "packing";
  v.variant = std::move(name);
  v.baseline = baseline;
  v.measured_speedup = measured;
  v.predicted_speedup = predicted;
  v.tolerance = tol;
  return v;
}

}  // namespace

TEST(Validate, ErrorsMapeAndRanking) {
  model::RunResults r;
  r.mode = "simulated";
  r.variants.push_back(variant("rebuild", true, {1, 1, 1, 5}, {1, 1, 1, 0}));
  // errors: (1.20 - 1.25)/1.25 = -4%; (1.30 - 1.20)/1.20 = +8.33%
  r.variants.push_back(variant("cached", false, {1.25, 1.22, 1.28, 5}, {1.20, 1.15, 1.24, 0}));
  r.variants.push_back(variant("device", false, {1.20, 1.18, 1.21, 5}, {1.30, 1.2, 1.4, 0}));
  auto rep = m::validate_results(r, "test");
  EXPECT_EQ(rep.compared, 2);
  EXPECT_NEAR(rep.mape, (0.04 + 0.1 / 1.2) / 2, 1e-12);
  EXPECT_NEAR(rep.max_abs_error, 0.1 / 1.2, 1e-12);
  EXPECT_EQ(rep.failures, 0);
  // measured: cached (1.22..1.28) is faster than device (1.18..1.21) without overlap, but the
  // model predicts device faster: the ranking differs.
  ASSERT_EQ(rep.rankings.size(), 1u);
  EXPECT_FALSE(rep.rankings[0].matches);
  EXPECT_FALSE(rep.ranking_matches);
  EXPECT_EQ(rep.rankings[0].measured_order.front(), "cached");
  EXPECT_EQ(rep.rankings[0].predicted_order.front(), "device");
}

// A layer sweep: each depth is ranked on its own. Across depths the shallow run's larger
// speedup is no ranking error (it was "DIFFERENT ORDER" when depths were pooled).
TEST(Validate, LayerSweepRanksEachDepthApart) {
  model::RunResults r;
  r.mode = "simulated";
  const double measured[] = {1.45, 1.38, 1.34};
  const double predicted[] = {1.40, 1.36, 1.35};
  const int depths[] = {4, 8, 16};
  for (int i = 0; i < 3; ++i) {
    model::VariantResult b = variant("rebuild", true, {1, 1, 1, 2}, {1, 1, 1, 0});
    model::VariantResult c = variant("cached", false, {measured[i], measured[i], measured[i], 2},
                                     {predicted[i], predicted[i], predicted[i], 0});
    b.layers = c.layers = depths[i];
    r.variants.push_back(b);
    r.variants.push_back(c);
  }
  auto rep = m::validate_results(r, "test");
  ASSERT_EQ(rep.rankings.size(), 3u);
  EXPECT_TRUE(rep.ranking_matches);
  EXPECT_EQ(rep.rankings[0].layers, 4);
  const std::string table = syncscope::validation_to_table(rep);
  // A simulated run names its speedups "simulated", never "measured".
  EXPECT_NE(table.find("ranking qwen3-0.6b/packing (L=8): simulated cached > rebuild"), std::string::npos) << table;
  EXPECT_NE(table.find("consistency check of the model against our own simulator"), std::string::npos) << table;
  EXPECT_EQ(table.find("measured"), std::string::npos) << table;
  EXPECT_EQ(table.find("DIFFERENT ORDER"), std::string::npos) << table;
  // Pooled, the shallow cached (1.45) would have been "faster" than the deep one predicted
  // at 1.35 < 1.40: now a mismatch inside one depth is still caught.
  r.variants[3].predicted_speedup = {0.9, 0.9, 0.9, 0};
  EXPECT_FALSE(m::validate_results(r, "test").ranking_matches);
}

TEST(Validate, OverlappingMeasurementsAreTies) {
  model::RunResults r;
  r.mode = "measured";
  r.variants.push_back(variant("rebuild", true, {1, 1, 1, 5}, {1, 1, 1, 0}));
  r.variants.push_back(variant("cached", false, {1.25, 1.15, 1.30, 5}, {1.20, 1.15, 1.24, 0}));
  r.variants.push_back(variant("device", false, {1.20, 1.10, 1.28, 5}, {1.22, 1.2, 1.3, 0}));
  auto rep = m::validate_results(r, "test");
  EXPECT_TRUE(rep.ranking_matches);  // cached vs device overlap: either order accepted
}

TEST(Validate, NearlyEqualPointValuesAreTies) {
  // Simulated results carry no interval. Two schedules 0.01% apart that the model predicts
  // equal are a tie; 1% apart in the other order from the prediction is a mismatch.
  model::RunResults r;
  r.mode = "simulated";
  r.variants.push_back(variant("single", true, {1, 1, 1, 3}, {1, 1, 1, 0}));
  // As a simulated run writes them: min..max over steps a few ns of rounding apart.
  r.variants.push_back(variant("double", false, {1.02584, 1.025840, 1.0258401, 3}, {1.0225, 1.0225, 1.0225, 0}));
  r.variants.push_back(variant("prefetch", false, {1.02573, 1.025729, 1.02573, 3}, {1.0225, 1.0225, 1.0225, 0}));
  EXPECT_TRUE(m::validate_results(r, "test").ranking_matches);
  r.variants[2].measured_speedup = {1.0361, 1.0360, 1.0362, 3};  // 1% faster than double
  r.variants[1].predicted_speedup = {1.03, 1.03, 1.03, 0};       // but predicted slower
  const auto rep = m::validate_results(r, "test");
  EXPECT_FALSE(rep.ranking_matches);
  ASSERT_EQ(rep.rankings.size(), 1u);
  ASSERT_EQ(rep.rankings[0].discordant.size(), 1u);
  EXPECT_NE(rep.rankings[0].discordant[0].find("prefetch simulated faster than double"), std::string::npos);
}

TEST(Validate, ToleranceFailuresAndMissingPredictions) {
  model::RunResults r;
  r.mode = "measured";
  r.variants.push_back(variant("rebuild", true, {1, 1, 1, 5}, {1, 1, 1, 0}));
  r.variants.push_back(variant("cached", false, {1.10, 1.09, 1.11, 5}, {1.40, 1.3, 1.5, 0}, 0.10));  // +27%
  r.variants.push_back(variant("device", false, {1.05, 1.04, 1.06, 5}, {0, 0, 0, 0}));
  auto rep = m::validate_results(r, "test");
  EXPECT_EQ(rep.failures, 1);
  EXPECT_EQ(rep.compared, 1);
  EXPECT_FALSE(rep.variants[1].within);
  EXPECT_FALSE(rep.variants[2].has_prediction);
  EXPECT_FALSE(rep.notes.empty());
  auto j = nlohmann::json::parse(m::validation_to_json(rep));
  EXPECT_EQ(j["schema_version"], m::kValidationSchemaVersion);
  EXPECT_EQ(j["summary"]["failures"], 1);
  auto table = syncscope::validation_to_table(rep);
  EXPECT_NE(table.find("FAIL"), std::string::npos);
}

// The verdict beside a ranking says where the two sides tie differently: "same order" only
// when both print the same order with the same ties.
namespace {

std::string ranking_verdict_of(double cached_seen, double device_seen, double cached_pred, double device_pred,
                               const std::string& mode = "simulated") {
  model::RunResults r;
  r.mode = mode;
  r.variants.push_back(variant("rebuild", true, {1, 1, 1, 3}, {1, 1, 1, 0}));
  r.variants.push_back(
      variant("cached", false, {cached_seen, cached_seen, cached_seen, 3}, {cached_pred, cached_pred, cached_pred, 0}));
  r.variants.push_back(
      variant("device", false, {device_seen, device_seen, device_seen, 3}, {device_pred, device_pred, device_pred, 0}));
  const std::string table = syncscope::validation_to_table(m::validate_results(r, "test"));
  const auto at = table.find("ranking qwen3-0.6b/packing: ");
  if (at == std::string::npos) return "no ranking line in:\n" + table;
  const std::string line = table.substr(at, table.find('\n', at) - at);
  return line.substr(line.rfind(" | ") + 3);
}

}  // namespace

TEST(ValidateRankingLine, StrictOnBothSidesInTheSameOrder) {
  EXPECT_EQ(ranking_verdict_of(1.30, 1.20, 1.28, 1.18), "same order");
}

TEST(ValidateRankingLine, TieOnOneSideIsSaid) {
  // Simulated device 1.30 > cached 1.20; predicted device 1.251, cached 1.250: 0.08% apart,
  // printed "device = cached". validate accepts it (device is still predicted faster), but
  // the line does not call it the same order without saying the predicted side ties.
  EXPECT_EQ(ranking_verdict_of(1.20, 1.30, 1.250, 1.251),
            "same order (predicted ties device = cached; simulated orders them)");
  // The other side: the simulator ties them (0.01% apart), the model orders them.
  EXPECT_EQ(ranking_verdict_of(1.2500, 1.2501, 1.20, 1.30),
            "same order (simulated ties device = cached; predicted orders them)");
}

TEST(ValidateRankingLine, TieOnBothSides) {
  EXPECT_EQ(ranking_verdict_of(1.2500, 1.2501, 1.251, 1.250), "same order (both tie device = cached)");
}

TEST(ValidateRankingLine, DifferentOrder) { EXPECT_EQ(ranking_verdict_of(1.30, 1.20, 1.18, 1.28), "DIFFERENT ORDER"); }

TEST(ValidateRankingLine, OppositeOrderWithinOverlappingIntervals) {
  // Measured: cached 1.25 [1.15, 1.30] over device 1.20 [1.10, 1.28], overlapping, so
  // validate accepts the model's device > cached; the line says why the orders differ.
  model::RunResults r;
  r.mode = "measured";
  r.variants.push_back(variant("rebuild", true, {1, 1, 1, 5}, {1, 1, 1, 0}));
  r.variants.push_back(variant("cached", false, {1.25, 1.15, 1.30, 5}, {1.20, 1.15, 1.24, 0}));
  r.variants.push_back(variant("device", false, {1.20, 1.10, 1.28, 5}, {1.26, 1.2, 1.3, 0}));
  const std::string table = syncscope::validation_to_table(m::validate_results(r, "test"));
  EXPECT_NE(table.find("| predicted device > cached > rebuild | same order (cached and device printed in opposite "
                       "orders, within the measured intervals' overlap)"),
            std::string::npos)
      << table;
}
