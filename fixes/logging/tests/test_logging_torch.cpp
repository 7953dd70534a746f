// The logging fix in the LibTorch reference step on CPU (fp32; src/torch_step.cpp), installed
// by register_logging_torch_step (the measured backend calls it through fixes/shipped's
// register_shipped_torch_steps). Each variant's host-sync bookkeeping, step by step, against
// its step program's syncs issued on that step (Op::period); the three variants' updates (the
// same: only the reads differ); the clip against LibTorch's own clip_grad_norm_; and the
// losses each variant reads back (deferred: the step before's).
// As in tests/kernels/test_reference_step.cpp, the counts are the step's bookkeeping, not a
// measurement: on the CPU nothing synchronizes (scripts/gpu-check counts a GPU's).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_program.hpp"

namespace syncscope {
namespace {

using fixes::logging::kLogging;
constexpr int kWindow = 3;  // logging_steps of `every`

scenario::ModelShape tiny_model(bool moe) {
  scenario::ModelShape m;
  m.name = moe ? "tiny-moe" : "tiny-llama";
  m.num_hidden_layers = 2;
  m.hidden_size = 64;
  m.num_attention_heads = 4;
  m.num_key_value_heads = 2;
  m.head_dim = 16;
  m.intermediate_size = moe ? 32 : 128;
  m.vocab_size = 256;
  m.rms_norm_eps = 1e-6;
  m.rope_theta = 10000.0;
  if (moe) {
    m.num_local_experts = 4;
    m.num_experts_per_tok = 2;
  }
  return m;
}

// T = 96 packed from 4 sequences; `variant` "" leaves the fix out.
program::StepOptions options(const std::string& variant, bool moe = false) {
  program::StepOptions o;
  o.model = tiny_model(moe);
  o.batch.packed_tokens = 96;
  o.batch.distribution = "list";
  o.batch.lengths = {20, 31, 9, 36};
  o.seed = 7;
  o.nvtx = false;
  fixes::offload::set_budget_bytes(o, 0);
  fixes::offload::set_min_bytes(o, 0);
  if (!variant.empty()) {
    o.fix_variants[kLogging] = *fixes::fix_spec(kLogging).variant_index(variant);
    o.fix_numbers[kLogging]["logging_steps"] = kWindow;
  }
  return o;
}

// The program's host syncs issued on step s (counted from 0 across a run, as the simulator
// issues an op of period p on the steps with (s + 1) % p == 0).
int program_syncs_on_step(const program::Program& p, int s) {
  int n = 0;
  for (const program::Op& op : p.ops) {
    const bool sync = op.kind == program::OpKind::StreamSync || op.kind == program::OpKind::EventSync ||
                      op.kind == program::OpKind::DeviceSync;
    if (sync && (op.period <= 1 || (s + 1) % op.period == 0)) ++n;
  }
  return n;
}

std::vector<std::string> program_ranges(const program::Program& p) {
  std::vector<std::string> out;
  for (const auto& op : p.ops)
    if (op.kind == program::OpKind::RangePush) out.push_back(op.name);
  return out;
}

struct Steps {
  std::vector<kernels::StepResult> steps;
  std::vector<kernels::NamedValues> params, grads;
};

Steps run_steps(const program::StepOptions& o, int steps) {
  kernels::ReferenceStep step(o);
  step.record_ranges(true);
  Steps r;
  for (int s = 0; s < steps; ++s) {
    r.steps.push_back(step.run());
    step.next_batch();
  }
  r.params = step.parameters();
  r.grads = step.gradients();
  return r;
}

double max_abs_diff(const std::vector<kernels::NamedValues>& a, const std::vector<kernels::NamedValues>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i].values.size(), b[i].values.size()) << a[i].name;
    for (std::size_t j = 0; j < std::min(a[i].values.size(), b[i].values.size()); ++j) {
      const double d = std::abs(static_cast<double>(a[i].values[j]) - static_cast<double>(b[i].values[j]));
      if (std::isnan(d)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, d);
    }
  }
  return worst;
}

class LoggingTorchStep : public ::testing::Test {
 protected:
  void SetUp() override { fixes::logging::register_logging_torch_step(); }
};

TEST_F(LoggingTorchStep, RegisteredWithItsLibTorchHook) {
  EXPECT_TRUE(fixes::fix_spec(kLogging).torch_step_point);
  EXPECT_TRUE(fixes::fix_spec(kLogging).build_program_layer);
}

// Each variant's bookkeeping on every step of two windows, and the ranges of its first step,
// against the step program, on a dense model and an MoE model with other fixes' variants.
TEST_F(LoggingTorchStep, HostSyncsPerStepEqualTheStepProgramsOnTheSameSteps) {
  for (const bool moe : {false, true})
    for (const char* v : {"item", "every", "deferred"}) {
      program::StepOptions o = options(v, moe);
      if (moe) {
        fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
        fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Sorted);
      }
      const program::Program p = program::build_step_program(o);
      SCOPED_TRACE(p.name);
      const Steps r = run_steps(o, 2 * kWindow);
      for (int s = 0; s < 2 * kWindow; ++s) {
        const kernels::SyncCounts& c = r.steps[static_cast<std::size_t>(s)].host_syncs;
        EXPECT_EQ(c.total(), program_syncs_on_step(p, s)) << "step " << s;
        EXPECT_EQ(c.other, 0) << "step " << s;  // the fix's reads replace the step's loss read
        const int reads = std::string(v) == "item" ? 2 : std::string(v) == "deferred" ? 1 : (s + 1) % kWindow ? 0 : 2;
        EXPECT_EQ(c.of(kLogging), reads) << "step " << s;
      }
      EXPECT_EQ(r.steps[0].ranges, program_ranges(p));
    }
  // The step without the fix keeps its one loss read, with the hook installed.
  const program::StepOptions plain = options("");
  const Steps r = run_steps(plain, 2);
  for (const auto& s : r.steps) {
    EXPECT_EQ(s.host_syncs.other, 1);
    EXPECT_EQ(s.host_syncs.of(kLogging), 0);
    EXPECT_EQ(s.host_syncs.total(), program::program_stats(program::build_step_program(plain)).host_syncs);
  }
  EXPECT_EQ(r.steps[0].ranges, program_ranges(program::build_step_program(plain)));
}

// The same update in every variant (clip, AdamW): only the reads differ. On the CPU the
// operations on the parameters are the same sequence, so the tolerance is tight.
TEST_F(LoggingTorchStep, VariantsGiveTheSameParametersAfterSteps) {
  const int steps = 4;
  const Steps item = run_steps(options("item"), steps), every = run_steps(options("every"), steps),
              deferred = run_steps(options("deferred"), steps), plain = run_steps(options(""), steps);
  EXPECT_LE(max_abs_diff(item.params, every.params), 1e-7);
  EXPECT_LE(max_abs_diff(item.params, deferred.params), 1e-7);
  EXPECT_LE(max_abs_diff(item.grads, deferred.grads), 1e-7);
  // The clip changed the update (the tiny model's gradient norm is above 1): the variants
  // agree with each other, not with a step that does not clip.
  EXPECT_GT(max_abs_diff(item.params, plain.params), 1e-6);
}

// The fix's clip is LibTorch's clip_grad_norm_ without its closing .item(): the same
// gradients, bitwise, from the same unclipped ones.
TEST_F(LoggingTorchStep, ClipEqualsLibTorchsClipGradNorm) {
  const Steps plain = run_steps(options(""), 1), item = run_steps(options("item"), 1);
  std::vector<torch::Tensor> params;
  for (const auto& g : plain.grads) {
    torch::Tensor p = torch::zeros({static_cast<std::int64_t>(g.values.size())}, torch::requires_grad());
    p.mutable_grad() = torch::tensor(g.values);
    params.push_back(p);
  }
  const double total = torch::nn::utils::clip_grad_norm_(params, 1.0);
  EXPECT_GT(total, 1.0);  // the clip scaled the gradients
  ASSERT_EQ(params.size(), item.grads.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const torch::Tensor g = params[i].grad();
    const std::vector<float> clipped(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
    EXPECT_EQ(clipped, item.grads[i].values) << item.grads[i].name;
  }
}

// What each variant reads back as the step's loss: item its own, deferred the step before's
// (none on the first step), every the window's mean on the window's last step (none before).
TEST_F(LoggingTorchStep, DeferredReadsThePreviousStepsLossAndEveryTheWindowsMean) {
  const int steps = 2 * kWindow;
  const Steps item = run_steps(options("item"), steps), every = run_steps(options("every"), steps),
              deferred = run_steps(options("deferred"), steps), plain = run_steps(options(""), 1);
  EXPECT_EQ(item.steps[0].loss, plain.steps[0].loss);  // the first step's loss: before any update
  EXPECT_TRUE(std::isnan(deferred.steps[0].loss));
  for (int s = 1; s < steps; ++s) EXPECT_EQ(deferred.steps[s].loss, item.steps[s - 1].loss) << "step " << s;
  for (int s = 0; s < steps; ++s) {
    if ((s + 1) % kWindow != 0) {
      EXPECT_TRUE(std::isnan(every.steps[s].loss)) << "step " << s;
      continue;
    }
    double sum = 0;
    for (int k = s + 1 - kWindow; k <= s; ++k) sum += item.steps[k].loss;
    EXPECT_NEAR(every.steps[s].loss, sum / kWindow, 1e-6 * std::abs(sum)) << "step " << s;
  }
}

}  // namespace
}  // namespace syncscope
