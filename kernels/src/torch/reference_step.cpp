// ReferenceStep: one training step, walking the same choreography list the step program is
// built from: a fix's (its torch_step_setup hook, as build_program_schedule gives the
// program's) or the plain one (build_plain_choreography).
#include <fmt/format.h>

#include <limits>

#include "syncscope/core/error.hpp"
#include "torch/internal.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "cuda/cuda_api.h"
#endif

namespace syncscope::kernels {

using namespace detail;

namespace {
std::uint64_t batch_seed(std::uint64_t seed, int index) {
  return seed ^ (0xD1B54A32D192ED03ull * static_cast<std::uint64_t>(index + 1));
}
}  // namespace

struct ReferenceStep::Impl {
  program::StepOptions opt;
  int layers = 0;
  Ctx ctx;
  SyncCounts syncs;
  int builds = 0;
  Ranges ranges;
  ModelWeights w;
  std::unique_ptr<torch::optim::AdamW> adam;
  program::Choreography choreo;
  std::unique_ptr<CopyStream> engine;
  // The first run()'s schedule when a fix's differs (offload: Unsloth's first pass offloads every
  // layer); later steps keep the other.
  program::Choreography first_choreo;
  std::unique_ptr<CopyStream> first_engine;
  int steps_run = 0;
  // The fixes' LibTorch hooks' state across layers and steps (TorchStepContext,
  // TorchLayerContext: fixes/packing's metadata cache).
  std::map<fixes::Fix, std::any> fix_states;
  int batch = 0;
  std::vector<int> lengths;
  HostBatch host;
  std::uint64_t generation = 0;

  explicit Impl(const program::StepOptions& o) : opt(o) {
    validate(opt);
    layers = program::effective_layers(opt);
    ctx.cuda = opt.device == "cuda";
    if (ctx.cuda) {
      SYNCSCOPE_THROW_IF(
          !cuda_available(),
          "device \"cuda\" requested but no CUDA device is usable (needs LibTorch with CUDA, a CUDA build "
          "of syncscope and a GPU)");
      ctx.device = torch::Device(torch::kCUDA, 0);
    }
    ctx.dtype = parse_dtype(opt.dtype);
    ctx.syncs = &syncs;
    ctx.metadata_builds = &builds;
    ctx.ranges = &ranges;
    ranges.enable_nvtx(opt.nvtx && ctx.cuda);
    w = make_weights(opt, layers, ctx);
    std::vector<torch::Tensor> params;
    for (auto& [name, p] : w.named) params.push_back(p);
    adam = std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(opt.learning_rate).weight_decay(opt.weight_decay));
    setup_schedule();
    load_batch(0);
  }

  // Every registered fix's torch_step_setup: what it resolves from the device, and the layer
  // schedule of the first that reorders the layers (offload's reload choreography); else the
  // plain one.
  void setup_schedule() {
    fixes::TorchStepSetup setup{
        .options = opt, .layers = layers, .device = ctx, .schedule = std::nullopt, .first_step = std::nullopt};
    for (const fixes::FixSpec& f : fixes::fix_registry())
      if (f.torch_step_setup) f.torch_step_setup(setup);
    if (!setup.schedule)  // the step program would reorder the layers: the fix's LibTorch hook is missing
      for (const fixes::FixSpec& f : fixes::fix_registry()) {
        program::ProgramSchedule unused;
        if (f.build_program_schedule && f.build_program_schedule(opt, unused))
          throw Error(
              fmt::format("{} schedules the step program's layers but gave the LibTorch step no schedule "
                          "(its torch_step_setup hook is not installed): call "
                          "fixes::register_shipped_torch_steps() (fixes/shipped) before building a "
                          "ReferenceStep",
                          f.name));
      }
    if (!setup.schedule && opt.training.gradient_checkpointing == "full")
      throw InputError(
          "gradient_checkpointing: full: the LibTorch reference step recomputes layers only under a fix's schedule "
          "(offload; the step programs, the simulator and the memory estimate model full recompute); run it with "
          "--device sim, or measure with gradient_checkpointing: none or offload");
    if (!setup.schedule) {
      choreo = program::build_plain_choreography(layers);
      return;
    }
    const std::int64_t T = opt.batch.packed_tokens, H = opt.model.hidden_size;
    choreo = std::move(*setup.schedule);
    engine = std::make_unique<CopyStream>(choreo, T, H, ctx);
    if (setup.first_step) {
      first_choreo = std::move(*setup.first_step);
      first_engine = std::make_unique<CopyStream>(first_choreo, T, H, ctx);
    }
  }

  void load_batch(int index) {
    batch = index;
    lengths = program::batch_lengths(opt, index);
    long long sum = 0;
    for (int len : lengths) sum += len;
    SYNCSCOPE_INPUT_ERROR_IF(sum != opt.batch.packed_tokens,
                             fmt::format("batch {}: lengths sum to {}, batch.packed_tokens is {}", index, sum,
                                         opt.batch.packed_tokens));
    host = pack_batch(lengths, opt.model.vocab_size, batch_seed(opt.seed, index), ctx.cuda);
  }

  StepResult run() {
    // The first step runs the fix's first-step schedule where it has one, later ones the other.
    const int index = steps_run++;
    const bool first = index == 0 && first_engine != nullptr;
    return run_with(first ? first_choreo : choreo, first ? first_engine.get() : engine.get(), index);
  }

  // Every registered fix's LibTorch hook at a step point, in registry order (the step
  // program's fix_point at the same points).
  static void fix_point(fixes::TorchStepContext& c, program::ProgramPoint at) {
    for (const fixes::FixSpec& f : fixes::fix_registry())
      if (f.torch_step_point) f.torch_step_point(c, at);
  }

  // After backward: the fixes' hooks before the optimizer, AdamW, their hooks after it, and
  // the loss read unless a hook took it (then the loss that hook read, NaN when none).
  double optimizer_and_loss_read(const torch::Tensor& loss, int index) {
    fixes::TorchStepContext c{.options = opt,
                              .parameters = w.named,
                              .loss = loss,
                              .syncs = syncs,
                              .ranges = ranges,
                              .device = ctx,
                              .step = index,
                              .fix_states = fix_states,
                              .loss_read_taken = false,
                              .loss_read = std::nullopt};
    fix_point(c, program::ProgramPoint::BeforeOptimizer);  // gradient clipping (fixes/logging)
    {
      RangeGuard r(ranges, "optimizer");
      adam->step();
    }
    fix_point(c, program::ProgramPoint::AfterOptimizer);  // a trainer's logging (fixes/logging)
    if (c.loss_read_taken) return c.loss_read.value_or(std::numeric_limits<double>::quiet_NaN());
    ++syncs.other;  // aten::item on the loss: D2H + cudaStreamSynchronize
    return loss.item<double>();
  }

  StepResult run_with(const program::Choreography& choreo, CopyStream* engine, int index) {
    syncs = {};
    builds = 0;
    for (auto& [name, p] : w.named) p.mutable_grad().reset();  // set_to_none: no zeroing kernels
    StepResult result;
    torch::Tensor loss;
    {
      RangeGuard step(ranges, "step");
      const PackedBatch b = upload(host, ctx, ++generation);
      ranges.push("forward");
      const torch::Tensor emb = torch::embedding(w.embed, b.input_ids);
      const Rope rope = rope_tables(b.position_ids, opt.model, ctx);
      const bool checkpointed = engine != nullptr;  // a fix's schedule: checkpoints, recomputed in backward
      std::vector<torch::Tensor> acts(static_cast<std::size_t>(layers) + 1), inputs(static_cast<std::size_t>(layers)),
          outs(static_cast<std::size_t>(layers));
      acts[0] = emb.detach();
      torch::Tensor grad;
      bool in_choreo_range = false;
      for (const program::ChoreoStep& s : choreo.steps) {
        const bool is_choreo = s.kind != program::ChoreoKind::ForwardLayer &&
                               s.kind != program::ChoreoKind::BackwardLayer && s.kind != program::ChoreoKind::Head;
        if (is_choreo && !in_choreo_range) ranges.push("offload_reload");
        if (!is_choreo && in_choreo_range) ranges.pop();
        in_choreo_range = is_choreo;
        const auto l = static_cast<std::size_t>(std::max(s.layer, 0));
        switch (s.kind) {
          case program::ChoreoKind::RecordMain: engine->record_main(s.event); break;
          case program::ChoreoKind::RecordCopy: engine->record_copy(s.event); break;
          case program::ChoreoKind::CopyWaits: engine->copy_waits(s.event); break;
          case program::ChoreoKind::MainWaits: engine->main_waits(s.event); break;
          case program::ChoreoKind::OffloadCopy: engine->to_host(s.layer, acts[l]); break;
          case program::ChoreoKind::ReloadCopy: engine->reload(s.layer, s.buffer); break;
          case program::ChoreoKind::ReleaseInput: acts[l] = torch::Tensor(); break;
          case program::ChoreoKind::ForwardLayer: {
            RangeGuard r(ranges, fmt::format("layer_{:02}", s.layer));
            const LayerWeights& lw = w.layers[l];
            if (checkpointed) {
              torch::NoGradGuard no_grad;
              acts[l + 1] = layer_forward(opt, s.layer, lw, acts[l], b, rope, fix_states, ctx);
            } else {
              // Plain autograd, cut per layer so backward can run (and be ranged) layer by layer.
              inputs[l] = acts[l].detach().requires_grad_(true);
              outs[l] = layer_forward(opt, s.layer, lw, inputs[l], b, rope, fix_states, ctx);
              acts[l + 1] = outs[l].detach();
            }
            break;
          }
          case program::ChoreoKind::Head: {
            const torch::Tensor last = acts[static_cast<std::size_t>(layers)].detach().requires_grad_(true);
            loss = head_loss(opt, w, last, b.labels, ctx);
            ranges.pop();  // forward
            ranges.push("backward");
            loss.backward();
            grad = last.grad();
            break;
          }
          case program::ChoreoKind::BackwardLayer: {
            RangeGuard r(ranges, fmt::format("layer_{:02}", s.layer));
            if (checkpointed) {
              // Recompute from the reloaded (or resident) input, then backward through it.
              const torch::Tensor& src = s.buffer >= 0 ? engine->ring(s.buffer) : acts[l];
              const torch::Tensor x = src.detach().requires_grad_(true);
              const torch::Tensor out = layer_forward(opt, s.layer, w.layers[l], x, b, rope, fix_states, ctx);
              torch::autograd::backward({out}, {grad});
              grad = x.grad();
            } else {
              torch::autograd::backward({outs[l]}, {grad});
              grad = inputs[l].grad();
              outs[l] = torch::Tensor();
              inputs[l] = torch::Tensor();
            }
            break;
          }
        }
      }
      if (in_choreo_range) ranges.pop();
      if (emb.requires_grad()) emb.backward(grad);  // a frozen embedding (lora/qlora) gets none
      ranges.pop();                                 // backward
      result.loss = optimizer_and_loss_read(loss, index);
    }
    result.host_syncs = syncs;
    result.metadata_builds = builds;
    result.fix_choices = ctx.fix_choices;
    result.ranges = ranges.take();
    return result;
  }
};

ReferenceStep::ReferenceStep(const program::StepOptions& options) : impl_(std::make_unique<Impl>(options)) {}
ReferenceStep::~ReferenceStep() = default;
ReferenceStep::ReferenceStep(ReferenceStep&&) noexcept = default;
ReferenceStep& ReferenceStep::operator=(ReferenceStep&&) noexcept = default;

StepResult ReferenceStep::run() { return impl_->run(); }
void ReferenceStep::next_batch() { impl_->load_batch(impl_->batch + 1); }
int ReferenceStep::batch_index() const { return impl_->batch; }
const std::vector<int>& ReferenceStep::lengths() const { return impl_->lengths; }
const program::StepOptions& ReferenceStep::options() const { return impl_->opt; }
const program::LayerPlan& ReferenceStep::layer_plan() const { return impl_->choreo.plan; }
void ReferenceStep::record_ranges(bool on) { impl_->ranges.record(on); }

void ReferenceStep::synchronize() {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (impl_->ctx.cuda) check_cuda(ss_cuda_device_synchronize(), "cudaDeviceSynchronize");
#endif
}

namespace {
std::vector<float> to_host(const torch::Tensor& t) {
  if (!t.defined()) return {};
  const torch::Tensor h = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  const float* p = h.data_ptr<float>();
  return {p, p + h.numel()};
}
}  // namespace

std::vector<NamedValues> ReferenceStep::gradients() const {
  std::vector<NamedValues> out;
  for (const auto& [name, p] : impl_->w.named) out.push_back({name, to_host(p.grad())});
  return out;
}

std::vector<NamedValues> ReferenceStep::parameters() const {
  std::vector<NamedValues> out;
  for (const auto& [name, p] : impl_->w.named) out.push_back({name, to_host(p)});
  return out;
}

void ReferenceStep::set_parameters(const std::vector<NamedValues>& values) {
  auto& named = impl_->w.named;
  SYNCSCOPE_INPUT_ERROR_IF(values.size() != named.size(),
                           fmt::format("set_parameters: {} values for {} parameters", values.size(), named.size()));
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < named.size(); ++i) {
    auto& [name, p] = named[i];
    const NamedValues& v = values[i];
    SYNCSCOPE_INPUT_ERROR_IF(v.name != name || static_cast<std::int64_t>(v.values.size()) != p.numel(),
                             fmt::format("set_parameters: entry {} is \"{}\" with {} values, expected \"{}\" with {}",
                                         i, v.name, v.values.size(), name, p.numel()));
    const torch::Tensor src = torch::from_blob(const_cast<float*>(v.values.data()), p.sizes(), torch::kFloat32)
                                  .to(p.device(), p.scalar_type());
    p.copy_(src);
  }
}

const std::any* ReferenceStep::fix_state(fixes::Fix fix) const {
  const auto it = impl_->fix_states.find(fix);
  return it == impl_->fix_states.end() || !it->second.has_value() ? nullptr : &it->second;
}

}  // namespace syncscope::kernels
