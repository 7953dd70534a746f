// The forward pass's time per step, from a trace (forward and whole-step speedups
// both, as the blog reports them).
#pragma once

#include <string_view>

#include "syncscope/model/results.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::model {

// Each host range named `range_name` (the reference step's NVTX "forward", one per step)
// lasts from its start to the later of its end and the end of the last GPU activity
// (kernel, copy, memset) launched by an API call inside it: the forward pass as the GPU
// finishes it, not only as the host issues it. Returns the median with the min..max
// interval and n = ranges found; an Estimate with n = 0 when the trace has none.
Estimate forward_time_estimate(const Trace& trace, std::string_view range_name = "forward");

}  // namespace syncscope::model
