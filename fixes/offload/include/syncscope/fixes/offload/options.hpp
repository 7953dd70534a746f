// The offload fix's part of the step options (StepOptions::fix_variants / fix_numbers, keyed
// by kFix), typed: only this folder and the code that sets up a step read or write it.
#pragma once

#include <optional>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/offload/offload.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::offload {

// Unsloth's default reload schedule for runs whose fix under test is not offload (its
// gradient checkpointer double-buffers since unsloth-zoo PR 534).
inline constexpr Variant kUnslothDefaultReload = Variant::Double;

// Unsloth's checkpointer offloads a layer input only when it is larger than 2 MiB
// (unsloth_zoo/gradient_checkpointing.py: MINIMUM_SIZE = 2 MiB / element size, compared
// with the element count), and double-buffers only with memory for the second buffer
// (docs/sources.md#offload-double-buffer: enabled with > 512 MB free; it falls back to one
// buffer on out-of-memory).
inline constexpr double kUnslothMinOffloadBytes = 2.0 * 1024 * 1024;
inline constexpr double kUnslothDoubleBufferFreeBytes = 512.0 * 1024 * 1024;

// The reload schedule; nullopt: the step offloads no checkpoint (set_variant(o, nullopt)
// removes the fix from the step).
std::optional<Variant> variant(const program::StepOptions& o);
void set_variant(program::StepOptions& o, std::optional<Variant> v);

// `prefetch`'s look-ahead k over a ring of k+1 buffers (fixes.offload.prefetch_depth; 2 when
// the options do not say).
int prefetch_depth(const program::StepOptions& o);
void set_prefetch_depth(program::StepOptions& o, int k);

// Device bytes the memory-aware plan may use for resident layer inputs beyond the ring;
// < 0 when the options leave it to the device (the LibTorch step reads cudaMemGetInfo's
// free bytes minus kOffloadReserveBytes; step programs and CPU take 0: every layer
// offloaded). set_budget_bytes with a negative value leaves it to the device again.
double budget_bytes(const program::StepOptions& o);
void set_budget_bytes(program::StepOptions& o, double bytes);

// single/double: a layer input of at most this many bytes stays on the device (Unsloth's
// MINIMUM_SIZE, kUnslothMinOffloadBytes when the options do not say; tests with tiny shapes
// set 0).
double min_bytes(const program::StepOptions& o);
void set_min_bytes(program::StepOptions& o, double bytes);

}  // namespace syncscope::fixes::offload
