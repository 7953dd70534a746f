// The shipped fixes' step-program hooks (FixSpec::build_program_layer and
// build_program_schedule), installed by bind_program_fix_hooks (fix_hooks.cpp). Private to
// syncscope_program.
#pragma once

#include "syncscope/program/program_layer.hpp"

namespace syncscope::program::detail {

// fix_packing_program.cpp: the packed-sequence metadata before each layer's attention.
void packing_program_layer(ProgramLayerBuilder& b, ProgramPoint at);
// packing_unsloth.cpp: fixes.packing.rebuild_form unsloth_sdpa_mask, Unsloth's pre-cache
// metadata and/or SDPA mask build, op by op, each op charged an eager-PyTorch host cost.
void unsloth_precache_rebuild(ProgramLayerBuilder& b, int window, bool metadata, bool mask);
// fix_moe_program.cpp: the routing and expert dispatch of each MoE layer.
void moe_program_layer(ProgramLayerBuilder& b, ProgramPoint at);
// fix_offload_program.cpp: the checkpoint offload and reload choreography, when the options
// offload (false otherwise).
bool offload_program_schedule(const StepOptions& o, ProgramSchedule& out);

}  // namespace syncscope::program::detail
