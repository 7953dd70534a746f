// Training as Unsloth does it, in the LibTorch reference step (CPU, fp32): LoRA and QLoRA (frozen base, NF4 as
// bitsandbytes stores it, AdamW on the adapters only), tied embeddings, Unsloth's mask cache
// key, and the offload first pass; every mode still issues exactly its program's syncs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/reference.hpp"
#include "syncscope/program/step_program.hpp"
#include "tiny_shapes.hpp"
#include "torch/internal.hpp"

namespace syncscope::kernels {
namespace {

using test::tiny_dense;
using test::tiny_moe;
using test::tiny_options;

program::StepOptions adapters(const char* mode, program::StepOptions o = tiny_options()) {
  o.training.mode = mode;
  o.training.lora_rank = 4;
  o.training.lora_alpha = 8;
  return o;
}

const NamedValues* find(const std::vector<NamedValues>& v, const std::string& name) {
  for (const auto& x : v)
    if (x.name == name) return &x;
  return nullptr;
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

TEST(ReferenceTraining, AdaptersAloneTrainAndStepsMatchTheirPrograms) {
  for (const char* mode : {"lora", "qlora"})
    for (bool dq : {false, true})
      for (const std::string& pack : scenario::fix_variants(fixes::packing::kFix)) {
        if (dq && std::string(mode) == "lora") continue;
        program::StepOptions o = adapters(mode);
        o.training.double_quant = dq;
        fixes::packing::set_variant(o, fixes::packing::to_variant(pack));
        fixes::offload::set_variant(o, fixes::offload::Variant::Double);
        SCOPED_TRACE(program::build_step_program(o).name);
        ReferenceStep step(o);
        step.record_ranges(true);
        const StepResult r = step.run();
        const program::Program p = program::build_step_program(step.options());
        EXPECT_EQ(program::program_stats(p).host_syncs, r.host_syncs.total());
        EXPECT_TRUE(std::isfinite(r.loss));
        // What trains is exactly the adapters: 7 modules x A and B x 3 layers.
        const auto grads = step.gradients();
        ASSERT_EQ(grads.size(), 7u * 2 * 3);
        for (const auto& g : grads) EXPECT_NE(g.name.find(".lora_"), std::string::npos) << g.name;
        std::int64_t trainable = 0;
        for (const auto& g : grads) trainable += static_cast<std::int64_t>(g.values.size());
        EXPECT_EQ(trainable, program::network_summary(o).trainable_parameters);
        // PEFT's initialization: B = 0, so A gets no gradient at the first step and B does.
        EXPECT_GT(max_abs(find(grads, "layers.0.q_proj.lora_B")->values), 0.0);
        EXPECT_EQ(max_abs(find(grads, "layers.0.q_proj.lora_A")->values), 0.0);
      }
}

TEST(ReferenceTraining, PackingVariantsAgreeBitwiseUnderQlora) {
  std::vector<std::vector<NamedValues>> grads;
  std::vector<double> losses;
  for (const std::string& pack : scenario::fix_variants(fixes::packing::kFix)) {
    program::StepOptions o = adapters("qlora");
    fixes::packing::set_variant(o, fixes::packing::to_variant(pack));
    ReferenceStep step(o);
    losses.push_back(step.run().loss);
    step.run();  // a second step: the A adapters now get gradients too
    grads.push_back(step.gradients());
  }
  for (std::size_t i = 1; i < grads.size(); ++i) {
    EXPECT_EQ(losses[i], losses[0]);
    ASSERT_EQ(grads[i].size(), grads[0].size());
    for (std::size_t j = 0; j < grads[0].size(); ++j)
      EXPECT_EQ(grads[i][j].values, grads[0][j].values) << grads[0][j].name;
  }
  EXPECT_GT(max_abs(find(grads[0], "layers.0.q_proj.lora_A")->values), 0.0);
}

TEST(ReferenceTraining, QloraBaseIsTheNf4OfTheFullBase) {
  // The qlora step's loss at step 0 (adapters contribute nothing: B = 0) is the loss of the
  // full-precision network with its weights replaced by their NF4 round trip: close to the
  // full network's, not equal.
  program::StepOptions full = tiny_options();
  const double l_full = ReferenceStep(full).run().loss;
  const double l_lora = ReferenceStep(adapters("lora")).run().loss;
  const double l_qlora = ReferenceStep(adapters("qlora")).run().loss;
  EXPECT_EQ(l_lora, l_full);  // same base draws, B = 0
  EXPECT_NE(l_qlora, l_full);
  EXPECT_NEAR(l_qlora, l_full, 0.05);
}

TEST(ReferenceTraining, TorchNf4MatchesTheCpuReference) {
  torch::manual_seed(3);
  detail::Ctx ctx;
  for (bool dq : {false, true}) {
    const torch::Tensor w = torch::randn({48, 70}) * 0.02;  // 3360 values: 52.5 blocks
    const detail::Nf4Weight q = detail::quantize_nf4(w, dq);
    const torch::Tensor c = w.contiguous();
    const std::vector<float> values(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    const program::Nf4Tensor ref = program::nf4_quantize(values, dq);
    const torch::Tensor codes = q.codes.contiguous();
    EXPECT_EQ(std::vector<std::uint8_t>(codes.data_ptr<std::uint8_t>(), codes.data_ptr<std::uint8_t>() + codes.numel()),
              ref.codes);
    const torch::Tensor d = detail::dequantize_nf4(q, ctx).contiguous();
    const std::vector<float> got(d.data_ptr<float>(), d.data_ptr<float>() + d.numel());
    const std::vector<float> want = program::nf4_dequantize(ref);
    ASSERT_EQ(got.size(), want.size());
    if (!dq) {
      EXPECT_EQ(got, want);
    } else {
      const torch::Tensor qa = q.absmax_codes.contiguous();
      EXPECT_EQ(std::vector<std::uint8_t>(qa.data_ptr<std::uint8_t>(), qa.data_ptr<std::uint8_t>() + qa.numel()),
                ref.absmax_codes);
      for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
    }
  }
}

TEST(ReferenceTraining, TiedEmbeddingsShareOneMatrix) {
  program::StepOptions o = tiny_options();
  o.model.tie_word_embeddings = true;
  ReferenceStep step(o);
  step.run();
  const auto params = step.parameters();
  EXPECT_EQ(find(params, "lm_head"), nullptr);
  ASSERT_NE(find(params, "embed_tokens"), nullptr);
  std::int64_t n = 0;
  for (const auto& p : params) n += static_cast<std::int64_t>(p.values.size());
  EXPECT_EQ(n, program::network_summary(o).parameters);
  program::StepOptions untied = tiny_options();
  EXPECT_EQ(program::network_summary(untied).parameters - n, 256 * 64);  // V x H
  // The tied embedding's gradient has the head's part: rows of tokens never input still move.
  const auto grads = step.gradients();
  EXPECT_GT(max_abs(find(grads, "embed_tokens")->values), 0.0);
}

TEST(ReferenceTraining, CachedMaskIsKeyedLikeUnsloths) {
  // tiny_moe at 4 layers alternates windows: Unsloth's one-entry cache rebuilds every layer.
  program::StepOptions o = tiny_options(tiny_moe());
  o.model.num_hidden_layers = 4;
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
  ReferenceStep step(o);
  const StepResult r = step.run();
  EXPECT_EQ(r.metadata_builds, 1 + 4);  // metadata once, the mask in each layer
  EXPECT_EQ(r.host_syncs.of(fixes::packing::kFix), 1 + 2 * 4);
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  EXPECT_EQ(ReferenceStep(o).run().metadata_builds, 2);  // ours: one mask per window
}

TEST(ReferenceTraining, OffloadFirstStepOffloadsEveryLayerLaterOnesKeepTheLast) {
  program::StepOptions o = tiny_options();
  fixes::offload::set_variant(o, fixes::offload::Variant::Double);
  ReferenceStep step(o);
  step.record_ranges(true);
  EXPECT_EQ(step.layer_plan().offloaded(), 2);  // the plan from the second step on
  const StepResult a = step.run();              // first pass: all 3
  const StepResult b = step.run();
  EXPECT_EQ(a.host_syncs.total(), b.host_syncs.total());
  EXPECT_TRUE(std::isfinite(b.loss));
  // Each run issues its program's ranges: the first the first-pass program, then the plan's.
  auto ranges = [](const program::Program& p) {
    std::vector<std::string> out;
    for (const auto& op : p.ops)
      if (op.kind == program::OpKind::RangePush) out.push_back(op.name);
    return out;
  };
  program::StepOptions first_opts = o;
  first_opts.first_step = true;
  EXPECT_EQ(a.ranges, ranges(program::build_step_program(first_opts)));
  EXPECT_EQ(b.ranges, ranges(program::build_step_program(step.options())));
  EXPECT_NE(a.ranges, b.ranges);  // the first pass reloads one layer more
  program::StepOptions first = o;
  first.first_step = true;
  EXPECT_EQ(ReferenceStep(first).layer_plan().offloaded(), 3);
}

}  // namespace
}  // namespace syncscope::kernels
