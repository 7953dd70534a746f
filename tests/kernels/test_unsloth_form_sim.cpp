// What leaving gpt-oss's Unsloth form out of the reference step costs, measured in the
// simulator (issue 14: "or each deviation documented with its effect measured in the
// simulator"). The same gpt-oss-20b step (LoRA on q/k/v/o, Unsloth's checkpointing, H200
// profile) is simulated with the reference step's form and with Unsloth's (biases, clamped
// SwiGLU, fp32 down-projection, attention sinks in an eager softmax); the routing syncs are
// the same, the work around them is not. Prints the figures model/README.md quotes.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/kernels/step_program.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope::kernels {
namespace {

StepOptions gpt_oss_20b() {
  StepOptions o;
  ModelShape& m = o.model;
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
  m.rms_norm_eps = 1e-5;
  m.rope_theta = 150000;
  o.batch.packed_tokens = 2048;
  o.dtype = "bf16";
  o.offload = OffloadVariant::Double;
  o.offload_budget_bytes = 0;
  o.training.mode = "lora";
  o.training.target_modules = {"q_proj", "k_proj", "v_proj", "o_proj"};
  return o;
}

double step_ms(const StepOptions& o, const GpuProfile& profile) {
  sim::SimOptions so;
  so.steps = 2;
  const Trace t = sim::simulate(build_step_program(o), profile, so);
  AnalysisOptions ao;
  const AnalysisResult a = analyze(t, ao);
  return a.step_summary.duration_ns.median / 1e6;
}

TEST(UnslothFormInTheSimulator, GptOssExpertsAndSinksMakeTheStepHeavierNotTheSyncs) {
  const GpuProfile h200 = load_gpu_profile("H200");
  std::map<std::string, std::map<std::string, double>> ms;  // form -> variant -> step ms
  for (bool form : {false, true})
    for (const std::string& v : fix_variants(Fix::MoeRouting)) {
      StepOptions o = gpt_oss_20b();
      o.gpt_oss_unsloth_form = form;
      o.moe = moe_variant(v);
      ms[form ? "unsloth" : "reference"][v] = step_ms(o, h200);
    }
  for (const auto& [form, vs] : ms)
    std::printf("gpt-oss-20b %s form (H200 sim): loop %.2f ms, sorted %.2f ms (%.4fx), device %.2f ms (%.4fx)\n",
                form.c_str(), vs.at("loop"), vs.at("sorted"), vs.at("loop") / vs.at("sorted"), vs.at("device"),
                vs.at("loop") / vs.at("device"));
  // Unsloth's form does more work per step (fp32 down-projection, eager attention with sinks).
  for (const std::string& v : fix_variants(Fix::MoeRouting)) EXPECT_GT(ms["unsloth"][v], ms["reference"][v]) << v;
  // The fixes still win in both forms.
  for (const char* f : {"reference", "unsloth"}) {
    EXPECT_GT(ms[f]["loop"], ms[f]["sorted"]) << f;
    EXPECT_GT(ms[f]["loop"], ms[f]["device"]) << f;
  }
}

}  // namespace
}  // namespace syncscope::kernels
