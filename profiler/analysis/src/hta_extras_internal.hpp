// The analyses of syncscope/analysis/hta_extras.hpp, one file each.
#pragma once

#include <cstdint>

#include "launch_index.hpp"
#include "syncscope/analysis/hta_extras.hpp"

namespace syncscope::analysis_detail {

void aten_op_kernels(const Trace& trace, const LaunchIndex& launches, AtenOpKernels& out);  // aten_op_kernels.cpp
void queue_series(const Trace& trace, const LaunchIndex& launches, std::uint64_t threshold,
                  QueueSeries& out);  // queue_series.cpp

}  // namespace syncscope::analysis_detail
