// The architectures people fine-tune beyond a dense decoder (issue 37): multi-head latent
// attention, routed + shared experts, dense-first and interleaved MoE layers, chunked
// attention, multimodal configs' text_config with the text class's defaults. The fixtures
// are public config.json files (tests/fixtures/hf/README.md); the totals are the ones
// published with each model (the README says where), so a wrong reading of any trait fails
// here.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "hf_fixtures.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/scenario/model_traits.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

using test::base_parameters;
using test::fixture_model;

struct PublishedSplit {
  const char* fixture;
  std::int64_t text;    // the language model, as syncscope counts it
  std::int64_t vision;  // the vision tower with its projector (multimodal; 0: none or not counted)
  std::int64_t total;   // the published total (text + vision), or 0 where only a rounded figure is published
};

// Each exact total is the one published with the model (tests/fixtures/hf/README.md).
// Hand derivations of the three new forms, so a reader can check the arithmetic:
//  DeepSeek-V2-Lite (H 2048, 27 layers, 16 heads, kv_lora 512, q_proj direct, qk 128+64,
//  v 128, 64 routed + 2 shared experts of 1408, first layer dense 10944, vocab 102400):
//    attention per layer q 2048*16*192 + kv_a 2048*576 + kv_a_norm 512 + kv_b 512*16*256
//      + o 16*128*2048 = 13,763,072; norms 4,096;
//    layer 0 MLP 3*2048*10944 = 67,239,936;
//    MoE layer router 64*2048 + experts 64*3*2048*1408 + shared 3*2048*2816 = 571,080,704;
//    2*102400*2048 + 81,007,104 + 26*584,847,872 + 2048 = 15,706,484,224.
//  Qwen1.5-MoE-A2.7B: per layer q/k/v with biases 3*(2048^2+2048) + o 2048^2 + norms 4096
//    + router 60*2048 + experts 60*3*2048*1408 + shared 3*2048*5632 + shared gate 2048
//    = 570,560,512; 24 layers + 2*151936*2048 + 2048 = 14,315,784,192.
//  Llama-4-Scout text: per layer q/o 2*5120*5120 + k/v 2*5120*1024 + norms 2*5120 + router
//    16*5120 + experts 16*3*5120*8192 + shared 3*5120*8192 = 2,202,101,760; 48 layers +
//    2*202048*5120 + 5120 = 107,769,861,120 (the card's 109B adds the vision tower).
//  Llama-4-Scout vision (modeling_llama4.py; 34 layers of 1408, MLP 5632, 336 px / 14 px
//    patches + a class token): patch Linear 3*14*14*1408, class 1408, 577 positions *1408,
//    pre/post LayerNorms 4*1408, per layer 2 LayerNorms 4*1408 + q/k/v/o 4*(1408^2+1408) +
//    fc1 1408*5632+5632 + fc2 5632*1408+1408 = 23,807,872 (34: 809,467,648); adapter
//    5632*4096 + 4096*4096; projector 4096*5120: 871,932,416, so the whole model
//    108,641,793,536, the card's 109B.
//  Gemma 3 vision (SigLIP, 27 layers of 1152, MLP 4304, 896 px / 14 px patches, no head):
//    patch conv 3*14*14*1152 + 1152, 4096 positions *1152, per layer 2 LayerNorms 4*1152 +
//    q/k/v/o 4*(1152^2+1152) + fc1 1152*4304+4304 + fc2 4304*1152+1152 = 15,239,504, final
//    LayerNorm 2304: 416,866,032; projector 1152*H_text + 1152.
TEST(HfArchitectures, ParameterCountsMatchThePublishedTotals) {
  const PublishedSplit table[] = {
      {"deepseek-v2-lite", 15706484224, 0, 15706484224},
      {"qwen1.5-moe-a2.7b", 14315784192, 0, 14315784192},  // safetensors (CountsMatchTotalsPublishedByOthers)
      {"qwen3-30b-a3b", 30532122624, 0, 30532122624},
      {"mixtral-8x7b-v0.1", 46702792704, 0, 46702792704},  // safetensors
      {"phi-3-mini-4k-instruct", 3821079552, 0, 3821079552},
      {"olmoe-1b-7b-0924", 6919161856, 0, 6919161856},
      {"llama-3.1-8b", 8030261248, 0, 8030261248},
      {"gemma-3-1b-pt", 999885952, 0, 999885952},  // KerasHub preset, HF page
      {"gemma-3-4b-pt", 3880263168, 419816304, 4300079472},
      {"gemma-3-12b-pt", 11766034176, 421290864, 12187325040},
      {"gemma-3-27b-pt", 27009346304, 423060336, 27432406640},
      {"llama-4-scout-17b-16e", 107769861120, 871932416, 108641793536},  // HF page (Instruct)
  };
  for (const auto& p : table) {
    SCOPED_TRACE(p.fixture);
    const scenario::ModelShape m = fixture_model(p.fixture);
    EXPECT_EQ(base_parameters(m), p.text);
    EXPECT_EQ(m.vision_parameters, p.vision);
    if (p.total > 0) {
      EXPECT_EQ(base_parameters(m) + m.vision_parameters, p.total);
    }
  }
}

// Parameters one token uses: every parameter but the routed experts, which count k of E
// (architecture_parameters: "layers.N.experts.*", one [E, ...] tensor per projection).
double active_parameters(const scenario::ModelShape& m) {
  program::StepOptions o;
  o.model = m;
  o.training.mode = "full";
  double n = 0;
  for (const auto& p : program::architecture_parameters(o)) {
    const bool routed = p.name.find(".experts.") != std::string::npos && p.shape.size() == 3;
    n += static_cast<double>(p.numel) * (routed ? static_cast<double>(m.num_experts_per_tok) / m.num_local_experts : 1);
  }
  return n;
}

// Rounds `n` to the published figure's digits: 46.7e9 with step 0.1e9.
bool rounds_to(double n, double published, double step) { return std::abs(n - published) <= step / 2; }

// The four rows above whose exact value was only our own derivation, against totals
// published by others. Exact: the checkpoint's own total, as Hugging Face's safetensors
// metadata (model.safetensors.index.json "total_size", bytes of bf16 = 2 x parameters) or
// the model page's parameter count gives it, quoted in public repositories; rounded: the
// model card's or announcement's figure, to its digits, for the total and for the active
// parameters (routed experts at k of E).
//  Qwen1.5-MoE-A2.7B: model.safetensors.index.json total_size 28,631,568,384 B (a public
//    copy of the index, 4,659 tensors in 8 shards) = 14,315,784,192 parameters; KerasHub's
//    preset qwen1.5_moe_2.7b_en gives the same params (keras-team/keras-hub,
//    keras_hub/src/models/qwen_moe/qwen_moe_presets.py). Card (huggingface.co/Qwen/
//    Qwen1.5-MoE-A2.7B): "14.3B parameters in total and 2.7B activated parameters".
//  Mixtral-8x7B-v0.1: model.safetensors.index.json total_size 93,405,585,408 B =
//    46,702,792,704 parameters; KerasHub's mixtral_8_7b_en params the same
//    (keras_hub/src/models/mixtral/mixtral_presets.py). Mistral's announcement
//    (mistral.ai/news/mixtral-of-experts, 11 Dec 2023): "46.7B total parameters but only
//    uses 12.9B parameters per token".
//  gemma-3-1b: KerasHub's gemma3_1b params 999,885,952 (keras_hub/src/models/gemma3/
//    gemma3_presets.py), the Hugging Face page's safetensors total for google/gemma-3-1b-it
//    the same; card: "1B".
//  Llama-4-Scout-17B-16E: the Hugging Face page's safetensors total for
//    meta-llama/Llama-4-Scout-17B-16E-Instruct, 108,641,793,536 (text + vision tower +
//    projector; the same architecture as the base fixture); Meta's card: "17B activated,
//    109B total" (the active count is the text model's: one of 16 experts per layer).
TEST(HfArchitectures, CountsMatchTotalsPublishedByOthers) {
  struct Row {
    const char* fixture;
    std::int64_t exact;          // published exact total (text + vision)
    double total, total_step;    // published rounded total and its last digit
    double active, active_step;  // published active parameters (0: dense)
  };
  const Row rows[] = {
      {"qwen1.5-moe-a2.7b", 14315784192, 14.3e9, 0.1e9, 2.7e9, 0.1e9},
      {"mixtral-8x7b-v0.1", 46702792704, 46.7e9, 0.1e9, 12.9e9, 0.1e9},
      {"gemma-3-1b-pt", 999885952, 1e9, 1e9, 0, 0},
      {"llama-4-scout-17b-16e", 108641793536, 109e9, 1e9, 17e9, 1e9},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.fixture);
    const scenario::ModelShape m = fixture_model(r.fixture);
    const std::int64_t ours = base_parameters(m) + m.vision_parameters;
    EXPECT_EQ(ours, r.exact);
    EXPECT_TRUE(rounds_to(static_cast<double>(ours), r.total, r.total_step)) << ours;
    if (r.active > 0) {
      const double active = active_parameters(m);
      EXPECT_TRUE(rounds_to(active, r.active, r.active_step)) << static_cast<std::int64_t>(active);
    }
  }
  // The safetensors byte totals are bf16: two bytes per parameter.
  EXPECT_EQ(2 * base_parameters(fixture_model("qwen1.5-moe-a2.7b")), 28631568384);
  EXPECT_EQ(2 * base_parameters(fixture_model("mixtral-8x7b-v0.1")), 93405585408);
}

// DeepSeek-V3's card gives 671B for the main model (685B on Hugging Face with the 14B
// multi-token-prediction module, which DeepseekV3ForCausalLM does not build): our count of
// the main model must round to it, and the MTP layer is named as not counted.
TEST(HfArchitectures, DeepSeekV3RoundsToItsPublished671B) {
  const scenario::ModelShape m = fixture_model("deepseek-v3");
  const std::int64_t n = base_parameters(m);
  EXPECT_NEAR(static_cast<double>(n), 671e9, 0.5e9) << n;
  EXPECT_EQ(n, 671026404352);  // 3 dense + 58 MoE layers (derivation in tests/fixtures/hf/README.md)
  ASSERT_EQ(m.traits.unmodelled.size(), 2u);
  EXPECT_NE(m.traits.unmodelled[1].find("num_nextn_predict_layers"), std::string::npos);
}

TEST(HfArchitectures, TraitsAreReadAsTheConfigClassMeansThem) {
  const scenario::ModelShape ds = fixture_model("deepseek-v2-lite");
  EXPECT_EQ(ds.traits.family, "deepseek_v2");
  EXPECT_TRUE(ds.is_moe());
  EXPECT_TRUE(ds.is_mla());
  EXPECT_EQ(ds.num_local_experts, 64);
  EXPECT_EQ(ds.intermediate_size, 1408);         // per routed expert
  EXPECT_EQ(ds.dense_intermediate_size, 10944);  // layer 0
  EXPECT_EQ(ds.num_shared_experts, 2);
  EXPECT_EQ(ds.shared_expert_intermediate_size, 2816);
  EXPECT_EQ(ds.q_lora_rank, 0);  // null: q_proj direct
  EXPECT_EQ(ds.head_dim, 192);   // q.k width: 128 + 64
  EXPECT_FALSE(ds.moe_layer(0));
  EXPECT_TRUE(ds.moe_layer(1));
  EXPECT_TRUE(ds.moe_layer(26));

  const scenario::ModelShape qw = fixture_model("qwen1.5-moe-a2.7b");
  EXPECT_EQ(qw.traits.family, "qwen2_moe");
  EXPECT_TRUE(qw.shared_expert_gate);
  EXPECT_TRUE(qw.traits.qkv_bias);

  const scenario::ModelShape scout = fixture_model("llama-4-scout-17b-16e");
  EXPECT_EQ(scout.traits.family, "llama4");
  EXPECT_EQ(scout.shared_expert_intermediate_size, 8192);
  EXPECT_EQ(scenario::layer_chunk(scout.traits, 0), 8192);
  EXPECT_EQ(scenario::layer_chunk(scout.traits, 3), 0);  // every 4th layer NoPE, full attention
  EXPECT_EQ(scenario::describe_windows(scout.traits, 48),
            "8192-token attention chunks on 36 of 48 layers (full attention on the rest)");
  EXPECT_EQ(scout.vision_model, "llama4_vision_model");
  EXPECT_NEAR(static_cast<double>(base_parameters(scout) + scout.vision_parameters), 109e9, 0.5e9);
  ASSERT_FALSE(scout.traits.notes.empty());
  EXPECT_NE(scout.traits.notes.back().find("llama4_vision_model"), std::string::npos);

  const scenario::ModelShape g4 = fixture_model("gemma-3-4b-pt");
  EXPECT_EQ(g4.traits.family, "gemma3");
  EXPECT_EQ(g4.num_attention_heads, 8);  // Gemma3TextConfig defaults, absent from text_config
  EXPECT_EQ(g4.num_key_value_heads, 4);
  EXPECT_EQ(g4.head_dim, 256);
  EXPECT_EQ(g4.vocab_size, 262208);
  EXPECT_TRUE(g4.tie_word_embeddings);
  EXPECT_EQ(scenario::layer_window(g4.traits, 0), 1024);
  EXPECT_EQ(scenario::layer_window(g4.traits, 5), 0);
  ASSERT_EQ(g4.traits.notes.size(), 2u);
  EXPECT_NE(g4.traits.notes[0].find("num_attention_heads 8"), std::string::npos) << g4.traits.notes[0];
  EXPECT_NE(g4.traits.notes[1].find("siglip_vision_model"), std::string::npos) << g4.traits.notes[1];
  EXPECT_NE(g4.traits.notes[1].find("416,866,032"), std::string::npos) << g4.traits.notes[1];

  const scenario::ModelShape olmoe = fixture_model("olmoe-1b-7b-0924");
  EXPECT_TRUE(olmoe.traits.qk_norm_full_width);
  const scenario::ModelShape phi = fixture_model("phi-3-mini-4k-instruct");
  EXPECT_EQ(scenario::describe_windows(phi.traits, 32), "a 2047-token sliding window on every layer");
}

std::string error_of(const test::TempDir& dir, const std::string& text) {
  const auto p = dir / "config.json";
  std::ofstream(p) << text;
  try {
    scenario::load_hf_config(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("fixture lacks " + from);
  return text.replace(at, from.size(), to);
}

TEST(HfArchitectures, ContradictingTraitsNameTheFileKeyAndConstraint) {
  test::TempDir dir;
  const std::string ds = read_file(test::fixture("hf/deepseek-v2-lite/config.json"));
  std::string e = error_of(dir, with(ds, "\"moe_intermediate_size\": 1408", "\"moe_intermediate_size\": null"));
  EXPECT_NE(e.find("config.json:23:3: n_shared_experts: expected shared experts with a size"), std::string::npos) << e;
  e = error_of(dir, with(ds, "\"first_k_dense_replace\": 1", "\"first_k_dense_replace\": 27"));
  EXPECT_NE(e.find("config.json:11:3: first_k_dense_replace: expected an integer in 0..26"), std::string::npos) << e;
  e = error_of(dir, with(ds, "\"kv_lora_rank\": 512", "\"kv_lora_rank\": 4096"));
  EXPECT_NE(e.find("config.json:16:3: kv_lora_rank: expected an integer in 1..hidden_size (2048)"), std::string::npos)
      << e;
  const std::string qw = read_file(test::fixture("hf/qwen1.5-moe-a2.7b/config.json"));
  e = error_of(dir, with(qw, "\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 0"));
  EXPECT_NE(e.find("decoder_sparse_step: expected an integer in 1..24"), std::string::npos) << e;
  const std::string scout = read_file(test::fixture("hf/llama-4-scout-17b-16e/config.json"));
  e = error_of(dir, with(scout, "\"attention_chunk_size\": 8192", "\"attention_chunk_size\": \"big\""));
  EXPECT_NE(e.find("config.json:12:5: attention_chunk_size: expected an integer"), std::string::npos) << e;
}

int ops_named(const program::Program& p, const std::string& name) {
  int n = 0;
  for (const auto& op : p.ops) n += op.name.find(name) != std::string::npos;
  return n;
}

program::StepOptions run_of(const std::string& fixture, int layers, fixes::moe_routing::Variant moe) {
  program::StepOptions o;
  o.model = fixture_model(fixture);
  o.dtype = "bf16";
  o.training.mode = "qlora";
  o.layers = layers;
  o.batch.packed_tokens = 512;
  o.batch.max_len = 256;
  fixes::moe_routing::set_variant(o, moe);
  return o;
}

// The step program runs each trait: DeepSeek-V2-Lite's first layer is dense (no router, no
// routing syncs), its MoE layers run the shared experts beside the routed ones, and MLA's
// projections replace q/k/v.
TEST(HfArchitectures, StepProgramRunsDenseFirstSharedExpertsAndLatentAttention) {
  auto syncs = [](const program::StepOptions& o) {
    return program::program_stats(program::build_step_program(o)).host_syncs;
  };
  // One layer, dense: the routing variant changes nothing.
  EXPECT_EQ(syncs(run_of("deepseek-v2-lite", 1, fixes::moe_routing::Variant::Loop)),
            syncs(run_of("deepseek-v2-lite", 1, fixes::moe_routing::Variant::Device)));
  // Two layers: the second routes, and the loop's syncs come from it alone.
  const int loop2 = syncs(run_of("deepseek-v2-lite", 2, fixes::moe_routing::Variant::Loop));
  const int device2 = syncs(run_of("deepseek-v2-lite", 2, fixes::moe_routing::Variant::Device));
  EXPECT_GT(loop2, device2);
  const int loop3 = syncs(run_of("deepseek-v2-lite", 3, fixes::moe_routing::Variant::Loop));
  const int device3 = syncs(run_of("deepseek-v2-lite", 3, fixes::moe_routing::Variant::Device));
  EXPECT_EQ(loop3 - device3, 2 * (loop2 - device2));  // per MoE layer, not per layer

  const program::Program p =
      program::build_step_program(run_of("deepseek-v2-lite", 2, fixes::moe_routing::Variant::Device));
  EXPECT_GT(ops_named(p, "shared_experts.gate_proj"), 0);
  EXPECT_GT(ops_named(p, "kv_a_proj_with_mqa"), 0);
  EXPECT_GT(ops_named(p, "kv_b_proj"), 0);
  EXPECT_EQ(ops_named(p, "k_proj"), 0);
  EXPECT_EQ(ops_named(p, "v_proj"), 0);
  EXPECT_GT(ops_named(p, "down_proj"), 0);  // layer 0's dense MLP
  // Qwen2-MoE's shared expert carries its sigmoid gate.
  const program::Program q =
      program::build_step_program(run_of("qwen1.5-moe-a2.7b", 1, fixes::moe_routing::Variant::Device));
  EXPECT_GT(ops_named(q, "shared_expert_gate.sigmoid"), 0);
  // What the step computes is not reported as omitted.
  const auto ns = program::network_summary(run_of("deepseek-v2-lite", 0, fixes::moe_routing::Variant::Loop));
  for (const auto& kind : ns.step_omits) {
    EXPECT_EQ(kind.find("shared_expert"), std::string::npos) << kind;
    EXPECT_EQ(kind.find("kv_b_proj"), std::string::npos) << kind;
  }
}

// The model's name: the Hugging Face cache's repository name, else a folder that is not
// generic, else the family and shape (a folder named "cfg" once named the model "cfg" in
// results.csv).
TEST(HfArchitectures, TheModelIsNamedNotItsFolder) {
  test::TempDir dir;
  const std::string text = read_file(test::fixture("hf/llama-3.1-8b/config.json"));
  auto at = [&](const std::string& rel) {
    const auto p = dir / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return scenario::load_hf_config(p).name;
  };
  EXPECT_EQ(at("cfg/config.json"), "llama-32L-4096H");
  EXPECT_EQ(at("hub/models--meta-llama--Llama-3.1-8B/snapshots/0e9e39f2/config.json"), "Llama-3.1-8B");
  EXPECT_EQ(at("my-llama-8b/config.json"), "my-llama-8b");
}

// An odd head_dim is refused where it is written (it once failed later, in the step, with
// neither file nor position).
TEST(HfArchitectures, OddHeadDimNamesTheFileAndPosition) {
  test::TempDir dir;
  const std::string q = read_file(test::fixture("hf/qwen3-0.6b/config.json"));
  const std::string e = error_of(dir, with(q, "\"head_dim\": 128", "\"head_dim\": 3"));
  EXPECT_NE(e.find(":3: head_dim: expected an even integer (RoPE rotates pairs of dimensions), got 3"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.rfind((dir / "config.json").string() + ":", 0), 0u) << e;
}

// An unknown model_type with MLA keys is read as DeepSeek-V3, saying so.
TEST(HfArchitectures, UnknownTypeWithLatentAttentionIsReadAsDeepSeek) {
  test::TempDir dir;
  const std::string ds = read_file(test::fixture("hf/deepseek-v2-lite/config.json"));
  const auto p = dir / "config.json";
  std::ofstream(p) << with(ds, "\"deepseek_v2\"", "\"kimi_like\"");
  const scenario::ModelShape m = scenario::load_hf_config(p);
  EXPECT_EQ(m.traits.family, "deepseek_v3");
  EXPECT_NE(m.traits.assumed.find("model_type \"kimi_like\""), std::string::npos) << m.traits.assumed;
  EXPECT_NE(m.traits.assumed.find("deepseek_v3's defaults"), std::string::npos) << m.traits.assumed;
  EXPECT_EQ(base_parameters(m), 15706484224);  // every trait is stated, so the count holds
}

// A known family's config that leaves keys out gets its class's defaults (transformers'
// DeepseekV3Config: n_shared_experts=1, first_k_dense_replace=3, q_lora_rank=1536,
// moe_intermediate_size=2048), so DeepSeek-V3 without them still counts 671B; it once read
// no shared expert.
TEST(HfArchitectures, KnownFamilyLeavesKeysToItsConfigClass) {
  test::TempDir dir;
  std::string v3 = read_file(test::fixture("hf/deepseek-v3/config.json"));
  for (const char* key : {"\"n_shared_experts\": 1,", "\"first_k_dense_replace\": 3,", "\"q_lora_rank\": 1536,",
                          "\"moe_intermediate_size\": 2048,"})
    v3 = with(v3, key, "");
  const auto p = dir / "config.json";
  std::ofstream(p) << v3;
  const scenario::ModelShape m = scenario::load_hf_config(p);
  EXPECT_EQ(m.num_shared_experts, 1);
  EXPECT_EQ(m.intermediate_size, 2048);
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_FALSE(m.moe_layer(2));
  EXPECT_TRUE(m.moe_layer(3));
  EXPECT_EQ(base_parameters(m), 671026404352);
  EXPECT_TRUE(m.traits.assumed.empty()) << m.traits.assumed;  // a known family: nothing assumed
  // ... but every key read as the class's default is named, with the class.
  for (const char* named : {"DeepseekV3Config", "n_shared_experts 1", "first_k_dense_replace 3", "q_lora_rank 1536",
                            "moe_intermediate_size 2048"})
    EXPECT_NE(m.traits.defaulted.find(named), std::string::npos) << named << " in " << m.traits.defaulted;
}

// An unknown model_type read as the closest family gets that family's class defaults, and
// the warning names each one: a DeepSeek-like config without first_k_dense_replace,
// n_shared_experts, q_lora_rank and qk_rope_head_dim is read as DeepseekV3Config would
// (3 dense layers, 1 shared expert, q_lora_rank 1536, 64), where it once applied
// q_lora_rank 1536 but no dense layer and no shared expert, naming none of them.
TEST(HfArchitectures, UnknownTypeGetsTheClosestFamilysDefaultsEachNamed) {
  test::TempDir dir;
  std::string ds =
      with(read_file(test::fixture("hf/deepseek-v2-lite/config.json")), "\"deepseek_v2\"", "\"kimi_like\"");
  for (const char* key : {"\"first_k_dense_replace\": 1,", "\"n_shared_experts\": 2,", "\"q_lora_rank\": null,",
                          "\"qk_rope_head_dim\": 64,"})
    ds = with(ds, key, "");
  const auto p = dir / "config.json";
  std::ofstream(p) << ds;
  const scenario::ModelShape m = scenario::load_hf_config(p);
  EXPECT_EQ(m.traits.family, "deepseek_v3");
  EXPECT_FALSE(m.moe_layer(2));
  EXPECT_TRUE(m.moe_layer(3));
  EXPECT_EQ(m.num_shared_experts, 1);
  EXPECT_EQ(m.shared_expert_intermediate_size, 1408);
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(m.qk_rope_head_dim, 64);
  for (const char* named : {"first_k_dense_replace 3", "n_shared_experts 1", "q_lora_rank 1536", "qk_rope_head_dim 64"})
    EXPECT_NE(m.traits.assumed.find(named), std::string::npos) << named << " in " << m.traits.assumed;
  // What the config states is not listed as assumed.
  EXPECT_EQ(m.traits.assumed.find("kv_lora_rank 512"), std::string::npos) << m.traits.assumed;
  EXPECT_EQ(m.traits.assumed.find("moe_intermediate_size"), std::string::npos) << m.traits.assumed;
}

// DeepSeek's config classes define routed experts by default (transformers
// configuration_deepseek_v2.py: DeepseekV2Config n_routed_experts=64, n_shared_experts=2,
// num_experts_per_tok=None; configuration_deepseek_v3.py: DeepseekV3Config
// n_routed_experts=256, num_experts_per_tok=8), and modeling_deepseek_v2.py builds the MoE
// block on every layer from first_k_dense_replace on: a config without n_routed_experts once
// read as a dense model. Each defaulted key is named with its class; V2's None top-k is
// refused naming the file, the key and the fix.
TEST(HfArchitectures, DeepSeekRoutedExpertsComeFromTheConfigClass) {
  test::TempDir dir;
  const auto p = dir / "config.json";
  const std::string v2 = read_file(test::fixture("hf/deepseek-v2-lite/config.json"));
  std::ofstream(p) << with(v2, "\"n_routed_experts\": 64,", "");
  const scenario::ModelShape lite = scenario::load_hf_config(p);
  EXPECT_TRUE(lite.is_moe());
  EXPECT_EQ(lite.num_local_experts, 64);
  EXPECT_EQ(base_parameters(lite), 15706484224);  // the published total still holds
  EXPECT_NE(lite.traits.defaulted.find("DeepseekV2Config"), std::string::npos) << lite.traits.defaulted;
  EXPECT_NE(lite.traits.defaulted.find("n_routed_experts 64"), std::string::npos) << lite.traits.defaulted;
  EXPECT_TRUE(lite.traits.assumed.empty()) << lite.traits.assumed;
  // The stated fixture defaults nothing.
  EXPECT_TRUE(fixture_model("deepseek-v2-lite").traits.defaulted.empty());

  // Without num_experts_per_tok the V2 class has None: refused, naming file, key and fix.
  const std::string e =
      error_of(dir, with(with(v2, "\"n_routed_experts\": 64,", ""), "\"num_experts_per_tok\": 6,", ""));
  EXPECT_EQ(e.rfind((dir / "config.json").string() + ": num_experts_per_tok: missing", 0), 0u) << e;
  for (const char* named : {"DeepseekV2Config", "is None, with which the MoE block cannot route", "64 routed experts",
                            "add \"num_experts_per_tok\""})
    EXPECT_NE(e.find(named), std::string::npos) << named << " in " << e;
  // A null is refused the same way, at its position.
  const std::string null_k = error_of(dir, with(v2, "\"num_experts_per_tok\": 6", "\"num_experts_per_tok\": null"));
  EXPECT_NE(null_k.find("config.json:26:3: num_experts_per_tok: null"), std::string::npos) << null_k;

  // V3's class defines both: 256 routed experts, top-8, and the published 671B still holds.
  std::string v3 = read_file(test::fixture("hf/deepseek-v3/config.json"));
  v3 = with(with(v3, "\"n_routed_experts\": 256,", ""), "\"num_experts_per_tok\": 8,", "");
  std::ofstream(p) << v3;
  const scenario::ModelShape big = scenario::load_hf_config(p);
  EXPECT_EQ(big.num_local_experts, 256);
  EXPECT_EQ(big.num_experts_per_tok, 8);
  EXPECT_EQ(base_parameters(big), 671026404352);
  for (const char* named : {"DeepseekV3Config", "n_routed_experts 256", "num_experts_per_tok 8"})
    EXPECT_NE(big.traits.defaulted.find(named), std::string::npos) << named << " in " << big.traits.defaulted;
}

// DeepSeek-V3's router (group-limited, sigmoid scores with a correction bias, scaled) is
// not the softmax top-k the step runs: each key is named in a warning. DeepSeek-V2-Lite's
// (one group, greedy, softmax, scale 1) is the step's, and says nothing.
TEST(HfArchitectures, RoutingKeysTheStepDoesNotModelAreNamed) {
  const scenario::ModelShape v3 = fixture_model("deepseek-v3");
  std::string routing;
  for (const auto& w : v3.traits.unmodelled)
    if (w.rfind("routing: ", 0) == 0) routing = w;
  for (const char* named : {"n_group 8", "topk_group 4", "topk_method \"noaux_tc\"", "scoring_func \"sigmoid\"",
                            "routed_scaling_factor 2.5"})
    EXPECT_NE(routing.find(named), std::string::npos) << named << " in " << routing;
  EXPECT_TRUE(fixture_model("deepseek-v2-lite").traits.unmodelled.empty());
  EXPECT_TRUE(fixture_model("qwen3-30b-a3b").traits.unmodelled.empty());
}

// State-space and hybrid configs cannot be modelled: refused naming the file, the keys and
// the family (a Jamba config once ran as qwen3_moe, its Mamba layers as attention).
TEST(HfArchitectures, StateSpaceAndHybridConfigsAreRefusedNamingWhatIsMissing) {
  test::TempDir dir;
  const std::string jamba = R"({"model_type": "jamba", "num_hidden_layers": 32, "hidden_size": 4096,
 "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 65536,
 "num_experts": 16, "num_experts_per_tok": 2, "attn_layer_period": 8, "attn_layer_offset": 4,
 "expert_layer_period": 2, "expert_layer_offset": 1, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
 "use_mamba_kernels": true})";
  std::string e = error_of(dir, jamba);
  EXPECT_EQ(e.rfind((dir / "config.json").string() + ":3:", 0), 0u) << e;
  for (const char* named :
       {"model_type \"jamba\"", "attn_layer_period", "attn_layer_offset", "mamba_d_state", "mamba_d_conv",
        "mamba_expand", "use_mamba_kernels", "expert_layer_period", "cannot model this family", "selective-scan"})
    EXPECT_NE(e.find(named), std::string::npos) << named << " in " << e;
  // The same keys under another name are refused too: the keys decide, not the name.
  e = error_of(dir, with(jamba, "\"jamba\"", "\"my_hybrid\""));
  EXPECT_NE(e.find("model_type \"my_hybrid\""), std::string::npos) << e;
  // A pure state-space config (no attention heads) says what it is, not "missing key".
  e = error_of(dir, R"({"model_type": "mamba", "hidden_size": 768, "num_hidden_layers": 24, "vocab_size": 50280,
 "state_size": 16, "conv_kernel": 4, "expand": 2, "time_step_rank": 48})");
  EXPECT_NE(e.find("cannot model this family"), std::string::npos) << e;
  EXPECT_NE(e.find("state_size"), std::string::npos) << e;
  EXPECT_EQ(e.find("missing required key"), std::string::npos) << e;
  // Hybrid layouts inside a multimodal text_config are found there.
  e = error_of(dir, R"({"model_type": "x", "text_config": {"model_type": "nemotron_h", "num_hidden_layers": 4,
 "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
 "hybrid_override_pattern": "M-M*"}})");
  EXPECT_NE(e.find("hybrid_override_pattern"), std::string::npos) << e;
}

// MLA's attention: QK^T over the q.k width (qk_nope + qk_rope = 192) and PV over
// v_head_dim (128), where the step once charged PV at 192 too. A dense model's SDPA keeps
// 4 * heads * T^2 * head_dim.
TEST(HfArchitectures, LatentAttentionChargesPvAtTheValueWidth) {
  auto first = [](const program::Program& p, const std::string& name) -> const program::Op* {
    for (const auto& op : p.ops)
      if (op.name == name) return &op;
    return nullptr;
  };
  const program::Program p =
      program::build_step_program(run_of("deepseek-v2-lite", 1, fixes::moe_routing::Variant::Device));
  const program::Op* kv_a = first(p, "kv_a_proj_with_mqa");
  const program::Op* sdpa = first(p, "scaled_dot_product_attention");
  ASSERT_TRUE(kv_a && sdpa);
  const double T = kv_a->flops / (2.0 * (512 + 64) * 2048);  // tokens, from a GEMM of known shape
  EXPECT_DOUBLE_EQ(sdpa->flops, 2.0 * 16 * T * T * (192 + 128));

  const program::Program q = program::build_step_program(run_of("qwen3-0.6b", 1, fixes::moe_routing::Variant::Device));
  const program::Op* q_proj = first(q, "q_proj");
  const program::Op* dense = first(q, "scaled_dot_product_attention");
  ASSERT_TRUE(q_proj && dense);
  const double Tq = q_proj->flops / (2.0 * 16 * 128 * 1024);
  EXPECT_DOUBLE_EQ(dense->flops, 4.0 * 16 * Tq * Tq * 128);
}

}  // namespace
}  // namespace syncscope
