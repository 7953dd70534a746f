// Tiny model shapes and step options shared by the kernels tests (CPU-sized: a step takes
// milliseconds). The shapes keep the real models' structure: GQA (heads/kv = 2), head_dim
// not hidden/heads for the Qwen3-like one, MoE with top-2 of 4 experts and gpt-oss's
// alternating sliding window.
#pragma once

#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::kernels::test {

inline scenario::ModelShape tiny_dense(const char* name = "tiny-llama") {
  scenario::ModelShape m;
  m.name = name;
  m.num_hidden_layers = 3;
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_key_value_heads = 2;
  m.head_dim = 16;
  m.intermediate_size = 128;
  m.vocab_size = 256;
  m.rms_norm_eps = 1e-6;
  m.rope_theta = 10000.0;
  return m;
}

inline scenario::ModelShape tiny_qwen3() {
  scenario::ModelShape m = tiny_dense("tiny-qwen3");
  m.head_dim = 24;         // not hidden/heads, as in Qwen3
  m.model_type = "qwen3";  // q/k norms come from the family
  return m;
}

inline scenario::ModelShape tiny_moe() {
  scenario::ModelShape m = tiny_dense("tiny-gpt-oss");
  m.num_hidden_layers = 2;
  m.intermediate_size = 32;
  m.num_local_experts = 4;
  m.num_experts_per_tok = 2;
  m.sliding_window = 16;
  return m;
}

// T = 96 packed from 4 sequences.
inline program::StepOptions tiny_options(scenario::ModelShape m = tiny_dense()) {
  program::StepOptions o;
  o.model = m;
  o.batch.packed_tokens = 96;
  o.batch.distribution = "list";
  o.batch.lengths = {20, 31, 9, 36};
  o.dtype = "fp32";
  o.device = "cpu";
  o.seed = 7;
  o.nvtx = false;
  fixes::offload::set_budget_bytes(o, 0);
  fixes::offload::set_min_bytes(o, 0);  // tiny layer inputs would stay under Unsloth's 2 MiB threshold
  return o;
}

}  // namespace syncscope::kernels::test
