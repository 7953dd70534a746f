// The fourth fix, in its own folder: per-step logging syncs. A trainer that logs every step
// (Unsloth's notebooks train with logging_steps = 1) reads the loss and the gradient norm
// back to the host with .item() after the optimizer (Hugging Face transformers,
// src/transformers/trainer.py, Trainer._maybe_log_save_evaluate: `tr_loss_scalar =
// self._nested_gather(tr_loss).mean().item()` and `logs["grad_norm"] =
// grad_norm.detach().item()`, run when control.should_log, i.e. every logging_steps steps):
// two host syncs that wait for the whole backward and optimizer step, after which the GPU
// idles until the host has launched the next step's first kernels.
//
// Variants (baseline first):
//   item      both values read every step (logging_steps = 1);
//   every     accumulated on the device, read once every N steps (the trainer's
//             logging_steps = N; scenario key fixes.logging.logging_steps, default 10);
//   deferred  accumulated on the device, copied non-blocking into pinned memory after an
//             event, read one step later after that event (no wait on the step just issued).
// Every variant clips the gradients (clip_grad_norm_, the trainer's max_grad_norm) before the
// optimizer, so all three compute the same update; only the reads differ.
//
// Everything this fix is lives here: its registry entry, the step-program operators, the
// LibTorch step's operations (src/torch_step.cpp), the trace detector and closed form
// (predict --trace; and from values: --logging-read-ms, --logging-steps), its what-if edits on a replayed trace
// (logging-every[:N], logging-deferred), and its tests. register_logging_fix() adds it to the registry (idempotent);
// the CLI and the Python module call it at start.
#pragma once

#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::fixes::logging {

// The registry id of this fix (after the three shipped with the first registry).
inline constexpr Fix kLogging = static_cast<Fix>(3);
// fixes.logging.logging_steps when the scenario does not give it (Hugging Face's
// TrainingArguments default is 500; 10 is the common fine-tuning notebook choice).
inline constexpr int kDefaultLoggingSteps = 10;

// The fix with the hooks a step needs (its step half, syncscope_fix_logging_step: identity,
// step options, program operators), without the model's; register_shipped_fix_steps() calls
// it. Idempotent.
void register_logging_fix_step();
// The step half and the model's hooks (syncscope_fix_logging: detector, closed form, predict
// options, replay edits). Idempotent.
void register_logging_fix();
// register_logging_fix_step() and the fix's LibTorch hook (FixSpec::torch_step_point: the clip
// before AdamW, the reads after it, in the reference step). Defined in
// syncscope_fix_logging_torch, built only with LibTorch; the measured backend calls it at load
// (through register_shipped_torch_steps()), as do the fix's LibTorch tests. Idempotent.
void register_logging_torch_step();

}  // namespace syncscope::fixes::logging
