// Training as Unsloth does it, in the step programs and the network summary:
// LoRA/QLoRA (frozen base, NF4 dequantization, AdamW on adapters only), tied embeddings,
// the parameter counts of the real models, Unsloth's mask cache key, the offload first pass,
// and gpt-oss's experts and attention as Unsloth runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/reference.hpp"
#include "syncscope/program/step_program.hpp"
#include "tiny_shapes.hpp"

namespace syncscope::kernels {
namespace {

using program::OpKind;
using program::Program;
using test::tiny_dense;
using test::tiny_moe;
using test::tiny_options;

scenario::ModelShape llama_3_2_1b() {
  scenario::ModelShape m;
  m.name = "Llama-3.2-1B";
  m.num_hidden_layers = 16;
  m.hidden_size = 2048;
  m.num_attention_heads = 32;
  m.num_key_value_heads = 8;
  m.head_dim = 64;
  m.intermediate_size = 8192;
  m.vocab_size = 128256;
  m.tie_word_embeddings = true;
  return m;
}

scenario::ModelShape qwen3_0_6b() {
  scenario::ModelShape m;
  m.name = "Qwen3-0.6B";
  m.model_type = "qwen3";  // q/k norms from the family
  m.num_hidden_layers = 28;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 3072;
  m.vocab_size = 151936;
  m.tie_word_embeddings = true;
  return m;
}

program::StepOptions real(scenario::ModelShape m) {
  program::StepOptions o;
  o.model = std::move(m);
  o.batch.packed_tokens = 2048;
  return o;
}

std::map<std::string, int> kernel_counts(const Program& p) {
  std::map<std::string, int> n;
  for (const auto& op : p.ops)
    if (op.kind == OpKind::Kernel) ++n[op.name];
  return n;
}

TEST(Network, PinsTheRealModelsParameterCounts) {
  // docs/sources.md#parameter-counts: Llama-3.2-1B 1,235,814,400 and Qwen3-0.6B 596,049,920 with tied embeddings.
  const program::NetworkSummary llama = program::network_summary(real(llama_3_2_1b()));
  EXPECT_EQ(llama.parameters, 1235814400);
  EXPECT_EQ(llama.trainable_parameters, 1235814400);
  EXPECT_TRUE(llama.tied_embeddings);
  EXPECT_EQ(llama.training, "full");
  EXPECT_EQ(program::network_summary(real(qwen3_0_6b())).parameters, 596049920);
  // Untied, the LM head adds V*H: the +263 M the issue found.
  scenario::ModelShape untied = llama_3_2_1b();
  untied.tie_word_embeddings = false;
  EXPECT_EQ(program::network_summary(real(untied)).parameters, 1235814400 + 128256LL * 2048);
}

TEST(Network, GptOss20bAsUnslothRunsItHasItsPublishedSize) {
  scenario::ModelShape m;
  m.name = "gpt-oss-20b";
  m.model_type = "gpt_oss";
  m.num_hidden_layers = 24;
  m.hidden_size = 2880;
  m.num_attention_heads = 64;
  m.num_key_value_heads = 8;
  m.head_dim = 64;
  m.intermediate_size = 2880;
  m.vocab_size = 201088;
  m.num_local_experts = 32;
  m.num_experts_per_tok = 4;
  m.sliding_window = 128;
  m.swiglu_limit = 7.0;
  program::StepOptions o = real(m);
  o.gpt_oss_unsloth_form = true;  // biases and sinks: gpt-oss's ~20.9 B parameters
  EXPECT_EQ(program::network_summary(o).parameters, 20914757184);
  o.gpt_oss_unsloth_form = false;  // the reference step's form has none of them
  EXPECT_LT(program::network_summary(o).parameters, 20914757184);
}

TEST(Network, LoraTrainsOnlyTheAdapters) {
  program::StepOptions o = real(qwen3_0_6b());
  o.training.mode = "lora";  // r = 16 on q, k, v, o, gate, up, down
  const program::NetworkSummary s = program::network_summary(o);
  // Per layer: r (in + out) per module: q 16(1024+2048), k 16(1024+1024), v the same,
  // o 16(2048+1024), gate 16(1024+3072), up the same, down 16(3072+1024).
  const std::int64_t per_layer = 16 * ((1024 + 2048) + 2 * (1024 + 1024) + (2048 + 1024) + 3 * (1024 + 3072));
  EXPECT_EQ(s.trainable_parameters, 28 * per_layer);
  EXPECT_EQ(s.parameters, 596049920 + 28 * per_layer);
  o.training.target_modules = {"q_proj", "v_proj"};
  EXPECT_EQ(program::network_summary(o).trainable_parameters, 28 * 16 * ((1024 + 2048) + (1024 + 1024)));
  // qlora stores the attention and MLP projections in NF4; embeddings and norms stay dense.
  o.training.mode = "qlora";
  int nf4 = 0;
  for (const auto& p : program::network_parameters(o)) nf4 += p.storage == program::ParamStorage::Nf4;
  EXPECT_EQ(nf4, 28 * 7);
}

TEST(StepProgram, LoraFreezesTheBaseAndUpdatesOnlyAdapters) {
  program::StepOptions full = tiny_options();
  program::StepOptions lora = full;
  lora.training.mode = "lora";
  lora.training.lora_rank = 4;
  const auto f = kernel_counts(program::build_step_program(full));
  const auto l = kernel_counts(program::build_step_program(lora));
  const int L = 3;
  // The base keeps its input gradient and loses its weight gradient.
  EXPECT_EQ(f.at("q_proj.backward_wgrad"), L);
  EXPECT_EQ(l.count("q_proj.backward_wgrad"), 0u);
  EXPECT_EQ(l.at("q_proj.backward_dgrad"), L);
  EXPECT_EQ(l.count("lm_head.backward_wgrad"), 0u);
  EXPECT_EQ(l.count("embedding_backward"), 0u);
  EXPECT_EQ(f.at("embedding_backward"), 1);
  // The adapters train.
  EXPECT_EQ(l.at("q_proj.lora_A"), L);
  EXPECT_EQ(l.at("q_proj.lora_B.backward_wgrad"), L);
  EXPECT_EQ(l.at("down_proj.lora_A.backward_wgrad"), L);
  // AdamW: 8 kernels per trainable tensor; 7 modules x 2 adapters x L layers.
  EXPECT_EQ(l.at("adamw.param.addcdiv_"), 7 * 2 * L);
  EXPECT_EQ(f.at("adamw.param.addcdiv_"), static_cast<int>(program::network_parameters(full).size()));
  // Same syncs: the training mode does not touch the fixes.
  EXPECT_EQ(program::program_stats(program::build_step_program(lora)).host_syncs,
            program::program_stats(program::build_step_program(full)).host_syncs);
}

TEST(StepProgram, QloraDequantizesBeforeEveryUseOfTheBase) {
  program::StepOptions o = tiny_options();
  o.training.mode = "qlora";
  o.training.lora_rank = 4;
  const int L = 3;
  // Forward and the backward's input gradient (bitsandbytes' MatMul4Bit re-dequantizes).
  auto k = kernel_counts(program::build_step_program(o));
  EXPECT_EQ(k.at("syncscope::nf4_dequantize q_proj"), 2 * L);
  EXPECT_EQ(k.at("syncscope::nf4_dequantize down_proj"), 2 * L);
  EXPECT_EQ(k.count("syncscope::nf4_dequantize lm_head"), 0u);  // the LM head stays dense
  EXPECT_EQ(k.count("syncscope::nf4_absmax q_proj"), 0u);
  // With checkpointing the recompute dequantizes once more; double quantization adds the
  // absmax kernel before each.
  fixes::offload::set_variant(o, fixes::offload::Variant::Double);
  o.training.double_quant = true;
  k = kernel_counts(program::build_step_program(o));
  EXPECT_EQ(k.at("syncscope::nf4_dequantize q_proj"), 3 * L);
  EXPECT_EQ(k.at("syncscope::nf4_absmax q_proj"), 3 * L);
  // The dequantization moves the NF4 bytes in and the dtype bytes out.
  for (const auto& op : program::build_step_program(o).ops)
    if (op.name == "syncscope::nf4_dequantize q_proj") {
      const double n = 4.0 * 16 * 64;  // q: [heads*head_dim, hidden]
      EXPECT_DOUBLE_EQ(op.bytes, program::nf4_storage_bytes(static_cast<std::int64_t>(n), true) + n * 4);
      break;
    }
}

TEST(StepProgram, TiedEmbeddingsUpdateOneMatrix) {
  program::StepOptions o = tiny_options();
  const auto untied = kernel_counts(program::build_step_program(o));
  o.model.tie_word_embeddings = true;
  const auto tied = kernel_counts(program::build_step_program(o));
  EXPECT_EQ(untied.at("adamw.param.addcdiv_") - tied.at("adamw.param.addcdiv_"), 1);
  EXPECT_EQ(tied.at("lm_head.backward_wgrad"), 1);  // its gradient still adds into the embedding
}

TEST(StepProgram, CachedMaskIsKeyedLikeUnsloths) {
  // Unsloth's SDPA mask cache holds one (dtype, window) entry: with gpt-oss's alternating
  // windows it rebuilds in every layer (2 reads each) while the metadata stays cached (1).
  program::StepOptions o = tiny_options(tiny_moe());
  o.model.num_hidden_layers = 4;
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 1 + 2 * 4 + 1);
  // Ours keeps one mask per window per batch: two kernels, no read.
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  EXPECT_EQ(kernel_counts(program::build_step_program(o)).at("syncscope::packed_mask_kernel"), 2);
  // Dense models have one window: the cache hits after the first layer.
  program::StepOptions d = tiny_options();
  fixes::packing::set_variant(d, fixes::packing::Variant::Cached);
  EXPECT_EQ(program::program_stats(program::build_step_program(d)).host_syncs, 3 + 1);
}

TEST(StepProgram, OffloadFirstPassOffloadsTheLastLayerToo) {
  program::StepOptions o = tiny_options();
  fixes::offload::set_variant(o, fixes::offload::Variant::Double);
  auto copies = [](const Program& p) {
    int n = 0;
    for (const auto& op : p.ops) n += op.kind == OpKind::Copy && op.stream == 1;
    return n;
  };
  EXPECT_EQ(copies(program::build_step_program(o)), 2 * 2);  // L = 3, the last kept: 2 out, 2 back
  o.first_step = true;
  EXPECT_EQ(copies(program::build_step_program(o)), 2 * 3);
}

TEST(StepProgram, GptOssUnslothFormAddsBiasesClampSinksAndFp32Down) {
  program::StepOptions o = tiny_options(tiny_moe());
  o.model.swiglu_limit = 7.0;
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Sorted);
  const auto plain = kernel_counts(program::build_step_program(o));
  EXPECT_EQ(plain.count("attention.qk_matmul"), 0u);
  o.gpt_oss_unsloth_form = true;
  const Program p = program::build_step_program(o);
  const auto form = kernel_counts(p);
  EXPECT_EQ(form.at("attention.sinks_cat"), 2);
  EXPECT_EQ(form.count("scaled_dot_product_attention"), 0u);
  EXPECT_EQ(form.at("expert_00.gate.clamp"), 2);
  bool fp32_down = false;
  for (const auto& op : p.ops)
    if (op.name == "expert_00.down_fp32") fp32_down = !op.bf16;
  EXPECT_TRUE(fp32_down);
  // Same syncs: the form changes the work, not the routing's reads.
  EXPECT_EQ(program::program_stats(p).host_syncs, program::program_stats(program::build_step_program([&] {
                                                    program::StepOptions q = o;
                                                    q.gpt_oss_unsloth_form = false;
                                                    return q;
                                                  }()))
                                                      .host_syncs);
}

TEST(StepOptions, TrainingModeIsValidated) {
  program::StepOptions o = tiny_options();
  o.training.mode = "half";
  EXPECT_THROW(validate(o), InputError);
  o.training.mode = "lora";
  o.training.target_modules = {"lm_head"};
  EXPECT_THROW(validate(o), InputError);
  o.training.target_modules = {"q_proj"};
  o.training.lora_rank = 0;
  EXPECT_THROW(validate(o), InputError);
}

TEST(Nf4Reference, RoundTripsWithinHalfAStepAndPacksLikeBitsandbytes) {
  std::vector<float> v(200);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37f * static_cast<float>(i)) * (1.0f + 0.01f * i);
  v[3] = 0.0f;
  const program::Nf4Tensor q = program::nf4_quantize(v, false);
  ASSERT_EQ(q.codes.size(), 100u);
  ASSERT_EQ(q.absmax.size(), 4u);  // ceil(200 / 64)
  const std::vector<float> d = program::nf4_dequantize(q);
  float worst_gap = 0;
  for (int i = 0; i + 1 < 16; ++i) worst_gap = std::max(worst_gap, program::kNf4Values[i + 1] - program::kNf4Values[i]);
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_LE(std::fabs(d[i] - v[i]), 0.5f * worst_gap * q.absmax[i / 64] + 1e-6f) << i;
  // Zero maps to code 7. Two values per byte, the first in the high nibble: value 0
  // (sin 0) is byte 0's high nibble, value 3 (set to 0) byte 1's low nibble.
  EXPECT_EQ(q.codes[0] >> 4, 7);
  EXPECT_NE(q.codes[0] & 0x0F, 7);
  EXPECT_EQ(q.codes[1] & 0x0F, 7);
  EXPECT_NE(q.codes[1] >> 4, 7);
  // Each block's largest magnitude is exact: code 0 or 15 times its absmax.
  for (std::size_t b = 0; b < q.absmax.size(); ++b) {
    float m = 0;
    for (std::size_t i = 64 * b; i < std::min(v.size(), 64 * (b + 1)); ++i) m = std::max(m, std::fabs(d[i]));
    EXPECT_FLOAT_EQ(m, q.absmax[b]) << b;
  }
}

TEST(Nf4Reference, DoubleQuantizationKeepsTheAbsmaxClose) {
  std::vector<float> v(64 * 600);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::cos(0.11f * static_cast<float>(i)) * (1.0f + (i % 977) * 1e-3f);
  const program::Nf4Tensor plain = program::nf4_quantize(v, false);
  const program::Nf4Tensor dq = program::nf4_quantize(v, true);
  ASSERT_EQ(dq.absmax_codes.size(), 600u);
  ASSERT_EQ(dq.absmax2.size(), 3u);  // ceil(600 / 256)
  EXPECT_EQ(dq.codes, plain.codes);  // the 4-bit codes do not depend on how absmax is stored
  const auto a = program::nf4_block_absmax(dq);
  for (std::size_t b = 0; b < a.size(); ++b) EXPECT_NEAR(a[b], plain.absmax[b], 0.02f * plain.absmax[b]) << b;
  const auto map = program::dynamic_map_signed();
  ASSERT_EQ(map.size(), 256u);
  EXPECT_NEAR(map.front(), -0.99296875, 1e-6);  // -(0.9859375 + 1) / 2: exponent 0, 64 fractions
  EXPECT_FLOAT_EQ(map.back(), 1.0f);
  EXPECT_TRUE(std::is_sorted(map.begin(), map.end()));
}

}  // namespace
}  // namespace syncscope::kernels
