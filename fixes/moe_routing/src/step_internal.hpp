// The MoE routing fix's step half's private declarations (moe_routing.hpp): what the step's
// hooks share, without the model's (internal.hpp adds those for the model half).
#pragma once

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/program/program_layer.hpp"

namespace syncscope::fixes::moe_routing::detail {

// Its word in the step options (FixSpec::step_word_keys; options.hpp reads it).
inline constexpr const char* kExpertGemmKey = "expert_gemm";

// program.cpp: the routing and expert dispatch of each MoE layer.
void program_layer(program::ProgramLayerBuilder& b, program::ProgramPoint at);

}  // namespace syncscope::fixes::moe_routing::detail
