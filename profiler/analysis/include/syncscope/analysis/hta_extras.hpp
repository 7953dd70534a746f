// Two analyses Holistic Trace Analysis (HTA) has, as plain results (docs/analysis.md, "Op ->
// kernel launch delay" and "Queue length over time"):
//
// - Kernels and launch delay per ATen op (HTA: hta/analyzers/cuda_kernel_analysis.py,
//   CudaKernelAnalysis.get_aten_op_kernels_and_delay). Each kernel launch (an API call joined
//   by correlation id to a kernel) belongs to the innermost CPU op named "aten::*" on the
//   call's own host thread that wraps the whole call (op start <= call start and call end <=
//   op end). An op instance's kernel sequence is its kernels' names in launch order joined
//   by " -> "; its op delay is its first launch call's start minus the op's start, its launch
//   delay the first kernel's start minus that call's start (HTA's aten_op_delay and
//   runtime_delay of the first launch). Grouped by (op name, kernel sequence): count and
//   integer-ns mean and max of both delays. Computed in aten_op_kernels.cpp.
// - Queue length over time per (device, stream), as change points of two counts: `depth`,
//   ours (launched and not yet finished: +1 at the launch call's start, -1 at the activity's
//   end; StreamQueue's max and mean), and `pending`, HTA's (launched and not yet started: -1
//   at the activity's start; hta/analyzers/trace_counters.py,
//   _get_queue_length_time_series_for_rank). Bounded: a stream with more than
//   kQueueSeriesMaxPoints change points is cut into kQueueSeriesMaxPoints equal buckets over
//   [first change, last change], each holding the maximum of each count in it (peaks kept,
//   dips lost). Time blocked on a full queue: HTA's get_time_spent_blocked_on_full_queue,
//   the time during which `pending` >= the threshold (HTA's max_queue_length, default
//   CUDA_MAX_LAUNCH_QUEUE_PER_STREAM = 1024, hta/common/constants.py), per stream, always
//   over the full series. Computed in queue_series.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/trace/trace.hpp"

namespace syncscope {

// ---- kernels and launch delay per ATen op ---------------------------------------------
struct AtenOpKernelGroup {
  std::string op;       // "aten::mm"
  std::string kernels;  // kernel names in launch order, joined by " -> " (HTA's kernel_sequence)
  std::uint64_t kernels_per_op = 0;
  std::uint64_t count = 0;  // op instances with this sequence (HTA's occurrence_count)
  Ns op_delay_mean_ns = 0;  // op start -> first launch call start (HTA's avg_aten_op_launch_delay)
  Ns op_delay_max_ns = 0;
  Ns launch_delay_mean_ns = 0;  // first launch call start -> its kernel start (HTA's avg_runtime_delay)
  Ns launch_delay_max_ns = 0;
  Ns kernel_ns = 0;  // summed durations of the kernels, all instances
};

struct AtenOpKernels {
  std::vector<AtenOpKernelGroup> groups;   // by count, then kernel_ns, largest first; at most kTopAtenOpGroups
  std::uint64_t group_count = 0;           // distinct (op, sequence) pairs (groups may hold fewer)
  std::uint64_t ops = 0;                   // op instances that launched a kernel
  std::uint64_t launches = 0;              // kernel launches inside an aten op
  std::uint64_t launches_outside_ops = 0;  // kernel launches with no aten op around them on their thread
};

inline constexpr std::size_t kTopAtenOpGroups = 50;

// ---- queue length over time and time blocked on a full queue --------------------------
struct QueuePoint {
  Ns t_ns = 0;
  std::uint64_t depth = 0;    // ours: launched, not finished
  std::uint64_t pending = 0;  // HTA's: launched, not started
};

struct StreamQueueSeries {
  std::int32_t device = -1;
  std::int64_t stream = -1;
  std::vector<QueuePoint> points;   // the step function: each value holds until the next point
  std::uint64_t change_points = 0;  // before bucketing (points.size() when bucket_ns == 0)
  Ns bucket_ns = 0;                 // 0: every change point; else the bucket width (maxima per bucket)
  std::uint64_t max_pending = 0;    // HTA's maximum queue length on this stream
  Ns blocked_ns = 0;                // time with pending >= QueueSeries::threshold
};

struct QueueSeries {
  std::uint64_t threshold = 1024;          // HTA's max_queue_length (CUDA_MAX_LAUNCH_QUEUE_PER_STREAM)
  Ns trace_ns = 0;                         // the trace's span, what blocked fractions are over (HTA: trace duration)
  std::vector<StreamQueueSeries> streams;  // by (device, stream)
};

inline constexpr std::size_t kQueueSeriesMaxPoints = 1000;

}  // namespace syncscope
