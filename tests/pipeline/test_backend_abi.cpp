// The measured backend's C interface (backend_abi.hpp): its structs are C types whose layout
// this build derives again and compares with the one recorded for the ABI version, and every
// field of the wire formats (backend_wire.hpp) survives the trip.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <type_traits>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/pipeline/backend_abi.hpp"
#include "syncscope/pipeline/backend_wire.hpp"

namespace syncscope::pipeline {
namespace {

TEST(BackendAbi, TablesAreCTypes) {
  EXPECT_TRUE(std::is_standard_layout_v<BackendTable>);
  EXPECT_TRUE(std::is_trivial_v<BackendTable>);
  EXPECT_TRUE(std::is_standard_layout_v<BackendBytes>);
  EXPECT_TRUE(std::is_trivial_v<BackendBytes>);
}

TEST(BackendAbi, LayoutMatchesTheOneRecordedForThisVersion) {
  // Derived from offsetof and sizeof of every field (backend_layout_hash); a change to the
  // structs fails here until the version is bumped and the new hash recorded.
  EXPECT_EQ(backend_layout_hash(), kBackendLayoutHash) << fmt::format(
      "the layout of BackendTable/BackendBytes changed: bump kBackendAbiVersion ({}) and set "
      "kBackendLayoutHash to 0x{:016x}ull in backend_abi.hpp",
      kBackendAbiVersion, backend_layout_hash());
  EXPECT_EQ(std::string(kBackendEntryPoint), "syncscope_backend_v" + std::to_string(kBackendAbiVersion));
}

program::StepOptions every_field_set() {
  program::StepOptions o;
  o.model.name = "Model \"quoted\" \xC3\xA9";
  o.model.num_hidden_layers = 3;
  o.model.hidden_size = 64;
  o.model.num_attention_heads = 4;
  o.model.num_key_value_heads = 2;
  o.model.head_dim = 16;
  o.model.intermediate_size = 96;
  o.model.vocab_size = 101;
  o.model.num_local_experts = 8;
  o.model.num_experts_per_tok = 2;
  o.model.rms_norm_eps = 1.25e-5;
  o.model.rope_theta = 123456.5;
  o.model.sliding_window = 7;
  o.model.tie_word_embeddings = true;
  o.model.model_type = "gpt_oss";
  o.model.swiglu_limit = 7.0;
  o.batch.packed_tokens = 96;
  o.batch.distribution = "list";
  o.batch.min_len = 3;
  o.batch.max_len = 50;
  o.batch.lengths = {40, 50, 6};
  o.batch.seed = 0xfedcba9876543210ull;
  o.dtype = "bf16";
  o.device = "cuda";
  o.layers = 2;
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  fixes::offload::set_variant(o, fixes::offload::Variant::Prefetch);
  fixes::offload::set_prefetch_depth(o, 3);
  fixes::offload::set_budget_bytes(o, 1.0 / 3.0);
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Sorted);
  o.fix_variants[static_cast<fixes::Fix>(42)] = 1;
  o.fix_numbers[static_cast<fixes::Fix>(42)] = {{"logging_steps", 10}, {"ratio", 1.0 / 3.0}};
  o.fix_numbers[static_cast<fixes::Fix>(7)] = {};
  fixes::moe_routing::set_expert_gemm(o, "padded");
  o.seed = 0xffffffffffffffffull;
  o.nvtx = false;
  o.learning_rate = 3e-4;
  o.weight_decay = 0.01;
  o.training.mode = "qlora";
  o.training.lora_rank = 8;
  o.training.lora_alpha = 32.5;
  o.training.target_modules = {"q_proj", "down_proj"};
  o.training.double_quant = true;
  o.first_step = true;
  fixes::offload::set_min_bytes(o, 17);
  o.gpt_oss_unsloth_form = true;
  return o;
}

TEST(BackendWire, StepOptionsKeepEveryField) {
  const program::StepOptions o = every_field_set();
  const program::StepOptions b = step_options_from_wire(to_wire(o));
  EXPECT_EQ(to_wire(b), to_wire(o));  // the same bytes again
  EXPECT_EQ(b.model.name, o.model.name);
  EXPECT_EQ(b.model.swiglu_limit, 7.0);
  EXPECT_TRUE(b.model.tie_word_embeddings);
  EXPECT_EQ(b.batch.lengths, o.batch.lengths);
  EXPECT_EQ(b.batch.seed, o.batch.seed);
  EXPECT_EQ(b.seed, o.seed);
  EXPECT_EQ(fixes::packing::variant(b), fixes::packing::Variant::Device);
  EXPECT_EQ(fixes::offload::variant(b), fixes::offload::Variant::Prefetch);
  EXPECT_EQ(fixes::moe_routing::variant(b), fixes::moe_routing::Variant::Sorted);
  EXPECT_EQ(b.fix_variants, o.fix_variants);
  EXPECT_EQ(b.fix_words, o.fix_words);
  EXPECT_EQ(b.fix_numbers, o.fix_numbers);  // doubles exactly, an empty entry kept
  EXPECT_EQ(b.fix_numbers.at(static_cast<fixes::Fix>(42)).at("ratio"), 1.0 / 3.0);
  EXPECT_EQ(fixes::offload::budget_bytes(b), 1.0 / 3.0);  // doubles exactly
  EXPECT_EQ(b.training.target_modules, o.training.target_modules);
  EXPECT_TRUE(b.training.double_quant);
  EXPECT_FALSE(b.nvtx);
  EXPECT_TRUE(b.gpt_oss_unsloth_form);
  EXPECT_EQ(fixes::offload::min_bytes(b), 17);
  program::StepOptions off = o;
  fixes::offload::set_variant(off, std::nullopt);
  EXPECT_FALSE(fixes::offload::variant(step_options_from_wire(to_wire(off))));
}

TEST(BackendWire, RequestsAndResultsKeepEveryField) {
  MeasureRequest r;
  r.options = every_field_set();
  r.warmup_steps = 4;
  r.repeat_steps = 9;
  r.trace_name = "qwen3 packing=device";
  const MeasureRequest rb = measure_request_from_wire(to_wire(r));
  EXPECT_EQ(to_wire(rb), to_wire(r));
  EXPECT_EQ(rb.repeat_steps, 9);
  EXPECT_EQ(rb.trace_name, r.trace_name);

  const RuntimeVersions v{"580.159.04", "13.0", "2.11.0"};
  EXPECT_EQ(runtime_versions_from_wire(to_wire(v)).libtorch, "2.11.0");
  EXPECT_EQ(runtime_versions_from_wire(to_wire(v)).driver, "580.159.04");

  const model::CalibrationOptions co{3, true};
  EXPECT_EQ(calibration_options_from_wire(to_wire(co)).device, 3);
  EXPECT_TRUE(calibration_options_from_wire(to_wire(co)).quick);

  model::CalibrationMeasurements m;
  m.gpu_name = "NVIDIA H200";
  m.compute_major = 9;
  m.unified_memory = true;
  m.copy_compute_slowdown = 0.125;
  m.method["sync_round_trip_ns"] = "median of 200";
  m.wall_seconds = 41.5;
  const model::CalibrationMeasurements mb = calibration_measurements_from_wire(to_wire(m));
  EXPECT_EQ(to_wire(mb), to_wire(m));
  EXPECT_EQ(mb.method, m.method);
  EXPECT_EQ(mb.copy_compute_slowdown, 0.125);
}

TEST(BackendWire, RefusesOtherVersionsAndMissingFields) {
  EXPECT_THROW(step_options_from_wire("not json"), Error);
  EXPECT_THROW(step_options_from_wire("{\"wire\": 99}"), Error);
  std::string w = to_wire(RuntimeVersions{"a", "b", "c"});
  w.replace(w.find("\"libtorch\""), 10, "\"libtorch_\"");
  try {
    (void)runtime_versions_from_wire(w);
    FAIL() << "a missing field was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runtime versions.libtorch is missing"), std::string::npos) << e.what();
  }
  // A fix's numbers: required, and numbers only.
  const std::string opts = to_wire(every_field_set());
  std::string no_numbers = opts;
  no_numbers.replace(no_numbers.find("\"fix_numbers\""), 13, "\"fix_numberz\"");
  EXPECT_THROW(step_options_from_wire(no_numbers), Error);
  std::string text = opts;
  const std::size_t at = text.find("\"logging_steps\":") + 16;
  text.replace(at, text.find_first_of(",}", at) - at, "\"ten\"");
  try {
    (void)step_options_from_wire(text);
    FAIL() << "a fix number that is a string was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fix_numbers.42.logging_steps is not a number"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace syncscope::pipeline
