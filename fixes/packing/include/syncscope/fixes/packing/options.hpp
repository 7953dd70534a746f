// The packing fix's part of the step options (StepOptions::fix_variants / fix_words, keyed by
// kFix), typed: only this folder and the code that sets up a step read or write it.
#pragma once

#include <string>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::packing {

// The variant the step runs. A packed batch's attention always needs the metadata, so a step
// whose options do not say runs the baseline (rebuild), never "off".
Variant variant(const program::StepOptions& o);
void set_variant(program::StepOptions& o, Variant v);

// How the step program builds the metadata where it is rebuilt or missed
// (fixes.packing.rebuild_form: "reference", the default, or "unsloth_sdpa_mask";
// registry_entry.cpp says what each is). Step programs only: the LibTorch step runs its own code.
std::string rebuild_form(const program::StepOptions& o);
void set_rebuild_form(program::StepOptions& o, const std::string& form);

}  // namespace syncscope::fixes::packing
