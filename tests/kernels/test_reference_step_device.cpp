// The reference step on a CUDA device in bf16 at a small-but-real size: each fix's variants
// agree with each other on the GPU, host syncs match the step program, the CUDA paths
// (our kernels, the offload copy stream and events) give what the CPU path gives in fp32.
// Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/moe_routing/torch_step.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/program/step_program.hpp"

namespace syncscope::kernels {
namespace {

// bf16 keeps 8 mantissa bits: values agree to ~2^-8 relative per rounding; a few
// roundings deep, 1e-2 relative to a gradient's largest value is the tolerance.
constexpr double kBf16Tol = 1e-2;
constexpr double kFp32Tol = 1e-4;  // CPU vs GPU fp32: different kernels, same math

scenario::ModelShape small_dense() {
  scenario::ModelShape m;
  m.name = "Qwen3-small";  // Qwen3 structure (q/k norms, head_dim 128) at reduced width
  m.model_type = "qwen3";  // q/k norms come from the family, not the name
  m.num_hidden_layers = 4;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 3072;
  m.vocab_size = 32000;
  m.rms_norm_eps = 1e-6;
  m.rope_theta = 1000000.0;
  return m;
}

scenario::ModelShape small_moe() {
  scenario::ModelShape m;
  m.name = "gpt-oss-small";
  m.num_hidden_layers = 2;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_key_value_heads = 8;
  m.head_dim = 64;
  m.intermediate_size = 1024;
  m.vocab_size = 32000;
  m.num_local_experts = 8;
  m.num_experts_per_tok = 4;
  m.sliding_window = 128;
  return m;
}

program::StepOptions gpu_options(const scenario::ModelShape& m) {
  program::StepOptions o;
  o.model = m;
  o.batch.packed_tokens = 1024;
  o.batch.distribution = "uniform";
  o.batch.min_len = 64;
  o.batch.max_len = 512;
  o.batch.seed = 3;
  o.dtype = "bf16";
  o.device = "cuda";
  o.seed = 5;
  fixes::offload::set_budget_bytes(o, 0);
  return o;
}

struct Outcome {
  StepResult result;
  std::vector<NamedValues> grads;
};

Outcome run_once(const program::StepOptions& o) {
  ReferenceStep step(o);
  step.run();  // warm-up (allocator, cuBLAS handles)
  step.next_batch();
  Outcome out;
  out.result = step.run();
  out.grads = step.gradients();
  return out;
}

double max_rel_diff(const std::vector<NamedValues>& a, const std::vector<NamedValues>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    double scale = 0, diff = 0;
    for (std::size_t j = 0; j < std::min(a[i].values.size(), b[i].values.size()); ++j) {
      scale = std::max(scale, static_cast<double>(std::abs(a[i].values[j])));
      const double d = std::abs(static_cast<double>(a[i].values[j]) - b[i].values[j]);
      diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    }
    worst = std::max(worst, scale > 0 ? diff / scale : diff);
  }
  return worst;
}

#define SKIP_WITHOUT_CUDA() \
  if (!cuda_available()) GTEST_SKIP() << "skipped: no CUDA device"

TEST(ReferenceStepDevice, PackingVariantsAgree) {
  SKIP_WITHOUT_CUDA();
  std::map<std::string, Outcome> outs;
  for (const std::string& v : scenario::fix_variants(fixes::packing::kFix)) {
    program::StepOptions o = gpu_options(small_dense());
    fixes::packing::set_variant(o, fixes::packing::to_variant(v));
    outs[v] = run_once(o);
    EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, outs[v].result.host_syncs.total())
        << v;
  }
  EXPECT_EQ(outs["device"].result.host_syncs.of(fixes::packing::kFix), 0);
  for (const char* v : {"cached", "device"}) {
    // Same mask values: the kernels see identical inputs, results should agree to rounding.
    EXPECT_NEAR(outs[v].result.loss, outs["rebuild"].result.loss, kBf16Tol * outs["rebuild"].result.loss) << v;
    EXPECT_LE(max_rel_diff(outs[v].grads, outs["rebuild"].grads), kBf16Tol) << v;
  }
}

TEST(ReferenceStepDevice, OffloadVariantsAgree) {
  SKIP_WITHOUT_CUDA();
  program::StepOptions base = gpu_options(small_dense());
  fixes::packing::set_variant(base, fixes::packing::Variant::Device);
  const Outcome plain = run_once(base);
  for (const std::string& v : scenario::fix_variants(fixes::offload::kFix))
    for (int k : {1, 3}) {
      program::StepOptions o = base;
      fixes::offload::set_variant(o, fixes::offload::to_variant(v));
      fixes::offload::set_prefetch_depth(o, k);
      const Outcome out = run_once(o);
      // A reload race (a buffer overwritten while read) shows as a large difference.
      EXPECT_NEAR(out.result.loss, plain.result.loss, kBf16Tol * plain.result.loss) << v << " k=" << k;
      EXPECT_LE(max_rel_diff(out.grads, plain.grads), kBf16Tol) << v << " k=" << k;
    }
  program::StepOptions budget = base;  // the memory-aware plan read from the device (default budget)
  fixes::offload::set_variant(budget, fixes::offload::Variant::Prefetch);
  fixes::offload::set_budget_bytes(budget, -1);
  ReferenceStep step(budget);
  EXPECT_EQ(step.layer_plan().first_resident, 0) << "a small model's checkpoints all fit on an H200";
  EXPECT_NEAR(step.run().loss, ReferenceStep(base).run().loss, kBf16Tol * plain.result.loss);
}

TEST(ReferenceStepDevice, MoeVariantsAgree) {
  SKIP_WITHOUT_CUDA();
  std::map<std::string, Outcome> outs;
  for (const std::string& v : scenario::fix_variants(fixes::moe_routing::kFix)) {
    program::StepOptions o = gpu_options(small_moe());
    fixes::moe_routing::set_variant(o, fixes::moe_routing::to_variant(v));
    fixes::packing::set_variant(o, fixes::packing::Variant::Device);
    outs[v] = run_once(o);
    EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, outs[v].result.host_syncs.total())
        << v;
  }
  EXPECT_EQ(outs["device"].result.host_syncs.total(), 1);  // only the loss read
  for (const char* v : {"sorted", "device"}) {
    EXPECT_NEAR(outs[v].result.loss, outs["loop"].result.loss, kBf16Tol * outs["loop"].result.loss) << v;
    EXPECT_LE(max_rel_diff(outs[v].grads, outs["loop"].grads), kBf16Tol) << v;
  }
}

TEST(ReferenceStepDevice, MoeDeviceGroupedAndPaddedAgree) {
  SKIP_WITHOUT_CUDA();
  program::StepOptions o = gpu_options(small_moe());
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  std::string why;
  if (fixes::moe_routing::resolve_expert_gemm(o, &why) != "grouped")
    GTEST_SKIP() << "skipped: no grouped GEMM here: " << why;
  std::map<std::string, Outcome> outs;
  for (const char* g : {"grouped", "padded"}) {
    fixes::moe_routing::set_expert_gemm(o, g);
    outs[g] = run_once(o);
    EXPECT_EQ(outs[g].result.choice(fixes::moe_routing::kFix), g);  // "grouped" did not fall back
    EXPECT_EQ(outs[g].result.host_syncs.of(fixes::moe_routing::kFix), 0) << g;
  }
  EXPECT_NEAR(outs["grouped"].result.loss, outs["padded"].result.loss, kBf16Tol * outs["padded"].result.loss);
  EXPECT_LE(max_rel_diff(outs["grouped"].grads, outs["padded"].grads), kBf16Tol);
}

TEST(ReferenceStepDevice, CudaPathMatchesCpuInFp32) {
  SKIP_WITHOUT_CUDA();
  // Tiny fp32 model through every CUDA-specific path (our kernels, the offload engine).
  scenario::ModelShape m = small_moe();
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_key_value_heads = 2;
  m.head_dim = 16;
  m.intermediate_size = 32;
  m.vocab_size = 256;
  m.num_local_experts = 4;
  m.num_experts_per_tok = 2;
  m.sliding_window = 16;
  program::StepOptions o = gpu_options(m);
  o.batch.packed_tokens = 96;
  o.batch.min_len = 5;
  o.batch.max_len = 40;
  o.dtype = "fp32";
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  fixes::offload::set_variant(o, fixes::offload::Variant::Prefetch);
  program::StepOptions cpu = o;
  cpu.device = "cpu";
  // One step each from the same weights (the devices' seeded generators differ).
  ReferenceStep c(cpu), g(o);
  g.set_parameters(c.parameters());
  const double lc = c.run().loss, lg = g.run().loss;
  EXPECT_NEAR(lg, lc, kFp32Tol * lc);
  EXPECT_LE(max_rel_diff(g.gradients(), c.gradients()), kFp32Tol);
}

}  // namespace
}  // namespace syncscope::kernels
