// predict --trace: predictions only from evidence that fits, and Unsloth's offload (the
// kept last layer): reload copies must be launched inside backward on the backward thread,
// repeat per step with a count near the layer count, and per-step figures need steps or
// iterations, never sums over the whole trace.
#include <gtest/gtest.h>

#include "hand_trace.hpp"
#include "syncscope/model/trace_predict.hpp"

namespace m = syncscope::model;
using namespace syncscope;

namespace {

using handtrace::fix;
using handtrace::Program;
using handtrace::us;

constexpr std::int64_t kMain = 1, kAutograd = 2;

// A ResNet-like training loop as torch.profiler records it without a schedule: no
// ProfilerStep ranges; each iteration the main thread copies the input batch (~73 MiB)
// host-to-device inside aten::to, runs forward under "nn.Module: ResNet_0", then waits in
// Tensor.backward's Python frame while the autograd thread runs the backward ops, then the
// optimizer step. With `markers` false the forward and optimizer ranges are left out (the
// backward frames still mark iterations).
Trace resnet_like(int iterations, bool markers) {
  Program p;
  for (int it = 0; it < iterations; ++it) {
    p.tid = kMain;
    const Ns to_start = p.now;
    p.h2d(6000 * us, 73u << 20);
    p.range(RangeKind::CpuOp, "aten::to", to_start, p.now);
    const Ns fwd = p.now;
    for (int k = 0; k < 20; ++k) p.launch(300 * us, 7, "implicit_convolve_sgemm");
    if (markers) p.range(RangeKind::PythonFunction, "nn.Module: ResNet_0", fwd, p.now);
    // Backward on the autograd thread while the main thread waits in Tensor.backward.
    const Ns bw_start = p.now;
    p.tid = kAutograd;
    for (int k = 0; k < 20; ++k) {
      const Ns s = p.now;
      p.launch(600 * us, 7, "wgrad_alg0_engine");
      p.range(RangeKind::CpuOp, "autograd::engine::evaluate_function: ConvolutionBackward0", s, p.now);
    }
    const Ns bw_end = p.gpu_end();
    p.tid = kMain;
    p.range(RangeKind::PythonFunction, "torch/_tensor.py(626): backward", bw_start, bw_end);
    p.now = bw_end + 50 * us;
    const Ns opt = p.now;
    for (int k = 0; k < 4; ++k) p.launch(100 * us, 7, "multi_tensor_apply_kernel");
    if (markers) p.range(RangeKind::UserAnnotation, "Optimizer.step#SGD.step", opt, p.now);
    p.now += 200 * us;
  }
  p.t.finalize();
  return std::move(p.t);
}

// Checkpoint reloads done right: per iteration, L layer ranges in forward, then backward on
// the same thread reloading `reloads` activations (64 MiB each) before each layer's
// gradient kernels. Iteration boundaries: ProfilerStep ranges, optimizer ranges, or none.
enum class Bounds { Steps, Optimizer, None };
Trace reload_trace(int L, int reloads, int steps, Bounds bounds, Ns c = 1200 * us, Ns g = 3000 * us) {
  Program p;
  for (int step = 0; step < steps; ++step) {
    const Ns s0 = p.now;
    for (int l = 0; l < L; ++l) {
      const Ns ls = p.now;
      p.launch(800 * us);
      p.now += 50 * us;
      p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), ls, p.now);
    }
    for (int l = L - 1; l >= 0; --l) {
      const Ns bs = p.now;
      if (l < reloads) p.h2d(c, 64u << 20);
      p.launch(g);
      p.now += 20 * us;
      p.range(RangeKind::CpuOp, "autograd::engine::evaluate_function: CheckpointFunctionBackward", bs, p.now);
    }
    const Ns os = p.now;
    p.launch(100 * us, 7, "adam");
    if (bounds == Bounds::Optimizer) p.range(RangeKind::UserAnnotation, "Optimizer.step#AdamW.step", os, p.now);
    const Ns e = p.sync("aten::item");
    if (bounds == Bounds::Steps)
      p.range(RangeKind::UserAnnotation, "ProfilerStep#" + std::to_string(step), s0, e + 2 * us);
    p.now = e + 10 * us;
  }
  p.t.finalize();
  return std::move(p.t);
}

m::PredictionReport predict(const Trace& t, const std::string& layer_glob = "layer_*") {
  m::TracePredictOptions o;
  o.layer_glob = layer_glob;
  return m::predict_from_trace(t, o, "hand-built");
}

TEST(TraceEvidence, ResNetInputBatchesAreNotCheckpointReloads) {
  // 30 iterations, no step ranges. The input batches are copied by the
  // main thread outside backward; backward runs on the autograd thread. Merging all backward
  // ranges into one window took them for reloads ("584 ms per step"): never again.
  for (bool markers : {true, false}) {
    SCOPED_TRACE(markers ? "with forward and optimizer ranges" : "without iteration markers");
    const Trace t = resnet_like(30, markers);
    const auto rep = predict(t, "");
    for (const char* v : {"double", "prefetch"}) {
      const auto& f = fix(rep, "offload", v);
      EXPECT_FALSE(f.applicable);
      EXPECT_EQ(f.saving_ns.value, 0.0);
    }
    // 29 whole iterations between 30 optimizer steps (or backward frames); none of the 30
    // input copies is a reload.
    const std::string reason = fix(rep, "offload", "double").reason;
    EXPECT_NE(reason.find("0 host-to-device copies"), std::string::npos) << reason;
    EXPECT_NE(reason.find("30 more launched outside backward or on another thread"), std::string::npos) << reason;
    EXPECT_NE(reason.find("29 whole iterations"), std::string::npos) << reason;
    EXPECT_NE(reason.find(markers ? "Optimizer.step#SGD.step" : "torch/_tensor.py(626): backward"), std::string::npos)
        << reason;
    EXPECT_FALSE(fix(rep, "packing", "cached").applicable);
    EXPECT_FALSE(fix(rep, "moe_routing", "device").applicable);
  }
}

TEST(TraceEvidence, CopiesOnAnotherThreadDuringBackwardAreNotReloads) {
  // The same loop with the next batch prefetched by the main thread while the autograd
  // thread runs backward: inside backward in time, but not on the thread that runs it.
  Program p;
  for (int it = 0; it < 3; ++it) {
    p.tid = kAutograd;
    const Ns bs = p.now;
    for (int k = 0; k < 6; ++k) p.launch(600 * us);
    p.range(RangeKind::CpuOp, "autograd::engine::evaluate_function: MmBackward0", bs, p.now);
    p.tid = kMain;
    p.now = bs + 1 * us;
    for (int k = 0; k < 6; ++k) p.h2d(500 * us, 8u << 20, 9);
    const Ns e = p.sync("aten::item");
    p.range(RangeKind::UserAnnotation, "ProfilerStep#" + std::to_string(it), bs, e + 1 * us);
    p.now = e + 10 * us;
  }
  p.t.finalize();
  const auto report1 = predict(p.t, "");
  const auto& f = fix(report1, "offload", "double");
  EXPECT_FALSE(f.applicable);
  EXPECT_NE(f.reason.find("18 more launched outside backward or on another thread"), std::string::npos) << f.reason;
}

TEST(TraceEvidence, ReloadsNeedStepsOrIterations) {
  // A real reload pattern, but nothing says where one step ends: not applicable, and the
  // whole trace is not taken for one step.
  const auto rep = predict(reload_trace(6, 6, 3, Bounds::None));
  const auto& f = fix(rep, "offload", "double");
  EXPECT_FALSE(f.applicable);
  EXPECT_NE(f.reason.find("no step ranges"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("--step-range"), std::string::npos) << f.reason;
}

TEST(TraceEvidence, IterationsFromOptimizerStepsCountReloadsPerStep) {
  const Ns c = 1200 * us, g = 3000 * us;
  const auto rep = predict(reload_trace(6, 6, 4, Bounds::Optimizer, c, g));
  const auto& f = fix(rep, "offload", "double");
  ASSERT_TRUE(f.applicable) << f.reason;
  // 3 whole iterations between 4 optimizer steps, 6 reloads in each: L = 6, not 18 or 24.
  EXPECT_EQ(f.parameters.at("L").value, 6);
  EXPECT_NEAR(f.parameters.at("c_ns").value, static_cast<double>(c), 1);
  EXPECT_NEAR(f.parameters.at("g_ns").value, static_cast<double>(g), 1);
  EXPECT_NEAR(f.saving_ns.value, 5 * static_cast<double>(c), 1);
  ASSERT_TRUE(f.step_time_ns.has_value());  // from the iterations: a speedup is possible
  EXPECT_GT(f.step_time_ns->value, 6 * static_cast<double>(c + g));
  bool said = false;
  for (const auto& n : rep.notes) said = said || n.find("3 whole iterations") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(TraceEvidence, UnslothKeepsTheLastLayer) {
  // Unsloth offloads L-1 layers; with 5 reloads per step and 6 layer ranges,
  // L = reloads + 1 = 6 and the double-buffered saving is (L-1)*min(c, g) = 5*c, where
  // taking L = reloads would say 4*c.
  const Ns c = 1200 * us, g = 3000 * us;
  const auto report2 = predict(reload_trace(6, 5, 3, Bounds::Steps, c, g));
  const auto& kept = fix(report2, "offload", "double");
  ASSERT_TRUE(kept.applicable) << kept.reason;
  EXPECT_EQ(kept.parameters.at("L").value, 6);
  EXPECT_NEAR(kept.saving_ns.value, 5 * static_cast<double>(c), 1);
  bool said = false;
  for (const auto& e : kept.evidence) said = said || e.find("L = reloads + 1 = 6") != std::string::npos;
  EXPECT_TRUE(said);
  // Every layer reloaded (our single/double baselines): L = reloads.
  const auto report3 = predict(reload_trace(6, 6, 3, Bounds::Steps, c, g));
  const auto& all = fix(report3, "offload", "double");
  ASSERT_TRUE(all.applicable) << all.reason;
  EXPECT_EQ(all.parameters.at("L").value, 6);
}

TEST(TraceEvidence, ReloadCountFarFromTheLayerCountIsNoReloadPattern) {
  // 12 layers, 3 large copies per step in backward: something else (a few big buffers).
  const auto report4 = predict(reload_trace(12, 3, 3, Bounds::Steps));
  const auto& f = fix(report4, "offload", "double");
  EXPECT_FALSE(f.applicable);
  EXPECT_NE(f.reason.find("not near the 12 layer ranges"), std::string::npos) << f.reason;
}

TEST(TraceEvidence, ReloadCountThatDoesNotRepeatPerStepIsNoReloadPattern) {
  Trace t = reload_trace(6, 6, 3, Bounds::Steps);
  // Drop the reloads of the second step: 6, 0, 6.
  Ns a = 0, b = 0;
  for (const auto& r : t.ranges)
    if (t.str(r.name) == "ProfilerStep#1") a = r.start, b = r.end;
  std::erase_if(t.memcpys, [&](const Memcpy& mc) { return a <= mc.start && mc.start < b; });
  const auto report5 = predict(t);
  const auto& f = fix(report5, "offload", "double");
  EXPECT_FALSE(f.applicable);
  EXPECT_NE(f.reason.find("does not repeat per step"), std::string::npos) << f.reason;
}

// Layers that all share one name, with a repeated per-layer sync, in a trace without any
// step or iteration boundary: layers per step cannot be counted.
TEST(TraceEvidence, SameNamedLayersWithoutIterationsGiveNoPerStepCount) {
  Program p;
  for (int step = 0; step < 3; ++step)
    for (int l = 0; l < 4; ++l) {
      const Ns ls = p.now;
      p.launch(500 * us, 7, "build_mask_kernel");
      p.sync("aten::item");
      for (int e = 0; e < 4; ++e) {  // and per-expert routing syncs
        p.launch(30 * us, 7, "nonzero_kernel");
        p.sync("aten::nonzero");
        p.launch(200 * us, 7, "expert_mlp");
      }
      p.range(RangeKind::UserAnnotation, "DecoderLayer", ls, p.now);
    }
  p.t.finalize();
  const auto rep = predict(p.t, "DecoderLayer");
  const auto& f = fix(rep, "packing", "cached");
  EXPECT_FALSE(f.applicable);
  EXPECT_NE(f.reason.find("layers per step cannot be counted"), std::string::npos) << f.reason;
  const auto& moe = fix(rep, "moe_routing", "sorted");
  EXPECT_FALSE(moe.applicable);
  EXPECT_NE(moe.reason.find("MoE layers per step cannot be counted"), std::string::npos) << moe.reason;
}

TEST(TraceEvidence, PackingPatternInOneStepOnlyDoesNotRepeat) {
  // Three steps of four named layers; only the first step rebuilds (a mask range and its
  // sync in every layer), the others hit a cache: the pattern does not repeat per step.
  Program p;
  for (int step = 0; step < 3; ++step) {
    const Ns s0 = p.now;
    for (int l = 0; l < 4; ++l) {
      const Ns ls = p.now;
      if (step == 0) {
        const Ns ms = p.now;
        p.launch(500 * us, 7, "build_mask_kernel");
        p.sync("aten::item");
        p.range(RangeKind::UserAnnotation, "build_sdpa_mask", ms, p.now);
      }
      p.launch(1000 * us);
      p.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), ls, p.now);
    }
    const Ns e = p.sync("aten::item_end_of_step");
    p.range(RangeKind::UserAnnotation, "ProfilerStep#" + std::to_string(step), s0, e + 1 * us);
    p.now = e + 10 * us;
  }
  p.t.finalize();
  const auto report6 = predict(p.t);
  const auto& f = fix(report6, "packing", "cached");
  EXPECT_FALSE(f.applicable);
  EXPECT_NE(f.reason.find("only 1 of the 3 iterations"), std::string::npos) << f.reason;
}

}  // namespace
