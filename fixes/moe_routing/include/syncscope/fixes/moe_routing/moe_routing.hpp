// The MoE routing fix, in its own folder: routing each MoE layer's (token, expert) pairs to
// the experts with one `nonzero` per expert (the baseline: E host syncs per layer), by one
// stable argsort + bincount (Unsloth's fix: 3 syncs; docs/sources.md#moe-routing), or on the
// device with the per-expert counts never read back (ours: no sync).
//
// Here: its registry entry and hooks (src/registry_entry.cpp), the step program's routing
// and expert dispatch (src/program.cpp), the trace detector (src/detect.cpp), its closed forms
// and predictions (closed_form.hpp, src/closed_form.cpp), `predict`'s options for it and what
// a scenario implies for them (src/predict.cpp) and the what-if edits moe-sorted and
// moe-device (src/replay_edit.cpp). Still in the layers (docs/fix-registry.md): StepOptions::moe,
// the LibTorch code (kernels/src/torch/moe.cpp, grouped_gemm.cpp) and the CUDA histogram kernel.
#pragma once

#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::fixes::moe_routing {

// Adds the fix to the registry with its hooks (idempotent); register_shipped_fixes() calls it.
void register_moe_routing_fix();

}  // namespace syncscope::fixes::moe_routing
