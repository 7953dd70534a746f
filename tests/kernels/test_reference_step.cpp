// The LibTorch reference step on CPU (fp32): every variant of every fix runs at tiny size;
// losses and gradients agree across variants; the step's sync bookkeeping and NVTX ranges
// equal the step program's; the packing cache is never served stale.
//
// What the sync counts here are, and are not: StepResult::host_syncs is a counter the step
// increments by hand at each host read that synchronizes on CUDA (read_item_int,
// read_list_int, fixes/moe_routing's `+= 2` for bincount's min/max reads, the loss read). On the CPU
// nothing synchronizes, so these tests check that bookkeeping (each variant's sites, counted
// per layer and per call as kernels/README.md's table says) against the hand-written step
// program: two descriptions of the same choreography agree. They cannot show that the
// LibTorch calls really issue that many host syncs on a GPU (a missed .item() inside an ATen
// op, or a bincount that reads back once, would pass here). Only a GPU checks that:
// scripts/gpu-check's `sync-counts` stage counts the sync points in each variant's CUPTI
// trace against its step program (tests/device/sync_count_check*), and tests/device/
// sync_counts* check the tracer's counting of known sync patterns on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/moe_routing/torch_step.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/fixes/packing/reference.hpp"
#include "syncscope/fixes/packing/torch_step.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/program/reference.hpp"
#include "syncscope/program/step_program.hpp"
#include "tiny_shapes.hpp"
#include "torch/internal.hpp"

namespace syncscope::kernels {
namespace {

using test::tiny_dense;
using test::tiny_moe;
using test::tiny_options;
using test::tiny_qwen3;

struct Outcome {
  StepResult result;
  std::vector<NamedValues> grads;
};

Outcome run_once(const program::StepOptions& o) {
  ReferenceStep step(o);
  step.record_ranges(true);
  Outcome out;
  out.result = step.run();
  out.grads = step.gradients();
  return out;
}

// Largest |a-b| relative to the largest |a| of each gradient; 0 means bitwise equal.
double max_rel_diff(const std::vector<NamedValues>& a, const std::vector<NamedValues>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].values.size(), b[i].values.size()) << a[i].name;
    double scale = 0, diff = 0;
    for (std::size_t j = 0; j < std::min(a[i].values.size(), b[i].values.size()); ++j) {
      scale = std::max(scale, static_cast<double>(std::abs(a[i].values[j])));
      const double d = std::abs(static_cast<double>(a[i].values[j]) - static_cast<double>(b[i].values[j]));
      // A NaN on either side is a failure: std::max(diff, NaN) would keep diff and hide it.
      if (std::isnan(d)) return std::numeric_limits<double>::infinity();
      diff = std::max(diff, d);
    }
    if (scale > 0) worst = std::max(worst, diff / scale);
    else worst = std::max(worst, diff);
  }
  return worst;
}

bool bitwise_equal(const std::vector<NamedValues>& a, const std::vector<NamedValues>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].values != b[i].values) return false;
  return true;
}

TEST(ReferenceStepHelpers, MaxRelDiffFailsOnNaN) {
  const std::vector<NamedValues> ok = {{"w", {1.f, 2.f}}};
  const std::vector<NamedValues> nan = {{"w", {1.f, std::nanf("")}}};
  EXPECT_EQ(max_rel_diff(ok, ok), 0.0);
  EXPECT_GT(max_rel_diff(nan, ok), 1.0);
  EXPECT_GT(max_rel_diff(ok, nan), 1.0);
  EXPECT_GT(max_rel_diff(nan, nan), 1.0);
}

std::vector<std::string> program_ranges(const program::Program& p) {
  std::vector<std::string> out;
  for (const auto& op : p.ops)
    if (op.kind == program::OpKind::RangePush) out.push_back(op.name);
  return out;
}

// `out` is a step's first run(): Unsloth's first pass, which offloads every layer. The
// step's hand-kept sync count (not a measurement: see the top of this file) and its NVTX
// ranges against the program's.
void expect_matches_program(const program::StepOptions& o, const Outcome& out) {
  program::StepOptions first = o;
  first.first_step = true;
  const program::Program p = program::build_step_program(first);
  EXPECT_EQ(program::program_stats(p).host_syncs, out.result.host_syncs.total()) << p.name;
  EXPECT_EQ(program_ranges(p), out.result.ranges) << p.name;
}

TEST(ReferenceStep, PackingVariantsAgreeBitwise) {
  // Same mask values, same operations: rebuild, cached and device give identical numbers.
  std::map<std::string, Outcome> outs;
  for (const std::string& v : scenario::fix_variants(fixes::packing::kFix)) {
    program::StepOptions o = tiny_options(tiny_qwen3());
    fixes::packing::set_variant(o, fixes::packing::to_variant(v));
    outs[v] = run_once(o);
    expect_matches_program(o, outs[v]);
    EXPECT_TRUE(std::isfinite(outs[v].result.loss));
  }
  const int L = 3;
  EXPECT_EQ(outs["rebuild"].result.host_syncs.of(fixes::packing::kFix), 3 * L);
  EXPECT_EQ(outs["cached"].result.host_syncs.of(fixes::packing::kFix), 3);
  EXPECT_EQ(outs["device"].result.host_syncs.of(fixes::packing::kFix), 0);
  EXPECT_EQ(outs["rebuild"].result.metadata_builds, L);
  EXPECT_EQ(outs["cached"].result.metadata_builds, 2);  // metadata once + the mask once
  EXPECT_EQ(outs["device"].result.metadata_builds, 1);
  for (const char* v : {"cached", "device"}) {
    EXPECT_EQ(outs[v].result.loss, outs["rebuild"].result.loss) << v;
    EXPECT_TRUE(bitwise_equal(outs[v].grads, outs["rebuild"].grads))
        << v << " max rel diff " << max_rel_diff(outs[v].grads, outs["rebuild"].grads);
  }
  // The loss of a random model is near ln(vocab).
  EXPECT_NEAR(outs["rebuild"].result.loss, std::log(256.0), 0.5);
}

TEST(ReferenceStep, PackingCacheIsNeverStale) {
  // Batch 1 has other lengths; a cache kept from batch 0 would mask the wrong blocks.
  program::StepOptions cached = tiny_options();
  fixes::packing::set_variant(cached, fixes::packing::Variant::Cached);
  program::StepOptions rebuild = cached;
  fixes::packing::set_variant(rebuild, fixes::packing::Variant::Rebuild);
  for (const char* v : {"cached", "device"}) {
    fixes::packing::set_variant(cached, fixes::packing::to_variant(v));
    ReferenceStep a(cached), b(rebuild);
    a.run();
    b.run();
    const auto cu0 = fixes::packing::cached_cu_seqlens(a);
    EXPECT_EQ(cu0, fixes::packing::packed_metadata(std::vector<std::int32_t>(a.lengths().begin(), a.lengths().end()))
                       .cu_seqlens);
    a.next_batch();
    b.next_batch();
    ASSERT_NE(a.lengths(), program::batch_lengths(cached, 0));
    const StepResult ra = a.run(), rb = b.run();
    EXPECT_EQ(ra.loss, rb.loss) << v;
    const auto cu1 = fixes::packing::cached_cu_seqlens(a);
    EXPECT_NE(cu1, cu0);
    EXPECT_EQ(cu1, fixes::packing::packed_metadata(std::vector<std::int32_t>(a.lengths().begin(), a.lengths().end()))
                       .cu_seqlens);
    EXPECT_TRUE(bitwise_equal(a.gradients(), b.gradients())) << v;
  }
}

// The attention mask, the experts and offload's schedule come from the fixes' LibTorch hooks
// (FixSpec::torch_layer_point, torch_step_setup): without one the step says which call
// installs them rather than attending without a mask, skipping the experts or running
// offload's step without its reloads. The hooks are put back afterwards.
TEST(ReferenceStep, WithoutTheFixesLibTorchHooksItSaysWhichCallInstallsThem) {
  auto expect_refusal = [](fixes::Fix fix, const program::StepOptions& o, const char* what) {
    auto& hook = fixes::mutable_fix_spec(fix).torch_layer_point;
    const auto saved = hook;
    ASSERT_TRUE(saved) << "register_shipped_torch_steps() installed no hook for " << what;
    hook = nullptr;
    try {
      ReferenceStep step(o);
      (void)step.run();
      ADD_FAILURE() << what << ": the step ran without the hook";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("register_shipped_torch_steps"), std::string::npos) << e.what();
    }
    hook = saved;
  };
  expect_refusal(fixes::packing::kFix, tiny_options(), "attention mask");
  const program::StepOptions moe = tiny_options(tiny_moe());
  expect_refusal(fixes::moe_routing::kFix, moe, "experts");
  // Put back: the same step runs.
  EXPECT_NO_THROW(ReferenceStep(moe).run());
  // Offload's schedule: without its torch_step_setup the step would run the plain layer loop.
  program::StepOptions offload = tiny_options();
  fixes::offload::set_variant(offload, fixes::offload::Variant::Double);
  auto& setup = fixes::mutable_fix_spec(fixes::offload::kFix).torch_step_setup;
  const auto saved = setup;
  ASSERT_TRUE(saved);
  setup = nullptr;
  try {
    ReferenceStep step(offload);
    ADD_FAILURE() << "offload ran without its schedule";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offload schedules the step program's layers"), std::string::npos) << e.what();
  }
  setup = saved;
  EXPECT_EQ(ReferenceStep(offload).layer_plan().ring_buffers, 2);  // double buffering: two reload buffers
}

TEST(ReferenceStep, OffloadVariantsGiveIdenticalGradients) {
  // Offloading changes where a layer's input waits for backward, not the arithmetic: on
  // CPU the three variants run the same operations on the same values, so gradients are
  // bitwise identical. Against plain autograd (no checkpointing) the recompute repeats the
  // same forward ops, so they agree too; that comparison allows fp32 rounding in case a
  // kernel picks another blocking for the recomputed graph.
  program::StepOptions base = tiny_options();
  fixes::packing::set_variant(base, fixes::packing::Variant::Cached);
  base.layers = 5;  // enough layers for a partly resident prefetch plan
  const Outcome plain = run_once(base);
  expect_matches_program(base, plain);
  const double act = 96.0 * 64 * 4;
  std::vector<std::pair<std::string, program::StepOptions>> cases;
  for (const std::string& v : scenario::fix_variants(fixes::offload::kFix)) {
    program::StepOptions o = base;
    fixes::offload::set_variant(o, fixes::offload::to_variant(v));
    cases.emplace_back(v, o);
  }
  program::StepOptions resident = base;  // prefetch with room for one resident layer (ring of 3 + 1)
  fixes::offload::set_variant(resident, fixes::offload::Variant::Prefetch);
  fixes::offload::set_budget_bytes(resident, 4 * act);
  cases.emplace_back("prefetch+resident", resident);
  std::vector<Outcome> outs;
  for (const auto& [name, o] : cases) {
    outs.push_back(run_once(o));
    expect_matches_program(o, outs.back());
    EXPECT_EQ(outs.back().result.loss, plain.result.loss) << name;
    EXPECT_LE(max_rel_diff(outs.back().grads, plain.grads), 1e-6) << name;
  }
  for (std::size_t i = 1; i < outs.size(); ++i)
    EXPECT_TRUE(bitwise_equal(outs[i].grads, outs[0].grads)) << cases[i].first;
  ReferenceStep probe(resident);
  EXPECT_EQ(probe.layer_plan().first_resident, 4);
  program::StepOptions asked = base;
  fixes::offload::set_variant(asked, fixes::offload::Variant::Prefetch);
  fixes::offload::set_budget_bytes(asked, -1);  // ask the device: none on CPU, so everything is offloaded
  ReferenceStep on_cpu(asked);
  EXPECT_EQ(fixes::offload::budget_bytes(on_cpu.options()), 0);
  EXPECT_EQ(on_cpu.layer_plan().first_resident, 5);
  EXPECT_EQ(probe.layer_plan().ring_buffers, 3);
}

TEST(ReferenceStep, MoeVariantsAgree) {
  // loop and sorted feed each expert the same rows in the same (token) order and add
  // contributions per token in expert order: bitwise equal on CPU. device runs other GEMM
  // shapes (capacity-padded bmm), so it agrees within fp32 rounding: 1e-5 relative to each
  // gradient's largest value (bf16 on the GPU: 1e-2, test_kernels_step_device).
  std::map<std::string, Outcome> outs;
  for (const std::string& v : scenario::fix_variants(fixes::moe_routing::kFix)) {
    program::StepOptions o = tiny_options(tiny_moe());
    fixes::moe_routing::set_variant(o, fixes::moe_routing::to_variant(v));
    fixes::packing::set_variant(o, fixes::packing::Variant::Device);
    outs[v] = run_once(o);
    expect_matches_program(o, outs[v]);
  }
  const int L = 2, E = 4;
  EXPECT_EQ(outs["loop"].result.host_syncs.of(fixes::moe_routing::kFix), E * L);
  EXPECT_EQ(outs["sorted"].result.host_syncs.of(fixes::moe_routing::kFix), 3 * L);
  EXPECT_EQ(outs["device"].result.host_syncs.of(fixes::moe_routing::kFix), 0);
  EXPECT_EQ(outs["sorted"].result.loss, outs["loop"].result.loss);
  EXPECT_TRUE(bitwise_equal(outs["sorted"].grads, outs["loop"].grads));
  EXPECT_NEAR(outs["device"].result.loss, outs["loop"].result.loss, 1e-5 * std::abs(outs["loop"].result.loss));
  EXPECT_LE(max_rel_diff(outs["device"].grads, outs["loop"].grads), 1e-5);
}

TEST(ReferenceStep, MoeDeviceExpertGemmIsResolvedAndReported) {
  program::StepOptions o = tiny_options(tiny_moe());
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  std::string why;
  // On the CPU at::_grouped_mm's sync-free path is never taken: "auto" pads, and says why.
  EXPECT_EQ(fixes::moe_routing::resolve_expert_gemm(o, &why), "padded");
  EXPECT_FALSE(why.empty());
  fixes::moe_routing::set_expert_gemm(o, "grouped");
  try {
    (void)fixes::moe_routing::resolve_expert_gemm(o);
    FAIL() << "grouped accepted on the CPU";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_routing expert_gemm"), std::string::npos) << e.what();
  }
  EXPECT_THROW({ ReferenceStep s(o); }, InputError);
  fixes::moe_routing::set_expert_gemm(o, "auto");
  ReferenceStep step(o);
  EXPECT_EQ(step.run().choice(fixes::moe_routing::kFix), "padded");
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Sorted);
  ReferenceStep sorted(o);
  EXPECT_EQ(sorted.run().choice(fixes::moe_routing::kFix), "");
}

// The bookkeeping of every combination (3 x 3 x 3) against its program; on a GPU the
// counts themselves are checked by scripts/gpu-check's sync-counts stage.
TEST(ReferenceStep, EveryCombinationKeepsTheSyncBookkeepingAndRangesOfItsProgram) {
  for (const std::string& pack : scenario::fix_variants(fixes::packing::kFix))
    for (const char* off : {"", "single", "prefetch"})
      for (const std::string& moe : scenario::fix_variants(fixes::moe_routing::kFix)) {
        program::StepOptions o = tiny_options(tiny_moe());
        fixes::packing::set_variant(o, fixes::packing::to_variant(pack));
        fixes::offload::set_variant(o, *off ? std::optional(fixes::offload::to_variant(off)) : std::nullopt);
        fixes::moe_routing::set_variant(o, fixes::moe_routing::to_variant(moe));
        SCOPED_TRACE(program::build_step_program(o).name);
        expect_matches_program(o, run_once(o));
      }
}

TEST(ReferenceStep, StepUpdatesParametersAndIsReproducible) {
  program::StepOptions o = tiny_options();
  ReferenceStep a(o);
  const auto before = a.parameters();
  const StepResult r1 = a.run();
  const auto after = a.parameters();
  EXPECT_FALSE(bitwise_equal(before, after));  // AdamW moved the weights
  ReferenceStep b(o);
  EXPECT_EQ(b.run().loss, r1.loss);  // same seed, same step
  const StepResult r2 = a.run();
  EXPECT_NE(r2.loss, r1.loss);
  // set_parameters makes a fresh step start from a's weights: same next loss as a's.
  ReferenceStep c(o);
  c.set_parameters(a.parameters());
  EXPECT_EQ(c.run().loss, a.run().loss);
  auto wrong = a.parameters();
  wrong.pop_back();
  EXPECT_THROW(c.set_parameters(wrong), InputError);
}

TEST(ReferenceStep, RejectsBadOptions) {
  program::StepOptions o = tiny_options();
  fixes::moe_routing::set_variant(o, static_cast<fixes::moe_routing::Variant>(5));  // no such variant
  EXPECT_THROW({ ReferenceStep s(o); }, InputError);
  o = tiny_options();
  o.dtype = "fp8";
  EXPECT_THROW({ ReferenceStep s(o); }, InputError);
  if (!cuda_available()) {
    o = tiny_options();
    o.device = "cuda";
    EXPECT_THROW(ReferenceStep{o}, Error);
  }
  EXPECT_FALSE(torch_version().empty());
}

}  // namespace
}  // namespace syncscope::kernels
