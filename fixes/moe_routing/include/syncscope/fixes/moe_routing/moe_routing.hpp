// The MoE routing fix, in its own folder: routing each MoE layer's (token, expert) pairs to
// the experts with one `nonzero` per expert (the baseline: E host syncs per layer), by one
// stable argsort + bincount (Unsloth's fix: 3 syncs; docs/sources.md#moe-routing), or on the
// device with the per-expert counts never read back (ours: no sync).
//
// Here: its registry entry and hooks (src/registry_entry.cpp), the step program's routing
// and expert dispatch (src/program.cpp), the trace detector (src/detect.cpp), its closed forms
// and predictions (closed_form.hpp, src/closed_form.cpp), `predict`'s options for it and what
// a scenario implies for them (src/predict.cpp) and the what-if edits moe-sorted and
// moe-device (src/replay_edit.cpp), and, built only with LibTorch (syncscope_fix_moe_routing_torch:
// torch_step.hpp, src/torch_step.cpp, src/torch_grouped_gemm.cpp), the routing and experts in
// the reference step, with its CUDA kernel (src/cuda/moe_histogram.cu,
// syncscope_fix_moe_routing_cuda), and which expert GEMM "device" can run here
// (src/torch_expert_gemm.cpp); its part of the step options, typed (options.hpp); its CPU
// reference (reference.hpp); what a run says about routing on an MoE model, tested or not (its
// expert GEMM, asked of the measured backend through FixSpec::torch_device_choice, the padding
// price, the untested loop's syncs: src/run.cpp). The step reports the expert GEMM it ran as
// its fix_choices entry (StepResult::choice(kFix)).
#pragma once

#include "syncscope/fixes/fix_spec.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace syncscope::fixes::moe_routing {

// This fix's id in the registry (fix_spec.hpp: Fix).
inline constexpr Fix kFix = static_cast<Fix>(2);
// Its variants, in FixSpec::variants order: the first is the baseline.
enum class Variant : std::uint8_t { Loop = 0, Sorted = 1, Device = 2 };
// A variant's name, from the registry.
const std::string& variant_name(Variant v);
// The variant of a name; InputError naming the accepted names for one the fix does not have.
Variant to_variant(std::string_view name);

// Adds the fix to the registry with the hooks a step needs (its step half,
// syncscope_fix_moe_routing_step: identity, step options, program operators), without the
// model's; register_shipped_fix_steps() calls it. Idempotent.
void register_moe_routing_fix_step();
// The step half and the model's hooks (syncscope_fix_moe_routing: detector, closed form,
// predict options, the run's notes, replay edits); register_shipped_fixes() calls it.
// Idempotent.
void register_moe_routing_fix();
// Installs its LibTorch hooks (syncscope_fix_moe_routing_torch, built only with LibTorch) over
// the step half, registering that first; register_shipped_torch_steps() calls it. Idempotent.
void register_moe_routing_torch_step();

}  // namespace syncscope::fixes::moe_routing
