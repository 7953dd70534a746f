// Which attention windows a step's packing metadata is built for, in the order the step
// issues the builds: what the cached variant's one-entry cache sees.
#pragma once

#include <vector>

#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::packing {

// The sliding window (0: full attention) of each packing-metadata build in the order the
// step issues them: forward layers 0..L-1, then each checkpoint recompute in the backward's
// order when a fix's schedule checkpoints (offload), walking the same layer schedule as the
// step program (program::fix_program_schedule). predict --trace gets it through this fix's
// trace_predict_options hook (TracePredictOptions::packing_visit_windows); the forecasts count
// Unsloth's one-entry mask cache's misses from it (closed_form.hpp: packing_mask_cache_misses).
std::vector<int> visit_windows(const program::StepOptions& o);

}  // namespace syncscope::fixes::packing
