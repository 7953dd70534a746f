// The fit on data generated from known parameters plus noise: it recovers them within its
// intervals, and the 90% intervals cover the truth at about their nominal rate.
#include <gtest/gtest.h>

#include "syncscope/core/error.hpp"
#include "syncscope/model/fit.hpp"

namespace m = syncscope::model;

namespace {

// Step time of a packing run: T = A0 + L (A + s) for "rebuild", T = A0 + s + L A for
// "cached" (so T_saved = (L-1) s), plus Gaussian noise of sd `noise` ns.
std::vector<m::RunObservation> packing_runs(double A0, double A, double s, double noise, std::uint64_t seed,
                                            int reps = 3) {
  m::Rng rng(seed);
  std::vector<m::RunObservation> runs;
  for (int L : {4, 8, 12, 16, 20, 28}) {
    for (int r = 0; r < reps; ++r) {
      runs.push_back({"rebuild", L, 0, A0 + L * (A + s) + noise * rng.normal()});
      runs.push_back({"cached", L, 0, A0 + s + L * A + noise * rng.normal()});
    }
  }
  return runs;
}

}  // namespace

TEST(Fit, RecoversKnownParametersWithinIntervals) {
  const double A0 = 50e6, A = 20e6, s = 13.7e6, noise = 2e6;
  auto runs = packing_runs(A0, A, s, noise, 1);
  auto fit = m::fit_per_layer_saving(runs, "rebuild", "cached");
  EXPECT_TRUE(fit.per_layer_saving.interval().contains(s))
      << fit.per_layer_saving.lo << " .. " << fit.per_layer_saving.hi;
  EXPECT_TRUE(fit.intercept_difference.interval().contains(-s))
      << fit.intercept_difference.lo << " .. " << fit.intercept_difference.hi;
  EXPECT_NEAR(fit.per_layer_saving.value, s, 5 * fit.per_layer_saving.std_error);
  EXPECT_GT(fit.per_layer_saving.std_error, 0);
  ASSERT_EQ(fit.fit.parameters.size(), 4u);
  EXPECT_EQ(fit.fit.parameters[1].name, "per_layer_rebuild");
  EXPECT_NEAR(fit.fit.parameters[1].value, A + s, 4 * fit.fit.parameters[1].std_error);
  EXPECT_EQ(fit.fit.residuals.size(), runs.size());
  // rmse estimates the noise sd.
  EXPECT_NEAR(fit.fit.rmse, noise, 0.5 * noise);
  // The saving at L = 16: (L-1) s.
  bool found = false;
  for (const auto& [L, p] : fit.saving_at_layers)
    if (L == 16) {
      found = true;
      EXPECT_TRUE(p.interval().contains(15 * s)) << p.lo << " .. " << p.hi;
    }
  EXPECT_TRUE(found);
}

TEST(Fit, DeterministicForASeed) {
  auto runs = packing_runs(50e6, 20e6, 13.7e6, 2e6, 5);
  auto a = m::fit_per_layer_saving(runs, "rebuild", "cached");
  auto b = m::fit_per_layer_saving(runs, "rebuild", "cached");
  EXPECT_EQ(a.per_layer_saving.lo, b.per_layer_saving.lo);
  EXPECT_EQ(a.per_layer_saving.hi, b.per_layer_saving.hi);
}

TEST(Fit, IntervalsCoverAtAboutTheNominalRate) {
  // 200 seeded replications of the whole experiment; the 90% bootstrap intervals of the
  // per-layer saving and of the intercept difference must cover the truth 80-97% of the time.
  const double A0 = 50e6, A = 20e6, s = 13.7e6, noise = 3e6;
  const int reps = 200;
  int cover_s = 0, cover_i = 0;
  m::FitOptions o;
  o.bootstrap = 400;
  for (int r = 0; r < reps; ++r) {
    auto runs = packing_runs(A0, A, s, noise, 1000 + r, 2);
    o.seed = 77 + r;
    auto fit = m::fit_per_layer_saving(runs, "rebuild", "cached", o);
    cover_s += fit.per_layer_saving.interval().contains(s);
    cover_i += fit.intercept_difference.interval().contains(-s);
  }
  double rate_s = static_cast<double>(cover_s) / reps, rate_i = static_cast<double>(cover_i) / reps;
  EXPECT_GE(rate_s, 0.80);
  EXPECT_LE(rate_s, 0.97);
  EXPECT_GE(rate_i, 0.80);
  EXPECT_LE(rate_i, 0.97);
  RecordProperty("coverage_per_layer_saving", std::to_string(rate_s));
  RecordProperty("coverage_intercept_difference", std::to_string(rate_i));
}

TEST(Fit, ExpertTerm) {
  // MoE: T = a + L (b + E q_v) with q_loop = 60 us, q_sorted = 2 us, so the per-layer per-
  // expert saving is 58 us.
  m::Rng rng(3);
  std::vector<m::RunObservation> runs;
  for (int L : {6, 12, 24})
    for (int E : {8, 16, 32})
      for (int r = 0; r < 2; ++r) {
        runs.push_back({"loop", L, E, 1e8 + L * (5e6 + E * 60e3) + 3e5 * rng.normal()});
        runs.push_back({"sorted", L, E, 1e8 + L * (5e6 + E * 2e3) + 3e5 * rng.normal()});
      }
  auto fit = m::fit_per_layer_saving(runs, "loop", "sorted");
  ASSERT_TRUE(fit.has_experts);
  EXPECT_TRUE(fit.per_layer_expert_saving.interval().contains(58e3))
      << fit.per_layer_expert_saving.lo << " .. " << fit.per_layer_expert_saving.hi;
}

TEST(Fit, RejectsUndeterminedDesigns) {
  std::vector<m::RunObservation> same_l = {{"rebuild", 8, 0, 1e8},
                                           {"rebuild", 8, 0, 1.1e8},
                                           {"cached", 8, 0, 9e7},
                                           {"cached", 8, 0, 9.1e7},
                                           {"cached", 8, 0, 9.2e7}};
  EXPECT_THROW(m::fit_per_layer_saving(same_l, "rebuild", "cached"), syncscope::InputError);
  std::vector<m::RunObservation> base_only_one_l = {{"rebuild", 8, 0, 1e8},
                                                    {"rebuild", 8, 0, 1.1e8},
                                                    {"cached", 4, 0, 5e7},
                                                    {"cached", 8, 0, 9.1e7},
                                                    {"cached", 12, 0, 1.3e8}};
  EXPECT_THROW(m::fit_per_layer_saving(base_only_one_l, "rebuild", "cached"), syncscope::InputError);
  EXPECT_THROW(m::fit_per_layer_saving({{"rebuild", 0, 0, 1}}, "rebuild", "cached"), syncscope::InputError);
}
