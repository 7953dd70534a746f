// The offload fix's memory-aware plan: which layers offload their checkpoint and how many
// reload buffers the variant's ring holds; and the variant's copy/event choreography for a
// plan, the layer loop (syncscope/program/layer_schedule.hpp) the step program and the
// LibTorch step both run.
#pragma once

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/program/layer_schedule.hpp"

namespace syncscope::fixes::offload {

// Device memory held back from the plan when the budget is read from the device:
// optimizer state, gradients and the non-checkpointed activations of one layer live
// there. 8 GiB is a conservative default for the reduced-L scenarios on 80-141 GB GPUs.
// A plan: the layers' (which keep their input on the device, the ring's buffers, the
// look-ahead) and the variant that reloads them.
struct OffloadPlan : program::LayerPlan {
  Variant variant = Variant::Single;
};

inline constexpr double kOffloadReserveBytes = 8.0 * 1024 * 1024 * 1024;

// The memory-aware choice. `activation_bytes` is one layer's checkpoint (its input,
// T*hidden*dtype bytes); `budget_bytes` the device bytes the checkpoints may use, ring
// included. single/double follow Unsloth's checkpointer (unsloth_zoo gradient_checkpointing.py,
// UnslothCheckpointFunction): a layer input of at most 2 MiB is never offloaded
// (`min_offload_bytes`, Unsloth's 2 MiB by default), and the last layer's input stays on the device from the second
// step on (`first_pass` false; its FIRST_PASS offloads every layer once to count them).
// prefetch (ours) keeps every layer resident when budget >= L*a; otherwise a ring of k+1
// buffers (k clamped to [1, offloaded layers]) and as many of the LAST layers resident as the
// rest of the budget holds: backward needs the last layers first, when no reload could have
// been hidden yet. Deterministic; throws InputError for an unknown variant or non-positive sizes.
OffloadPlan plan_offload(Variant variant, int layers, double activation_bytes, double budget_bytes, int prefetch_depth,
                         bool first_pass = false, double min_offload_bytes = kUnslothMinOffloadBytes);

// The step's layer loop for `plan` (choreography.cpp), its events numbered from 0:
//   single   one device buffer; before each reload the copy stream waits for everything
//            queued on the main stream so far: T ~ L*(c+g) (L-1 offloaded layers, as
//            Unsloth keeps the last one);
//   double   two device buffers with one "free" event each; a reload waits only for its
//            own buffer's last use: T ~ c + (L-1)*max(c,g) + g;
//   prefetch ours: a ring of k+1 buffers with an explicit look-ahead of k layers, the
//            first k reloads issued before the LM head runs, the last layers resident as
//            the plan says.
// (docs/sources.md#offload-double-buffer, "Double-buffered checkpoint reload"; unsloth-zoo
// PR 534.) Throws syncscope::Error for a plan without layers, or offloading without buffers.
program::Choreography build_choreography(const OffloadPlan& plan);

}  // namespace syncscope::fixes::offload
