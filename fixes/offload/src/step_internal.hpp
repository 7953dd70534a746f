// The offload fix's step half's private declarations (offload.hpp): what the step's hooks
// share, without the model's (internal.hpp adds those for the model half).
#pragma once

#include "syncscope/core/bounds.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/program/program_layer.hpp"

namespace syncscope::fixes::offload::detail {

// Its settings in the step options (FixSpec::step_number_keys; options.hpp reads them):
// prefetch's look-ahead (the scenario key's range and default), the plan's device budget
// in bytes (no default: absent leaves it to the device) and Unsloth's minimum offloaded size.
inline const FixSpec::NumberKey kStepPrefetchDepth{"prefetch_depth", bounds::kPrefetchDepth, true, "", 2};
inline const FixSpec::NumberKey kStepBudgetBytes{
    "budget_bytes", {0, 1e15, "more device memory than any GPU has (1 PB)"}, false, "bytes", 0};
inline const FixSpec::NumberKey kStepMinBytes{"min_bytes",
                                              {0, 1e15, "a layer input larger than any GPU's memory (1 PB)"},
                                              false,
                                              "bytes",
                                              kUnslothMinOffloadBytes};

// program.cpp: the checkpoint offload and reload choreography, when the options offload
// (false otherwise).
bool program_schedule(const program::StepOptions& o, program::ProgramSchedule& out);

}  // namespace syncscope::fixes::offload::detail
