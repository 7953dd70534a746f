// The offload fix's memory-aware plan: which layers offload their checkpoint and how many
// reload buffers the variant's ring holds. The kernels layer's choreography builder
// (syncscope/program/offload_schedule.hpp) turns a plan into the step's copy/event steps.
#pragma once

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/program/offload_schedule.hpp"

namespace syncscope::fixes::offload {

// Device memory held back from the plan when the budget is read from the device:
// optimizer state, gradients and the non-checkpointed activations of one layer live
// there. 8 GiB is a conservative default for the reduced-L scenarios on 80-141 GB GPUs.
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
program::OffloadPlan plan_offload(OffloadVariant variant, int layers, double activation_bytes, double budget_bytes,
                                  int prefetch_depth, bool first_pass = false,
                                  double min_offload_bytes = kUnslothMinOffloadBytes);

}  // namespace syncscope::fixes::offload
