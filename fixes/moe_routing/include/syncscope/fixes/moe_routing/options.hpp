// The MoE routing fix's part of the step options (StepOptions::fix_variants / fix_words,
// keyed by kFix), typed: only this folder and the code that sets up a step read
// or write it.
#pragma once

#include <string>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::moe_routing {

// How MoE "device" runs its expert GEMMs without a host read, the default first:
//   "auto":    grouped where it is available, else padded. Step programs (the simulator)
//              take "auto" as grouped: the H200/LibTorch 2.11 target has it;
//   "grouped": one grouped GEMM per projection over the T*k rows sorted by expert, group
//              ends read from device memory (at::_grouped_mm: LibTorch >= 2.8, CUDA,
//              compute capability >= 9.0, bf16, H and I multiples of 8);
//   "padded":  capacity-padded batched GEMM, every expert padded to T rows (E/k times
//              the expert FLOPs; runs anywhere).
inline const std::vector<std::string> kExpertGemms = {"auto", "grouped", "padded"};

// predict --trace's experts per token k (--top-k), its key in TracePredictOptions::fix_numbers
// under this fix's name: given when our sync-free variant pads every expert to T rows (where
// at::_grouped_mm is not available), so its expert GEMMs cost E/k times the baseline's.
inline constexpr const char* kTopKTraceKey = "top_k";

// The routing the step runs on a MoE model; the baseline (loop) when the options do not say.
Variant variant(const program::StepOptions& o);
void set_variant(program::StepOptions& o, Variant v);

// One of kExpertGemms ("auto" when the options do not say).
std::string expert_gemm(const program::StepOptions& o);
void set_expert_gemm(program::StepOptions& o, const std::string& gemm);

}  // namespace syncscope::fixes::moe_routing
