// The offload fix, in its own folder: the reload of CPU-offloaded checkpoint activations in
// the backward. One reload buffer (the baseline: copy, then compute, L(c+g)), double
// buffering (Unsloth's fix: c + (L-1)max(c,g) + g; docs/sources.md#offload-double-buffer), or a ring of k+1
// buffers k layers ahead (ours: `prefetch`, scenario keys fixes.offload.prefetch_depth and
// prefetch_budget_gib).
//
// Here: its registry entry and hooks (src/registry_entry.cpp), the step's reload schedule
// (src/program.cpp: the plan, plan.hpp, and its copy/event choreography, src/choreography.cpp,
// which the LibTorch step shares), the trace detector (src/detect.cpp), its closed forms and
// predictions (closed_form.hpp, src/closed_form.cpp), `predict`'s options for it and what a
// scenario implies for them (src/predict.cpp), the blog's figures and their reproduction
// (published.hpp, src/published.cpp) and the what-if edits double-buffer and prefetch[:K]
// (src/replay_edit.cpp), and, built only with LibTorch (syncscope_fix_offload_torch), the
// reference step's schedule (src/torch_step.cpp: the plan with the budget read from the
// device, which the step's copy stream executes: kernels/src/torch/offload.cpp); its part of
// the step options, typed (options.hpp), and its memory-aware plan (plan.hpp). The layers hold
// only the layer loop's primitives its choreography is written in (layer_schedule.hpp) and the
// copy stream that runs any such loop (kernels/src/torch/offload.cpp).
#pragma once

#include "syncscope/fixes/fix_spec.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace syncscope::fixes::offload {

// This fix's id in the registry (fix_spec.hpp: Fix).
inline constexpr Fix kFix = static_cast<Fix>(1);
// Its variants, in FixSpec::variants order: the first is the baseline.
enum class Variant : std::uint8_t { Single = 0, Double = 1, Prefetch = 2 };
// A variant's name, from the registry.
const std::string& variant_name(Variant v);
// The variant of a name; InputError naming the accepted names for one the fix does not have.
Variant to_variant(std::string_view name);

// Adds the fix to the registry with the hooks a step needs (its step half,
// syncscope_fix_offload_step: identity, scenario keys, step options, the reload schedule),
// without the model's; register_shipped_fix_steps() calls it. Idempotent.
void register_offload_fix_step();
// The step half and the model's hooks (syncscope_fix_offload: detector, closed form, predict
// options, published figures, replay edits); register_shipped_fixes() calls it. Idempotent.
void register_offload_fix();
// Installs its LibTorch hook (torch_step_setup; syncscope_fix_offload_torch, built only with
// LibTorch) over the step half, registering that first; register_shipped_torch_steps() calls
// it. Idempotent.
void register_offload_torch_step();

}  // namespace syncscope::fixes::offload
