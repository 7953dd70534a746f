// The analytic predictions (model/predict.hpp) against values worked out by hand in each
// test's comments (or a published figure), never recomputed with the code's own formula.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/closed_form.hpp"
#include "syncscope/fixes/offload/closed_form.hpp"
#include "syncscope/fixes/packing/closed_form.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/reports/model_printers.hpp"

namespace m = syncscope::model;
namespace pk = syncscope::fixes::packing;
namespace of = syncscope::fixes::offload;
namespace mo = syncscope::fixes::moe_routing;

TEST(PredictPacking, IntervalPropagates) {
  pk::PackingParams p;
  p.layers = 28;
  p.s_ns = {13.7e6, 12e6, 15e6};
  auto f = pk::predict_packing(p, m::Interval{2155e6, 2100e6, 2200e6});
  // Unsloth's published prediction for Qwen3-0.6B (docs/sources.md#packing-cache):
  // 27 x 13.7 ms = 369.9 ms (they round it to ~370 ms).
  EXPECT_NEAR(f.saving_ns.value, 369.9e6, 1);
  // (L-1) s is linear in s: its interval is 27 x the input's, 324 ms and 405 ms (Monte Carlo
  // quantiles: 3%).
  EXPECT_NEAR(f.saving_ns.lo, 324e6, 0.03 * 324e6);
  EXPECT_NEAR(f.saving_ns.hi, 405e6, 0.03 * 405e6);
  ASSERT_TRUE(f.speedup.has_value());
  // 2155 ms / (2155 - 369.9) ms = 2155 / 1785.1 = 1.20721528...
  EXPECT_NEAR(f.speedup->value, 1.2072153, 1e-7);
  EXPECT_LT(f.speedup->lo, f.speedup->value);
  EXPECT_GT(f.speedup->hi, f.speedup->value);
  EXPECT_EQ(f.regime, "unknown");
}

TEST(PredictPacking, SegmentModelReportsRegime) {
  pk::PackingParams p;
  p.layers = 16;
  p.s_ns = m::Interval::exact(3.1e6);
  p.host_ns = m::Interval::exact(12e6);
  p.gpu_ns = m::Interval::exact(4e6);
  p.rebuild_host_ns = m::Interval::exact(1e6);
  p.rebuild_gpu_ns = m::Interval::exact(2e6);
  p.round_trip_ns = m::Interval::exact(0.05e6);
  p.syncs_per_layer = 2;
  auto f = pk::predict_packing(p, std::nullopt);
  EXPECT_EQ(f.regime, "host-bound");
  // By hand (ms; host H 12, GPU D 4, rebuild on the host w_h 1 and on the GPU w_d 2, round
  // trip r 0.05, k = 2 syncs per layer): a baseline layer takes k r + w_h + max(H - w_h, D)
  // = 0.1 + 1 + 11 = 12.1, x 16 = 193.6. Fixed, the first layer still builds (12.1) and the
  // other 15 take max(H - w_h, D - w_d) = max(11, 2) = 11: 177.1. Saving 16.5 ms (the host's
  // 1.1 ms per later layer: the GPU was never the bottleneck).
  EXPECT_NEAR(f.saving_ns.value, 16.5e6, 1);
  EXPECT_NEAR(f.alternatives.at("published (L-1)*s").value, 46.5e6, 1);  // 15 x 3.1 ms
}

TEST(PredictPacking, DeviceVariantNeedsTheSegmentInputs) {
  pk::PackingParams p;
  p.layers = 16;
  p.s_ns = m::Interval::exact(5.05e6);
  auto none = pk::predict_packing(p, std::nullopt, {}, "device");
  EXPECT_FALSE(none.applicable);
  p.host_ns = m::Interval::exact(10e6);
  p.gpu_ns = m::Interval::exact(10e6);
  p.rebuild_host_ns = m::Interval::exact(5e6);
  p.rebuild_gpu_ns = m::Interval::exact(0);
  p.round_trip_ns = m::Interval::exact(0.05e6);
  auto d = pk::predict_packing(p, std::nullopt, {}, "device");
  ASSERT_TRUE(d.applicable);
  // Baseline 16 x (0.05 + 5 + max(5, 10)) = 240.8 ms; built once on the GPU:
  // max(16 x 5, 16 x 10 + 0) = 160 ms, GPU-bound once the host rebuild is gone.
  EXPECT_NEAR(d.saving_ns.value, 80.8e6, 1);
  EXPECT_EQ(d.regime, "gpu-bound");
  EXPECT_THROW(pk::predict_packing(p, std::nullopt, {}, "rebuild"), syncscope::InputError);
}

TEST(PredictPacking, SavingLargerThanStepIsAnInputError) {
  pk::PackingParams p;
  p.layers = 16;
  p.s_ns = m::Interval::exact(13.7e6);
  EXPECT_THROW(pk::predict_packing(p, m::Interval::exact(100e6)), syncscope::InputError);
  p.layers = 0;
  EXPECT_THROW(pk::predict_packing(p, std::nullopt), syncscope::InputError);
}

TEST(PredictOffload, DoubleAndPrefetch) {
  of::OffloadParams p;
  p.layers = 36;
  p.copy_ns = m::Interval::exact(6.6e6);
  p.compute_ns = m::Interval::exact(20e6);
  auto d = of::predict_offload(p, "double", std::nullopt);
  // Compute-bound (g = 20 ms > c = 6.6 ms): each of the 35 hidden reloads saves c,
  // 35 x 6.6 ms = 231 ms.
  EXPECT_NEAR(d.saving_ns.value, 231e6, 1);
  EXPECT_EQ(d.regime, "compute-bound");
  EXPECT_NEAR(d.parameters.at("hidden_reloads").value, 35, 1e-9);
  p.slowdown = m::Interval::exact(0.15);
  auto s = of::predict_offload(p, "double", m::Interval::exact(1e9 / 0.3739));
  // With compute slowed by 15% beside a copy, the hidden copy time is c / 1.15 per reload:
  // 231 ms / 1.15 = 200.8695652 ms.
  EXPECT_NEAR(s.saving_ns.value, 200.8695652e6, 1);
  EXPECT_NEAR(s.alternatives.at("published (L-1)*min(c,g)").value, 231e6, 1);
  ASSERT_TRUE(s.speedup.has_value());
  // Prefetch depth 2 with constant times: no better than double buffering.
  p.prefetch_depth = 2;
  auto pf = of::predict_offload(p, "prefetch", std::nullopt);
  EXPECT_NEAR(pf.saving_ns.value, s.saving_ns.value, 1);
  p.prefetch_depth = 1;
  EXPECT_THROW(of::predict_offload(p, "prefetch", std::nullopt), syncscope::InputError);
}

// The host bound: each layer's backward takes at least the host's issue time h, so a variant's
// backward is max(L*h, its ring time) and the saving max(L*h, L(c+g)) - max(L*h, double).
TEST(PredictOffload, HostIssueTimeBoundsEachLayer) {
  of::OffloadParams p;
  p.layers = 36;
  p.copy_ns = m::Interval::exact(6.6e6);
  p.compute_ns = m::Interval::exact(20e6);
  // No host time: the ring alone (35 hidden reloads of 6.6 ms).
  p.host_ns = m::Interval::exact(0);
  EXPECT_NEAR(of::predict_offload(p, "double", std::nullopt).saving_ns.value, 231e6, 1);
  // A host slower than copy + compute per layer (30 ms >= 26.6 ms): both variants run at the
  // host's pace, nothing saved, and the regime says so.
  p.host_ns = m::Interval::exact(30e6);
  const auto host = of::predict_offload(p, "double", std::nullopt);
  EXPECT_NEAR(host.saving_ns.value, 0, 1);
  EXPECT_EQ(host.regime, "host-bound");
  EXPECT_NEAR(host.parameters.at("h_ns").value, 30e6, 1e-6);
  EXPECT_EQ(host.formula, "max(L*h, single) - max(L*h, double)");
  // In between (h = 24 ms: above double's 20 ms stage, below single's 26.6 ms): only the part
  // of the single-buffered layer above the host's pace is saved, 36 x 26.6 - 36 x 24 ms.
  p.host_ns = m::Interval::exact(24e6);
  const auto mid = of::predict_offload(p, "double", std::nullopt);
  EXPECT_NEAR(mid.saving_ns.value, 36 * 26.6e6 - 36 * 24e6, 1);
  EXPECT_EQ(mid.regime, "compute-bound");
  // Below double's stage the host never binds: the ring's saving again.
  p.host_ns = m::Interval::exact(10e6);
  EXPECT_NEAR(of::predict_offload(p, "double", std::nullopt).saving_ns.value, 231e6, 1);
  p.host_ns = m::Interval::exact(-1);
  EXPECT_THROW(of::predict_offload(p, "double", std::nullopt), syncscope::InputError);
}

TEST(PredictOffload, UnifiedMemoryIsNotApplicable) {
  of::OffloadParams p;
  p.layers = 36;
  p.copy_ns = m::Interval::exact(6.6e6);
  p.compute_ns = m::Interval::exact(20e6);
  p.unified_memory = true;
  auto f = of::predict_offload(p, "double", m::Interval::exact(2e9));
  EXPECT_FALSE(f.applicable);
  EXPECT_NE(f.reason.find("unified"), std::string::npos);
  EXPECT_FALSE(f.speedup.has_value());
}

TEST(PredictMoe, SortedAndDevice) {
  mo::MoeParams p;
  p.experts = 32;
  p.moe_layers = 24;
  p.passes = 2;
  p.per_expert_ns = m::Interval::exact(58e3);
  auto s = mo::predict_moe(p, "sorted", std::nullopt);
  auto d = mo::predict_moe(p, "device", std::nullopt);
  // sorted leaves 3 syncs per MoE call (the step program's count): (E - 3) q saved per call,
  // 24 layers x 2 passes x 29 x 58 us = 80.736 ms.
  EXPECT_NEAR(s.saving_ns.value, 80.736e6, 1e-6);
  EXPECT_EQ(s.formula, "N * passes * (E-3) * q + kernel delta");
  EXPECT_DOUBLE_EQ(s.parameters.at("sorted_syncs_per_call").value, 3);
  EXPECT_NEAR(d.saving_ns.value, 89.088e6, 1e-6);  // every routing sync: 24 x 2 x 32 x 58 us
  EXPECT_THROW(mo::predict_moe(p, "loop", std::nullopt), syncscope::InputError);
}

TEST(PredictJson, CarriesSchemaAndPerFixFields) {
  m::PredictionReport r;
  r.source = "explicit values";
  pk::PackingParams p;
  p.layers = 16;
  p.s_ns = m::Interval::exact(13.7e6);
  r.fixes.push_back(pk::predict_packing(p, std::nullopt));
  r.fixes.push_back(pk::predict_packing(p, m::Interval::exact(1730e6)));
  auto j = nlohmann::json::parse(m::prediction_to_json(r));
  EXPECT_EQ(j["schema_version"], m::kPredictionSchemaVersion);
  ASSERT_EQ(j["fixes"].size(), 2u);
  EXPECT_NEAR(j["fixes"][0]["predicted_saving_ns"].get<double>(), 205.5e6, 1e-3);  // 15 x 13.7 ms
  EXPECT_TRUE(j["fixes"][0]["predicted_speedup"].is_null());
  // 1730 / (1730 - 205.5) = 1730 / 1524.5 = 1.13479829...
  EXPECT_NEAR(j["fixes"][1]["predicted_speedup"].get<double>(), 1.1347983, 1e-7);
  auto text = syncscope::prediction_to_text(r);
  EXPECT_NE(text.find("needs a step time"), std::string::npos);
  EXPECT_NE(text.find("205.500 ms"), std::string::npos);
}
