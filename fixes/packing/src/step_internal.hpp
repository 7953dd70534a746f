// The packing fix's step half's private declarations (packing.hpp): what the step's hooks
// share, without the model's (internal.hpp adds those for the model half).
#pragma once

#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/program/program_layer.hpp"

namespace syncscope::fixes::packing::detail {

// fixes.packing.rebuild_form's words, the default first (step_entry.cpp says what each is).
inline const std::vector<std::string> kRebuildForms = {"reference", "unsloth_sdpa_mask"};
// Its key, in the scenario and in the step options (StepOptions::fix_words).
inline constexpr const char* kRebuildFormKey = "rebuild_form";

// program.cpp: the packed-sequence metadata before each layer's attention.
void program_layer(program::ProgramLayerBuilder& b, program::ProgramPoint at);
// unsloth_rebuild.cpp: fixes.packing.rebuild_form unsloth_sdpa_mask, Unsloth's pre-cache
// metadata and/or SDPA mask build, op by op, each op charged an eager-PyTorch host cost.
void unsloth_precache_rebuild(program::ProgramLayerBuilder& b, int window, bool metadata, bool mask);

}  // namespace syncscope::fixes::packing::detail
