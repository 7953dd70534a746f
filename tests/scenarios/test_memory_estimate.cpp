// The GPU memory a real fine-tuning run needs (issue 37), against byte counts derived by hand
// from the architecture and the mixed-precision AdamW recipe: full (bf16 weights and
// gradients, fp32 master copy, two fp32 moments: 16 B per parameter), LoRA (bf16 base,
// fp32 adapters with fp32 gradients and moments) and QLoRA (NF4 for every nn.Linear of the
// decoder layers) of Llama-3.1-8B and Qwen3-14B. The step: 2048 packed tokens, bf16,
// Unsloth's checkpoint offload (double-buffered reloads).
#include <gtest/gtest.h>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/visit_windows.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "syncscope/sim/memory_estimate.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

program::StepOptions step(const std::string& fixture, const std::string& mode) {
  program::StepOptions o;
  o.model = scenario::load_hf_config(test::fixture("hf/" + fixture + "/config.json"));
  o.dtype = "bf16";
  o.training.mode = mode;
  fixes::offload::set_variant(o, fixes::offload::kUnslothDefaultReload);
  o.batch.packed_tokens = 2048;
  return o;
}

double part(const sim::StepMemory& m, const std::string& name) {
  for (const auto& [n, b] : m.parts)
    if (n == name) return b;
  ADD_FAILURE() << "no part " << name;
  return -1;
}

// 723 MiB: the CUDA context (memory_estimate.cpp cites the measurement).
constexpr double kContext = 723.0 * 1024 * 1024;

// Llama-3.1-8B: N = 8,030,261,248 parameters (its published total). Activations with
// offload, T = 2048, H 4096, q 4096, kv 1024, I 14336, vocab 128256:
//   one layer T*(2H + 3q + 3kv + 2q) + T*(3I + H) = 161,480,704 values x 2 B + the T x T
//   mask 8,388,608 B = 331,350,016 B; logits and their gradient 2*2048*128256*4 =
//   2,101,346,304 B; activations 2,432,696,320 B. Checkpoints: 2 reload buffers of
//   2048*4096*2 = 16 MiB: 33,554,432 B.
// Every Llama-3.1-8B tensor is a multiple of 2 MiB (or of 512 B when under 1 MiB) in bf16
// and fp32, so the allocator rounds nothing.
constexpr double kLlamaN = 8030261248.0;
constexpr double kLlamaActivations = 2432696320.0, kLlamaCheckpoints = 33554432.0;

TEST(MemoryEstimate, FullFineTuneOfAn8BNeeds16BytesPerParameter) {
  const auto o = step("llama-3.1-8b", "full");
  const sim::StepMemory m = sim::estimate_step_memory(o);
  EXPECT_DOUBLE_EQ(part(m, "weights"), 2 * kLlamaN);  // 16,060,522,496
  EXPECT_DOUBLE_EQ(part(m, "gradients"), 2 * kLlamaN);
  EXPECT_DOUBLE_EQ(part(m, "fp32 master weights"), 4 * kLlamaN);
  EXPECT_DOUBLE_EQ(part(m, "AdamW moments (fp32)"), 8 * kLlamaN);
  EXPECT_DOUBLE_EQ(part(m, "adapters"), 0);
  EXPECT_DOUBLE_EQ(part(m, "activations"), kLlamaActivations);
  EXPECT_DOUBLE_EQ(part(m, "checkpoints"), kLlamaCheckpoints);
  EXPECT_DOUBLE_EQ(part(m, "allocator rounding"), 0);
  // 16 N + activations + checkpoints + context = 131,708,551,168 B.
  EXPECT_DOUBLE_EQ(m.total(), 131708551168.0);
  // An 80 GB H100 refuses it, naming the model, the largest parts and what fits.
  try {
    sim::check_step_memory(o, 80e9, "H100", "Llama-3.1-8B (32 of 32 layers, scenario s)", false);
    ADD_FAILURE() << "a full bf16 AdamW fine-tune of Llama-3.1-8B fit 80 GB";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Llama-3.1-8B (32 of 32 layers, scenario s): the step needs about 131.7 GB"), std::string::npos)
        << what;
    EXPECT_NE(what.find("largest: AdamW moments (fp32) 64.2 GB, fp32 master weights 32.1 GB, weights 16.1 GB"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("training: lora needs 20.0 GB (fits)"), std::string::npos) << what;
    EXPECT_NE(what.find("optimizer: adamw_8bit needs"), std::string::npos) << what;
  }
  // With full recompute instead, what would fit tries offloaded checkpoints as the fix that
  // schedules the layers takes them by default (named from its registry entry).
  program::StepOptions full = o;
  full.fix_variants.erase(fixes::offload::kFix);
  full.training.gradient_checkpointing = "full";
  try {
    sim::check_step_memory(full, 80e9, "H100", "Llama-3.1-8B", false);
    ADD_FAILURE() << "a full bf16 AdamW fine-tune of Llama-3.1-8B fit 80 GB";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("offload: true (checkpointing, offload double) needs"), std::string::npos) << what;
  }
  // 8-bit AdamW: 2 B per value plus two fp32 absmax per 2048 values.
  program::StepOptions e = o;
  e.training.optimizer = "adamw_8bit";
  EXPECT_DOUBLE_EQ(part(sim::estimate_step_memory(e), "8-bit AdamW moments"), kLlamaN * (2 + 8.0 / 2048));
}

// LoRA r = 16 on q, k, v, o, gate, up, down: per layer 16 x (in + out) each:
//   q 16*8192 + k 16*5120 + v 16*5120 + o 16*8192 + 3 x 16*(4096+14336) = 1,310,720; x 32
//   layers = 41,943,040 values, 167,772,160 B in fp32; gradients the same; moments 8 B each.
TEST(MemoryEstimate, LoraAndQloraOfAn8B) {
  const double adapters = 41943040.0;
  const sim::StepMemory lora = sim::estimate_step_memory(step("llama-3.1-8b", "lora"));
  EXPECT_DOUBLE_EQ(part(lora, "weights"), 2 * kLlamaN);
  EXPECT_DOUBLE_EQ(part(lora, "adapters"), 4 * adapters);
  EXPECT_DOUBLE_EQ(part(lora, "gradients"), 4 * adapters);
  EXPECT_DOUBLE_EQ(part(lora, "fp32 master weights"), 0);
  EXPECT_DOUBLE_EQ(part(lora, "AdamW moments (fp32)"), 8 * adapters);
  EXPECT_DOUBLE_EQ(lora.total(), 2 * kLlamaN + 16 * adapters + kLlamaActivations + kLlamaCheckpoints + kContext);

  // QLoRA: the 7 projections of each layer, 218,103,808 values x 32 = 6,979,321,856, in NF4
  // at 0.5625 B per value (a half byte plus a 4-byte absmax per 64) = 3,925,868,544 B; the
  // embeddings, LM head and norms (1,050,939,392 values) in bf16 = 2,101,878,784 B.
  // Allocator rounding of the NF4 tensors: q and o 9 MiB -> 10 MiB, k and v 2.25 MiB ->
  // 4 MiB, gate/up/down 31.5 MiB -> 32 MiB: 7 MiB per layer, 234,881,024 B.
  const sim::StepMemory q = sim::estimate_step_memory(step("llama-3.1-8b", "qlora"));
  EXPECT_DOUBLE_EQ(part(q, "weights"), 3925868544.0 + 2101878784.0);
  EXPECT_DOUBLE_EQ(part(q, "adapters"), 4 * adapters);
  EXPECT_DOUBLE_EQ(part(q, "allocator rounding"), 234881024.0);
  ASSERT_EQ(q.notes.size(), 1u);
  EXPECT_NE(q.notes[0].find("6.98B values"), std::string::npos) << q.notes[0];
}

// Qwen3-14B: N = 14,768,307,200; H 5120, q 5120, kv 1024, I 17408, vocab 151936, 40 layers.
// Allocator rounding under full: the embedding and LM head (151936 x 5120) are 1483.75 x
// 2 MiB in fp32 and 741.875 x 2 MiB in bf16: 262,144 B of slack each for the weight and the
// gradient, 524,288 B each for the master copy and the two moments: 2 MiB per matrix, 4 MiB
// both. The projections (5120 x 5120 bf16 = 50 MiB, 1024 x 5120 = 10 MiB, 17408 x 5120 =
// 170 MiB) are whole multiples of 2 MiB; q_norm and k_norm (128 bf16 = 256 B) round to 512 B
// for the weight and the gradient (their fp32 copies are 512 B): 1,024 B per layer.
// Total 4,194,304 + 40 x 1,024 = 4,235,264.
TEST(MemoryEstimate, FullLoraAndQloraOfA14B) {
  const double N = 14768307200.0;
  const auto full = step("qwen3-14b", "full");
  const sim::StepMemory f = sim::estimate_step_memory(full);
  EXPECT_DOUBLE_EQ(part(f, "weights") + part(f, "gradients") + part(f, "fp32 master weights") +
                       part(f, "AdamW moments (fp32)"),
                   16 * N);  // 236.3 GB: an H200 (the profile's 150.8 GB) cannot hold it
  EXPECT_DOUBLE_EQ(part(f, "allocator rounding"), 4235264.0);
  EXPECT_THROW(sim::check_step_memory(full, 150.8e9, "H200", "Qwen3-14B", false), InputError);

  // LoRA: per layer q 16*10240 + k 16*6144 + v 16*6144 + o 16*10240 + 3 x 16*(5120+17408)
  // = 1,605,632; x 40 = 64,225,280 values.
  const double adapters = 64225280.0;
  const sim::StepMemory l = sim::estimate_step_memory(step("qwen3-14b", "lora"));
  EXPECT_DOUBLE_EQ(part(l, "weights"), 2 * N);
  EXPECT_DOUBLE_EQ(part(l, "adapters") + part(l, "gradients") + part(l, "AdamW moments (fp32)"), 16 * adapters);

  // QLoRA: projections per layer 5120*(5120+1024+1024+5120) + 3*5120*17408 = 330,301,440
  // values; x 40 = 13,212,057,600 at 0.5625 B = 7,431,782,400 B; the rest (N minus those,
  // 1,556,249,600 values) in bf16 = 3,112,499,200 B.
  const sim::StepMemory q = sim::estimate_step_memory(step("qwen3-14b", "qlora"));
  EXPECT_DOUBLE_EQ(part(q, "weights"), 7431782400.0 + 3112499200.0);
  EXPECT_EQ(sim::check_step_memory(step("qwen3-14b", "qlora"), 150.8e9, "H200", "Qwen3-14B", false), "");
  const std::string fits = sim::describe_step_memory(step("qwen3-14b", "qlora"), 150.8e9, "H200");
  EXPECT_EQ(fits.rfind("needs ", 0), 0u) << fits;
  EXPECT_NE(fits.find("of the H200 profile's 150.8 GB"), std::string::npos) << fits;
}

// Mixtral's experts are nn.Linear modules in transformers 4.x, so bitsandbytes quantizes
// them: 8 x 3 x 4096 x 14336 x 32 = 45,097,156,608 expert values at 0.5625 B, ~25 GB, not
// the 90 GB they take in bf16; gpt-oss's fused expert tensors stay in bf16, and the note
// says which.
TEST(MemoryEstimate, QloraQuantizesTheExpertsWhereBitsandbytesReachesThem) {
  const sim::StepMemory mix = sim::estimate_step_memory(step("mixtral-8x7b-v0.1", "qlora"));
  EXPECT_LT(part(mix, "weights"), 30e9);
  EXPECT_GT(part(mix, "weights"), 25e9);
  ASSERT_EQ(mix.notes.size(), 1u);
  EXPECT_NE(mix.notes[0].find("the routed experts included"), std::string::npos) << mix.notes[0];
  const sim::StepMemory oss = sim::estimate_step_memory(step("gpt-oss-20b", "qlora"));
  ASSERT_EQ(oss.notes.size(), 1u);
  EXPECT_NE(oss.notes[0].find("fused 3-D parameters"), std::string::npos) << oss.notes[0];
}

// Activations by checkpointing mode (Korthikanti et al. 2022, arXiv 2205.05198, section 4
// and Table 2: without recomputation every layer keeps its activations; with full
// recomputation only each layer's input, 2sbh bytes in 16 bits, plus one layer's
// activations while it is recomputed). Llama-3.1-8B, T = 2048, bf16: one layer 331,350,016 B
// (above), its input 2048*4096*2 = 16,777,216 B, logits 2,101,346,304 B:
//   none     32 x 331,350,016 + 2,101,346,304 = 12,704,546,816 B, no checkpoints;
//   full     331,350,016 + 2,101,346,304 = 2,432,696,320 B, checkpoints 32 x 16,777,216 =
//            536,870,912 B on the device;
//   offload  the same activations, checkpoints 2 reload buffers = 33,554,432 B.
TEST(MemoryEstimate, ActivationsByCheckpointingMode) {
  program::StepOptions none = step("llama-3.1-8b", "lora");
  fixes::offload::set_variant(none, std::nullopt);
  program::StepOptions full = none;
  full.training.gradient_checkpointing = "full";
  const program::StepOptions offload = step("llama-3.1-8b", "lora");
  EXPECT_EQ(sim::checkpointing_mode(none), "none");
  EXPECT_EQ(sim::checkpointing_mode(full), "full");
  EXPECT_EQ(sim::checkpointing_mode(offload), "offload");
  const sim::StepMemory n = sim::estimate_step_memory(none), f = sim::estimate_step_memory(full),
                        o = sim::estimate_step_memory(offload);
  EXPECT_DOUBLE_EQ(part(n, "activations"), 12704546816.0);
  EXPECT_DOUBLE_EQ(part(n, "checkpoints"), 0);
  EXPECT_DOUBLE_EQ(part(f, "activations"), kLlamaActivations);
  EXPECT_DOUBLE_EQ(part(f, "checkpoints"), 536870912.0);
  EXPECT_DOUBLE_EQ(part(o, "activations"), kLlamaActivations);
  EXPECT_DOUBLE_EQ(part(o, "checkpoints"), kLlamaCheckpoints);
  EXPECT_EQ(n.checkpointing, "none");
  // The printed estimate says which mode it counted.
  EXPECT_NE(sim::describe_step_memory(full, 80e9, "H100").find("gradient checkpointing full"), std::string::npos);
  EXPECT_NE(sim::describe_step_memory(offload, 80e9, "H100").find("gradient checkpointing offload"), std::string::npos);
  // Without checkpointing LoRA needs 30.2 GB; a 25 GB budget refuses it, naming full
  // checkpointing (20.5 GB) as what fits.
  try {
    sim::check_step_memory(none, 25e9, "X", "Llama-3.1-8B", false);
    ADD_FAILURE() << "LoRA without checkpointing fit 25 GB";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the step needs about 30.2 GB"), std::string::npos) << what;
    EXPECT_NE(what.find("gradient checkpointing none"), std::string::npos) << what;
    EXPECT_NE(what.find("gradient_checkpointing: full (layer inputs kept, layers recomputed) needs 20.5 GB (fits)"),
              std::string::npos)
        << what;
  }
}

// MLA keeps its latents and per-head widths, not heads x head_dim for q, k and v
// (DeepseekV2Attention.forward, modeling_deepseek_v2.py). DeepSeek-V2-Lite (H 2048, 16 heads,
// q_lora_rank null, kv_lora_rank 512, qk 128 + 64, v 128), per token: norms 2*2048 = 4,096;
// compressed_kv 512 + 64 = 576; kv_a_layernorm's output 512; rotated k_pe 64; rotated q_pe
// 16*64 = 1,024; q 16*192 = 3,072; kv_b_proj's output 16*(128 + 128) = 4,096; query_states
// and key_states 2 x 3,072 = 6,144; attention output 16*128 = 2,048: 21,632 values (heads x
// head_dim for q, k, v would say 22,528). Layer 0 is dense (MLP 3*10944 + 2048 = 34,880):
// 56,512 values x 2048 tokens x 2 B = 231,473,152 B + the mask 2048^2 x 2 = 8,388,608 B;
// layer 1 routes (top-6 of 64 experts of 1408: 6*(2048 + 3*1408) + 2*64, shared 3*2816:
// 46,208): 67,840 values, 277,872,640 + 8,388,608 B. Logits 2*2048*102400*4 = 1,677,721,600.
TEST(MemoryEstimate, LatentAttentionActivationsUseTheLatentAndPerHeadWidths) {
  program::StepOptions o = step("deepseek-v2-lite", "lora");
  fixes::offload::set_variant(o, std::nullopt);
  o.layers = 1;
  EXPECT_DOUBLE_EQ(part(sim::estimate_step_memory(o), "activations"), 231473152.0 + 8388608.0 + 1677721600.0);
  o.layers = 2;
  EXPECT_DOUBLE_EQ(part(sim::estimate_step_memory(o), "activations"),
                   231473152.0 + 277872640.0 + 2 * 8388608.0 + 1677721600.0);
  // With checkpointing, the largest one layer's: the MoE layer's.
  o.training.gradient_checkpointing = "full";
  EXPECT_DOUBLE_EQ(part(sim::estimate_step_memory(o), "activations"), 277872640.0 + 8388608.0 + 1677721600.0);
}

// gradient_checkpointing: full recomputes each layer in the backward without copies: the
// layer's forward kernels run twice, no copy stream; the packing visits count the recompute.
TEST(MemoryEstimate, FullCheckpointingRecomputesEachLayerInTheStep) {
  program::StepOptions none = step("qwen3-0.6b", "lora");
  fixes::offload::set_variant(none, std::nullopt);
  none.layers = 2;
  program::StepOptions full = none;
  full.training.gradient_checkpointing = "full";
  auto q_proj = [](const program::Program& p) {
    int n = 0;
    for (const auto& op : p.ops) n += op.name == "q_proj";
    return n;
  };
  const program::Program pn = program::build_step_program(none), pf = program::build_step_program(full);
  EXPECT_EQ(q_proj(pn), 2);
  EXPECT_EQ(q_proj(pf), 4);
  EXPECT_EQ(pf.streams.size(), 1u);
  EXPECT_EQ(fixes::packing::visit_windows(none).size(), 2u);
  EXPECT_EQ(fixes::packing::visit_windows(full).size(), 4u);
}

}  // namespace
}  // namespace syncscope
