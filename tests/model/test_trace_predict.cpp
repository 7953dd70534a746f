// predict --trace on hand-built traces: a host thread issuing work onto one GPU stream,
// laid out by the in-order model of hand_trace.hpp (a launch call takes 5 us and its work
// starts 5 us after it returns, or when the stream frees; a sync returns 20 us after the
// stream drains and the host resumes 1 us later). Expected values are worked out by hand
// from that layout in the comments, as numbers: never recomputed from the trace or with the
// code's own formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "hand_trace.hpp"
#include "syncscope/model/trace_predict.hpp"

namespace m = syncscope::model;
using namespace syncscope;

namespace {

using handtrace::fix;
using handtrace::Program;
using handtrace::us;

// Packed-sequence training without the cache: every layer rebuilds the mask (one kernel,
// one .item() sync, host work after it), then runs its body.
struct PackingTrace {
  Trace trace;
  int layers = 4, steps = 3;
};

// s per layer, by hand. In every layer the mask kernel starts when body part 1 ends (it is
// launched 5 us after it, and body 1 runs 1000 us). The sync returns 20 us after the mask
// kernel ends, the host resumes 1 us later, works 650 us, and launches body part 2 (5 us),
// which starts 5 us after that: the bubble is 20 + 1 + 650 + 5 + 5 = 681 us. With the mask
// ranges, s also counts the mask kernel (500 us): 1181 us.
constexpr double kBubbleUs = 681, kSWithMaskUs = 1181;
// One step (passes = 1, rebuilding), by hand, in us from its start on an idle stream.
// Layer 0: body 1 runs [10, 1010], the mask [1010, 1510], the sync returns at 1530, the
// host resumes at 1531 and works until 2181, body 2 runs [2191, 4191], the layer ends at
// 2286. A later layer's body 1 waits for the previous body 2 (2005 us after that layer's
// last launch returned, 1905 us after the layer ends), so it lasts 1905 + 1000 + 500 + 20 +
// 1 + 650 + 5 + 100 = 4181 us. Layer 3 starts at 2286 + 2 x 4181 = 10648 and its body 2
// ends 1905 + 1000 + 500 + 20 + 1 + 650 + 10 + 2000 = 6086 us later (16734); the step's last
// sync returns 20 us after that (16754) and the step range closes 2 us later: 16756. The
// next step starts on a drained stream, so every step is the same.
constexpr double kStepUs = 16756;
// passes: how often each layer runs per step under its name (2: forward and a checkpoint
// recompute); later passes rebuild too when `later_passes_rebuild`, else they run the body only.
PackingTrace packing_trace(bool with_mask_ranges, int passes = 1, bool later_passes_rebuild = true) {
  Program p;
  PackingTrace out;
  for (int step = 0; step < out.steps; ++step) {
    Ns step_start = p.now;
    for (int pass = 0; pass < passes; ++pass)
      for (int l = 0; l < out.layers; ++l) {
        Ns ls = p.now;
        if (pass > 0 && !later_passes_rebuild) {
          p.launch(3000 * us);  // body only
          p.now += 100 * us;
          p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), ls, p.now);
          continue;
        }
        p.launch(1000 * us);  // body part 1
        Ns mask_start = p.now;
        p.launch(500 * us, 7, "build_mask_kernel");
        p.sync("aten::item");
        // last GPU end before the return is the mask kernel; then 650 us host mask work
        p.now += 650 * us;
        Ns mask_end = p.now;
        if (with_mask_ranges) p.range(RangeKind::UserAnnotation, "packing::build_sdpa_mask", mask_start, mask_end);
        p.launch(2000 * us);  // body part 2
        p.now += 100 * us;
        p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), ls, p.now);
      }
    Ns end = p.sync("aten::item_end_of_step");
    p.range(RangeKind::UserAnnotation, "ProfilerStep#" + std::to_string(step), step_start, end + 2 * us);
    p.now = end + 10 * us;
  }
  p.t.meta.source_tool = "test";
  p.t.finalize();
  out.trace = std::move(p.t);
  return out;
}

}  // namespace

TEST(TracePredict, PackingFromMaskRangesAndSyncs) {
  auto pt = packing_trace(true);
  m::TracePredictOptions o;
  o.layer_glob = "layer_*";
  auto rep = m::predict_from_trace(pt.trace, o, "hand-built");
  const auto& f = fix(rep, "packing", "cached");
  ASSERT_TRUE(f.applicable) << f.reason;
  EXPECT_EQ(f.parameters.at("L").value, 4);
  EXPECT_NEAR(f.parameters.at("s_ns").value, kSWithMaskUs * us, 1.0);
  // The segment model ran (round trip estimated from the trace) and reports a regime.
  EXPECT_NE(f.regime, "");
  EXPECT_TRUE(f.alternatives.count("published (L-1)*s"));
  EXPECT_NEAR(f.alternatives.at("published (L-1)*s").value, 3 * 1181.0 * us, 1.0);  // 3543 us
  ASSERT_TRUE(f.speedup.has_value());
  EXPECT_NEAR(f.step_time_ns->value, kStepUs * us, 1.0);
  bool names_range = false, names_cause = false;
  for (const auto& e : f.evidence) {
    names_range = names_range || e.find("packing::build_sdpa_mask") != std::string::npos;
    names_cause = names_cause || e.find("aten::item") != std::string::npos;
  }
  EXPECT_TRUE(names_range);
  EXPECT_TRUE(names_cause);
  // With rebuild ranges the evidence is not the weak kind.
  EXPECT_FALSE(std::any_of(f.notes.begin(), f.notes.end(),
                           [](const std::string& n) { return n.rfind("weak evidence", 0) == 0; }));
  // No backward, no routing: the other fixes say why they do not apply.
  EXPECT_FALSE(fix(rep, "offload", "double").applicable);
  EXPECT_NE(fix(rep, "offload", "double").reason.find("backward"), std::string::npos);
  EXPECT_FALSE(fix(rep, "moe_routing", "sorted").applicable);
  auto j = nlohmann::json::parse(m::prediction_to_json(rep));
  // packing cached/device, offload double/prefetch, moe sorted/device, logging every/deferred
  EXPECT_EQ(j["fixes"].size(), 8u);
  EXPECT_TRUE(fix(rep, "packing", "device").applicable);
}

// Under gradient checkpointing the uncached path rebuilds in the forward and again in the
// recompute, under the same layer names: the cache saves every rebuild of a step but the
// first, so L counts rebuilding occurrences per step (8), not names (4).
TEST(TracePredict, PackingCountsRebuildsPerStepNotLayerNames) {
  auto pt = packing_trace(true, 2, true);
  m::TracePredictOptions o;
  o.layer_glob = "layer_*";
  auto rep = m::predict_from_trace(pt.trace, o, "hand-built");
  const auto& f = fix(rep, "packing", "cached");
  ASSERT_TRUE(f.applicable) << f.reason;
  EXPECT_EQ(f.parameters.at("L").value, 2 * pt.layers);
  EXPECT_TRUE(std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) {
    return n.find("rebuilds per step but 4 distinct layer names") != std::string::npos;
  }));
  // A second pass that does not rebuild (a plain backward) adds nothing to L.
  auto once = packing_trace(true, 2, false);
  auto rep1 = m::predict_from_trace(once.trace, o, "hand-built");
  const auto& f1 = fix(rep1, "packing", "cached");
  ASSERT_TRUE(f1.applicable) << f1.reason;
  EXPECT_EQ(f1.parameters.at("L").value, once.layers);
}

TEST(TracePredict, PackingFromRepeatedSyncCauseAlone) {
  auto pt = packing_trace(false);
  m::TracePredictOptions o;  // default layer patterns find layer_*
  auto rep = m::predict_from_trace(pt.trace, o, "hand-built");
  const auto& f = fix(rep, "packing", "cached");
  ASSERT_TRUE(f.applicable) << f.reason;
  EXPECT_NEAR(f.parameters.at("s_ns").value, kBubbleUs * us, 1.0);  // bubbles only
  // A repeated sync alone is weak evidence, and the prediction says so.
  EXPECT_TRUE(std::any_of(f.notes.begin(), f.notes.end(),
                          [](const std::string& n) { return n.rfind("weak evidence", 0) == 0; }));
}

TEST(TracePredict, NoLayersMeansNotApplicable) {
  auto pt = packing_trace(true);
  m::TracePredictOptions o;
  o.layer_glob = "block_*";
  auto rep = m::predict_from_trace(pt.trace, o, "hand-built");
  EXPECT_FALSE(fix(rep, "packing", "cached").applicable);
  EXPECT_FALSE(fix(rep, "moe_routing", "device").applicable);
}

TEST(TracePredict, OffloadReloadCopiesInBackward) {
  Program p;
  const int L = 6, steps = 2;
  const Ns c = 1200 * us, g = 3000 * us;
  for (int step = 0; step < steps; ++step) {
    Ns s0 = p.now;
    for (int l = 0; l < L; ++l) {  // forward
      Ns ls = p.now;
      p.launch(800 * us);
      p.now += 50 * us;
      p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), ls, p.now);
    }
    for (int l = L - 1; l >= 0; --l) {  // backward: reload then compute, one stream
      Ns bs = p.now;
      p.h2d(c, 64u << 20);
      p.launch(g);
      p.now += 20 * us;
      p.range(RangeKind::CpuOp, "autograd::engine::evaluate_function: CheckpointFunctionBackward", bs, p.now);
    }
    Ns e = p.sync("aten::item");
    p.range(RangeKind::UserAnnotation, "ProfilerStep#" + std::to_string(step), s0, e + 2 * us);
    p.now = e + 10 * us;
  }
  p.t.finalize();
  m::TracePredictOptions o;
  o.layer_glob = "layer_*";
  auto rep = m::predict_from_trace(p.t, o, "hand-built");
  const auto& d = fix(rep, "offload", "double");
  ASSERT_TRUE(d.applicable) << d.reason;
  EXPECT_EQ(d.parameters.at("L").value, L);
  EXPECT_NEAR(d.parameters.at("c_ns").value, static_cast<double>(c), 1);
  // Backward kernel time per reload: the whole backward window holds only the g kernels.
  EXPECT_NEAR(d.parameters.at("g_ns").value, static_cast<double>(g), 1);
  EXPECT_NEAR(d.saving_ns.value, 6000.0 * us, 1);  // 5 hidden reloads x min(1200, 3000) us
  EXPECT_EQ(d.regime, "compute-bound");
  EXPECT_TRUE(fix(rep, "offload", "prefetch").applicable);
  // The prefetch look-ahead: the fix's default (2), else what the options give it by key (as
  // predict --trace --prefetch-depth and a run's scenario do).
  EXPECT_EQ(fix(rep, "offload", "prefetch").parameters.at("prefetch_depth").value, 2);
  {
    m::TracePredictOptions k4 = o;
    k4.fix_numbers["offload"]["prefetch_depth"] = 4;
    const auto rep4 = m::predict_from_trace(p.t, k4, "hand-built");
    EXPECT_EQ(fix(rep4, "offload", "prefetch").parameters.at("prefetch_depth").value, 4);
  }
  // The same trace on a unified-memory profile: not applicable.
  model::GpuProfile gb10;
  gb10.name = "GB10";
  gb10.unified_memory = true;
  gb10.sync_round_trip_ns = 26000;
  o.profile = gb10;
  auto rep2 = m::predict_from_trace(p.t, o, "hand-built");
  EXPECT_FALSE(fix(rep2, "offload", "double").applicable);
}

TEST(TracePredict, OverlappedReloadsMeanTheFixIsInPlace) {
  Program p;
  const int L = 4;
  Ns s0 = p.now;
  for (int l = 0; l < L; ++l) {
    Ns bs = p.now;
    p.h2d(1000 * us, 32u << 20, 9);  // copy stream
    p.launch(3000 * us, 7);          // compute stream: runs beside the copy
    p.now += 20 * us;
    p.range(RangeKind::CpuOp, "autograd::engine::evaluate_function: MmBackward0", bs, p.now);
    p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), bs, p.now);
  }
  Ns e = p.sync("aten::item");
  p.range(RangeKind::UserAnnotation, "ProfilerStep#0", s0, e + 2 * us);
  p.t.finalize();
  auto rep = m::predict_from_trace(p.t, {}, "hand-built");
  const auto& d = fix(rep, "offload", "double");
  EXPECT_FALSE(d.applicable);
  EXPECT_NE(d.reason.find("already overlap"), std::string::npos) << d.reason;
}

TEST(TracePredict, MoeRoutingRuns) {
  Program p;
  const int L = 3, E = 8;
  Ns s0 = p.now;
  for (int l = 0; l < L; ++l) {
    Ns ls = p.now;
    p.launch(400 * us);  // router
    for (int e = 0; e < E; ++e) {
      p.launch(30 * us, 7, "nonzero_kernel");
      p.sync("aten::nonzero");
      p.now += 40 * us;  // host builds the expert's index
      p.launch(200 * us, 7, "expert_mlp");
    }
    p.now += 10 * us;
    p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), ls, p.now);
  }
  Ns e = p.sync("aten::item");
  p.range(RangeKind::UserAnnotation, "ProfilerStep#0", s0, e + 2 * us);
  p.t.finalize();
  auto rep = m::predict_from_trace(p.t, {}, "hand-built");
  const auto& s = fix(rep, "moe_routing", "sorted");
  ASSERT_TRUE(s.applicable) << s.reason;
  EXPECT_EQ(s.parameters.at("E").value, E);
  EXPECT_EQ(s.parameters.at("moe_layers").value, L);
  // q by hand: each expert's nonzero kernel ends, the sync returns 20 us later, the host
  // resumes 1 us after, works 40 us, launches the expert (5 us), which starts 5 us later:
  // 20 + 1 + 40 + 5 + 5 = 71 us, the same for every expert.
  EXPECT_NEAR(s.parameters.at("q_ns").value, 71.0 * us, 1);
  // The published q form: sorted leaves 3 syncs per MoE call: 3 layers x (8 - 3) x 71 us.
  EXPECT_NEAR(s.alternatives.at("published N*passes*(E-3)*q + kernel delta").value, 1065.0 * us, 1);
  // The segment form (analytic.hpp): per call, 8 routing-query launches (the nonzero
  // kernels), each routing sync's segment saving min(blocked, bubble) <= its 71 us bubble;
  // sorted launches E + 8 = 16 instead of the 8 queries, so here its own launches cost more
  // than the queries it removes: saving = 3 x (5 s_sync - 8 h_q).
  EXPECT_EQ(s.parameters.at("query_launches_per_call").value, 8.0);
  EXPECT_EQ(s.parameters.at("calls_per_step").value, 3.0);
  const double s_sync = s.parameters.at("sync_saving_ns").value, h_q = s.parameters.at("query_launch_ns").value;
  EXPECT_GT(s_sync, 0);
  EXPECT_LE(s_sync, 71.0 * us + 1);
  EXPECT_NEAR(s.saving_ns.value, 3 * (5 * s_sync - 8 * h_q), 1);
  // device, segment form: with no routing sync the step runs at the pace of the GPU here
  // (per layer 400 + 8 x (30 + 200) = 2240 us of kernels against ~0.4 ms of host launches),
  // less what it no longer runs: per layer the 8 nonzero kernels (240 us) and, per expert
  // launch folded into a grouped one, the shortest kernel time (30 us, the 10th percentile):
  // (8 - 1) x 1 x (1 + 1/1) - 4 on-device routing launches = 10 folds, 300 us. 3 x (2240 -
  // 540) = 5100 us; the last sync's bubble is 0 (nothing follows it).
  const auto& d = fix(rep, "moe_routing", "device");
  EXPECT_NEAR(d.alternatives.at("published N*passes*E*q + kernel delta").value, 1704.0 * us, 1);  // 3 x 8 x 71
  EXPECT_DOUBLE_EQ(d.parameters.at("gpu_busy_ns_per_step").value, 5100.0 * us);
  EXPECT_DOUBLE_EQ(d.parameters.at("other_bubble_ns_per_step").value, 0.0);
  EXPECT_LT(d.parameters.at("host_after_ns_per_step").value, d.parameters.at("gpu_busy_ns_per_step").value);
  EXPECT_EQ(d.regime, "gpu-bound");
  // The step by hand: the GPU runs from 10 us (the router's start) without idling except the
  // 8 bubbles of 71 us per layer: 3 x (2240 + 8 x 71) = 8424 us, ending at 8434; the last
  // sync returns 20 us later (8454) and the step range closes 2 us after: 8456 us. Saving
  // 8456 - 5100 = 3356 us.
  ASSERT_TRUE(d.step_time_ns.has_value());
  EXPECT_NEAR(d.step_time_ns->value, 8456.0 * us, 1.0);
  EXPECT_NEAR(d.saving_ns.value, 3356.0 * us, 1.0);
  // The routing syncs are not mistaken for a packing rebuild.
  EXPECT_FALSE(fix(rep, "packing", "cached").applicable);
}

// One MoE layer of the loop baseline per layer range: each expert's nonzero sync, then a
// gather (not row-scaled once padded: it keeps its total size) and a GEMM named as cuBLAS's.
// passes = 2: every layer routes again in a checkpoint recompute under the same name.
Trace moe_loop_trace(int L, int E, const char* gemm_name, Ns gemm_ns, Ns gather_ns, int passes = 1) {
  Program p;
  Ns s0 = p.now;
  for (int pl = 0; pl < passes * L; ++pl) {
    const int l = pl % L;
    Ns ls = p.now;
    for (int e = 0; e < E; ++e) {
      p.launch(30 * us, 7, "nonzero_kernel");
      p.sync("aten::nonzero");
      p.now += 40 * us;
      p.launch(gather_ns, 7, "index_select_kernel");
      p.launch(gemm_ns, 7, gemm_name);
    }
    p.now += 10 * us;
    p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), ls, p.now);
  }
  Ns e = p.sync("aten::item");
  p.range(RangeKind::UserAnnotation, "ProfilerStep#0", s0, e + 2 * us);
  p.t.finalize();
  return std::move(p.t);
}

// Predictions for one trace without and with k given: the device variant's padding charge
// is the difference of their savings.
struct PaddedPair {
  m::PredictionReport plain, padded;
  double charge() const {
    return fix(plain, "moe_routing", "device").saving_ns.value - fix(padded, "moe_routing", "device").saving_ns.value;
  }
};
PaddedPair predict_with_and_without_k(const Trace& t, int k) {
  m::TracePredictOptions o;
  PaddedPair r;
  r.plain = m::predict_from_trace(t, o, "hand-built");
  o.fix_numbers["moe_routing"]["top_k"] = k;
  r.padded = m::predict_from_trace(t, o, "hand-built");
  return r;
}

TEST(TracePredict, MoePaddingChargesOnlyRowScaledWork) {
  const int L = 2, E = 8, k = 2;
  const auto r =
      predict_with_and_without_k(moe_loop_trace(L, E, "nvjet_tst_128x256_64x4_2x1_v_bz_TNT", 150 * us, 50 * us), k);
  // E/k = 4: three more times each expert GEMM, forward and backward (x3); the gathers and
  // the nonzero kernels are not multiplied: 3 x 3 x 2 layers x 8 experts x 150 us = 21.6 ms.
  EXPECT_NEAR(r.charge(), 21600.0 * us, 1000);
  // Padding is not charged to the sorted variant.
  EXPECT_DOUBLE_EQ(fix(r.plain, "moe_routing", "sorted").saving_ns.value,
                   fix(r.padded, "moe_routing", "sorted").saving_ns.value);
}

TEST(TracePredict, MoePaddingWithRecomputeChargesFourForwardPasses) {
  const int L = 2, E = 8, k = 2;
  const auto r =
      predict_with_and_without_k(moe_loop_trace(L, E, "sm90_xmma_gemm_bf16bf16", 150 * us, 50 * us, /*passes=*/2), k);
  // Forward, recompute and backward's two GEMMs: four forward passes' worth of padded GEMMs,
  // of which the trace shows two (each layer routes twice): 3 x 4 x 2 x 8 x 150 us = 28.8 ms.
  EXPECT_NEAR(r.charge(), 28800.0 * us, 1000);
}

TEST(TracePredict, MoePaddingWithoutGemmNamesIsAnUpperBound) {
  const int L = 2, E = 8, k = 2;
  const auto r = predict_with_and_without_k(moe_loop_trace(L, E, "expert_block", 150 * us, 50 * us), k);
  // Everything launched from the first routing sync on: (E-1) nonzero kernels, E gathers and
  // E expert blocks per layer, 2 x (7 x 30 + 8 x (50 + 150)) = 3620 us, charged 3 x 3 times:
  // 32.58 ms.
  EXPECT_NEAR(r.charge(), 32580.0 * us, 1000);
  const auto& d = fix(r.padded, "moe_routing", "device");
  EXPECT_TRUE(std::any_of(d.notes.begin(), d.notes.end(),
                          [](const std::string& n) { return n.find("upper bound") != std::string::npos; }));
}

TEST(TracePredict, RowScaledKernelNames) {
  for (const char* n :
       {"nvjet_tst_192x192_64x4_1x2_h_bz_coopB_TNN", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
        "cutlass3x_sm90_tensorop_s64x128x16gemm_bf16", "ampere_bf16_s16816gemm_bf16_128x64",
        "void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel>", "expert_07.gate",
        "expert_07.down", "q_proj", "experts.bmm_up"})
    EXPECT_TRUE(m::is_row_scaled_kernel(n)) << n;
  for (const char* n : {"nonzero_kernel", "void at::native::index_select_kernel", "expert_mask.eq", "out.index_add_",
                        "upsample_kernel", "gate_logits_softmax"})
    EXPECT_FALSE(m::is_row_scaled_kernel(n)) << n;
}

TEST(TracePredict, OverlapSlowdownFromKernelsBesideCopies) {
  // The same two kernels run alone (100 us / 50 us) and beside a 64 MiB H2D copy on another
  // stream (120 us / 55 us): ratios 1.2 and 1.1, median 1.15 -> sigma 0.15.
  Trace t;
  auto kernel = [&](const char* name, Ns start, Ns d, std::int64_t stream) {
    Kernel k;
    k.name = t.intern(name);
    k.device = 0;
    k.stream = stream;
    k.start = start;
    k.end = start + d;
    t.kernels.push_back(k);
  };
  Ns now = 0;
  for (int i = 0; i < 4; ++i) {
    kernel("gemm", now, 100 * us, 7);
    kernel("norm", now + 200 * us, 50 * us, 7);
    now += 1000 * us;
  }
  for (int i = 0; i < 4; ++i) {
    Memcpy c;
    c.kind = CopyKind::HtoD;
    c.bytes = 64u << 20;
    c.device = 0;
    c.stream = 9;
    c.start = now;
    c.end = now + 500 * us;
    t.memcpys.push_back(c);
    kernel("gemm", now + 10 * us, 120 * us, 7);
    kernel("norm", now + 200 * us, 55 * us, 7);
    now += 1000 * us;
  }
  t.finalize();
  auto est = m::estimate_overlap_slowdown(t);
  ASSERT_TRUE(est.has_value());
  EXPECT_NEAR(est->sigma.value, 0.15, 1e-9);
  EXPECT_EQ(est->kernel_names, 2);
  EXPECT_EQ(est->beside, 8);
  EXPECT_EQ(est->alone, 8);
  EXPECT_LE(est->sigma.lo, 0.1 + 1e-9);
  EXPECT_GE(est->sigma.hi, 0.2 - 1e-9);
  // No copies: nothing to measure.
  Trace empty;
  EXPECT_FALSE(m::estimate_overlap_slowdown(empty).has_value());
}
