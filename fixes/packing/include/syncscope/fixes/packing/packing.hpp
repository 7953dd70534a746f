// The packing fix, in its own folder: packed-sequence metadata (cu_seqlens, max_seqlen and the
// packed [T,T] attention mask) rebuilt in every attention layer with host syncs (Unsloth's
// baseline), cached once per batch (Unsloth's fix; docs/sources.md#packing-cache), or built on
// the device from lengths the packer already knows on the host (ours: no sync).
//
// Variants (baseline first): rebuild, cached, device. Scenario key fixes.packing.rebuild_form
// (how the step program builds the baseline; scenario.hpp).
//
// Here: its registry entry and hooks (src/registry_entry.cpp), the step program's operators
// before each layer's attention (src/program.cpp, src/unsloth_rebuild.cpp), the trace detector
// (src/detect.cpp, over each layer's rebuild ranges and syncs: src/layer_syncs.cpp), its closed forms and predictions
// (closed_form.hpp, src/closed_form.cpp), `predict`'s options for it and what a scenario implies for them
// (src/predict.cpp), the blog's figures and their reproduction (published.hpp, src/published.cpp) and the what-if edits
// packing-cache and packing-device (src/replay_edit.cpp), and, built only with LibTorch (syncscope_fix_packing_torch:
// torch_step.hpp, src/torch_step.cpp), the attention mask in the reference step, with its CUDA kernel
// (src/cuda/packing_mask.cu, syncscope_fix_packing_cuda). Its part of the step options, typed: options.hpp; the CPU
// reference of the metadata and mask: reference.hpp; the windows a step builds them for: visit_windows.hpp. Nothing of
// it is left in the layers (docs/fix-registry.md).
#pragma once

#include "syncscope/fixes/fix_spec.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace syncscope::fixes::packing {

// This fix's id in the registry (fix_spec.hpp: Fix).
inline constexpr Fix kFix = static_cast<Fix>(0);
// Its variants, in FixSpec::variants order: the first is the baseline.
enum class Variant : std::uint8_t { Rebuild = 0, Cached = 1, Device = 2 };
// A variant's name, from the registry.
const std::string& variant_name(Variant v);
// The variant of a name; InputError naming the accepted names for one the fix does not have.
Variant to_variant(std::string_view name);

// Adds the fix to the registry with the hooks a step needs (its step half,
// syncscope_fix_packing_step: identity, step options, program operators), without the
// model's; register_shipped_fix_steps() calls it. Idempotent.
void register_packing_fix_step();
// The step half and the model's hooks (syncscope_fix_packing: detector, closed form, predict
// options, published figures, replay edits); register_shipped_fixes() calls it. Idempotent.
void register_packing_fix();
// Installs its LibTorch hooks (syncscope_fix_packing_torch, built only with LibTorch) over the
// step half, registering that first; register_shipped_torch_steps() calls it. Idempotent.
void register_packing_torch_step();

}  // namespace syncscope::fixes::packing
