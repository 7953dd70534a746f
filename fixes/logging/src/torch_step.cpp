// The logging fix in the LibTorch reference step (FixSpec::torch_step_point,
// syncscope/kernels/torch_step_point.hpp): the operations its step-program operators describe
// (program.cpp), with real tensors, at the same points, with the same host reads on the same
// steps, each counted in SyncCounts::by_fix where it would synchronize on CUDA. Built only with
// LibTorch (syncscope_fix_logging_torch).
#include <torch/torch.h>

#include <limits>
#include <memory>

#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/kernels/torch_step_point.hpp"

namespace syncscope::fixes::logging {

namespace {

enum class Variant : std::uint8_t { Item = 0, Every = 1, Deferred = 2 };

// What the fix keeps across the steps of one ReferenceStep (TorchStepContext::state holds a
// shared_ptr to it: std::any needs a copyable value).
struct State {
  torch::Tensor grad_norm;  // this step's total gradient norm (0-d, on the device), from the clip
  torch::Tensor tr_loss;    // every: the window's summed loss (0-d fp32, on the device)
  // deferred: [loss, grad_norm] of the step before, copied behind `staged_ready` (pinned on CUDA).
  torch::Tensor staged;
  std::unique_ptr<kernels::detail::StepEvent> staged_ready;
  bool staged_valid = false;
  double logged_grad_norm = std::numeric_limits<double>::quiet_NaN();  // the last value read
};

State& state_of(TorchStepContext& c) {
  std::any& a = c.state(kLogging);
  if (!a.has_value()) a = std::make_shared<State>();
  return *std::any_cast<std::shared_ptr<State>&>(a);
}

// torch.nn.utils.clip_grad_norm_(params, max_norm) as PyTorch computes it, without a host
// read: a norm per gradient, the norm of the norms, max_norm / (total + 1e-6) clamped at 1,
// every gradient scaled by it; returns the total norm on the device (0 without gradients,
// as LibTorch's returns 0.0). Not LibTorch's
// torch::nn::utils::clip_grad_norm_, which ends with total_norm.item() to return a double (a
// host sync the Python trainer does not make and the step program does not have); the
// arithmetic is the same (tests: bitwise equal gradients on CPU).
torch::Tensor clip_grad_norm(const TorchStepContext& c, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads, norms;
  for (const auto& [name, p] : c.parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return torch::zeros({}, c.device.opts());
  for (const torch::Tensor& g : grads) norms.push_back(g.norm(2));
  const torch::Tensor total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
  const torch::Tensor coef = torch::clamp(max_norm / (total + 1e-6), c10::nullopt, 1.0);
  for (torch::Tensor& g : grads) g.mul_(coef);
  return total;
}

// aten::item: D2H + cudaStreamSynchronize on CUDA, counted as the step program's host_read.
double read_item(TorchStepContext& c, const torch::Tensor& t) {
  ++c.syncs.by_fix[kLogging];
  return t.item<double>();
}

void after_optimizer(TorchStepContext& c, Variant v, State& st) {
  c.loss_read_taken = true;  // the step program's take_loss_read()
  kernels::detail::RangeGuard range(c.ranges, "logging");
  const torch::Tensor loss = c.loss.detach();
  switch (v) {
    case Variant::Item:
      // logging_steps = 1: the trainer's two reads, each a D2H copy and a stream sync.
      c.loss_read = read_item(c, loss);
      st.logged_grad_norm = read_item(c, st.grad_norm);
      break;
    case Variant::Every: {
      // tr_loss += loss on the device every step; on the last step of each window (steps s
      // with (s + 1) % N == 0, as Op::period issues them) its mean and the gradient norm are
      // read, and tr_loss -= tr_loss.
      torch::NoGradGuard no_grad;
      if (!st.tr_loss.defined()) st.tr_loss = torch::zeros({}, loss.options().dtype(torch::kFloat32));
      st.tr_loss.add_(loss);
      const auto n = static_cast<int>(c.options.fix_numbers.at(kLogging).at("logging_steps"));
      if ((c.step + 1) % n != 0) break;
      const torch::Tensor mean = st.tr_loss / n;
      c.loss_read = read_item(c, mean);
      st.logged_grad_norm = read_item(c, st.grad_norm);
      st.tr_loss.sub_(st.tr_loss);
      break;
    }
    case Variant::Deferred: {
      // Wait for the event the step before recorded (its copy is long done: no wait on this
      // step's work; on the first step the event was never recorded and the wait returns at
      // once), read that step's values from host memory, then stage this step's.
      torch::NoGradGuard no_grad;
      if (!st.staged_ready) {
        st.staged_ready = std::make_unique<kernels::detail::StepEvent>(c.device.cuda);
        st.staged = torch::empty({2}, torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(c.device.cuda));
      }
      st.staged_ready->synchronize();
      ++c.syncs.by_fix[kLogging];  // cudaEventSynchronize: a host wait, as the program's event_sync counts it
      if (st.staged_valid) {
        const float* values = st.staged.data_ptr<float>();
        c.loss_read = values[0];
        st.logged_grad_norm = values[1];
      }
      const torch::Tensor values = torch::stack({loss.to(torch::kFloat32), st.grad_norm.to(torch::kFloat32)});
      st.staged.copy_(values, /*non_blocking=*/true);
      st.staged_ready->record();
      st.staged_valid = true;
      break;
    }
  }
}

void torch_step_point(TorchStepContext& c, program::ProgramPoint at) {
  const auto applied = c.options.fix_variant(kLogging);
  if (!applied) return;  // not applied in this run
  const auto v = static_cast<Variant>(*applied);
  State& st = state_of(c);
  if (at == program::ProgramPoint::BeforeOptimizer) {
    // The trainer's max_grad_norm (1.0, transformers' default), in every variant.
    kernels::detail::RangeGuard range(c.ranges, "clip_grad_norm_");
    st.grad_norm = clip_grad_norm(c, 1.0);
    return;
  }
  if (at == program::ProgramPoint::AfterOptimizer) after_optimizer(c, v, st);
}

}  // namespace

void register_logging_torch_step() {
  register_logging_fix_step();
  mutable_fix_spec(kLogging).torch_step_point = torch_step_point;
}

}  // namespace syncscope::fixes::logging
