// The offload fix in the LibTorch reference step (FixSpec::torch_step_setup,
// syncscope/kernels/torch_step_point.hpp): when the step is built, the memory-aware plan and
// the copy/event choreography of the variant (layer_schedule.hpp), the same list its
// program hook (program.cpp) schedules; the step executes it on its copy stream. Built only
// with LibTorch (syncscope_fix_offload_torch).
#include <algorithm>

#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/offload/plan.hpp"
#include "syncscope/kernels/torch_step_point.hpp"
#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::offload {

namespace {

void torch_step_setup(TorchStepSetup& s) {
  program::StepOptions& o = s.options;
  std::optional<Variant> v = variant(o);
  if (!v) return;
  // One layer's checkpoint: its input, T x hidden elements of the compute dtype.
  const double act = static_cast<double>(o.batch.packed_tokens) * static_cast<double>(o.model.hidden_size) *
                     program::dtype_bytes(o.dtype);
  // The device's free memory (after the weights), read once; nullopt on CPU.
  const std::optional<double> free_bytes = kernels::detail::device_free_bytes(s.device);
  // A budget left to the device: its free memory less the reserve; 0 on CPU. Resolved in the
  // options, so build_step_program(options()) plans the same.
  if (budget_bytes(o) < 0) set_budget_bytes(o, free_bytes ? std::max(0.0, *free_bytes - kOffloadReserveBytes) : 0.0);
  // Unsloth double-buffers only with memory for the second buffer (docs/sources.md#offload-double-buffer:
  // > 512 MB free) and falls back to one buffer otherwise; options() then says "single". On CPU: no such check.
  if (v == Variant::Double && free_bytes && *free_bytes < act + kUnslothDoubleBufferFreeBytes) {
    v = Variant::Single;
    set_variant(o, v);
  }
  const double budget = budget_bytes(o);
  s.schedule =
      build_choreography(plan_offload(*v, s.layers, act, budget, prefetch_depth(o), o.first_step, min_bytes(o)));
  // Unsloth's first pass offloads every layer (the run's first step); `prefetch` plans its own.
  if (!o.first_step && v != Variant::Prefetch)
    s.first_step = build_choreography(plan_offload(*v, s.layers, act, budget, prefetch_depth(o), true, min_bytes(o)));
}

}  // namespace

void register_offload_torch_step() {
  register_offload_fix_step();
  mutable_fix_spec(kFix).torch_step_setup = torch_step_setup;
}

}  // namespace syncscope::fixes::offload
