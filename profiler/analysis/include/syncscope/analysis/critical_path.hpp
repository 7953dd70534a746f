// The critical path of a step through host and GPU: a plain result struct that `analyze`
// carries per step (WindowStats::critical_path). The profiler library only holds it; the
// path is computed over the replay graph by the model (model/include/syncscope/model/
// critical_path.hpp, which the CLI calls), so the analysis library does not depend on the
// model.
//
// Definitions (docs/analysis.md, "Critical path", repeats them):
// - The replay graph (model/README.md, "Replay") has host calls in thread order with the
//   recorded gaps between them, launch edges (call start -> GPU activity start, plus the
//   trace's median launch latency), stream order, copy-engine order, stream-wait-event edges
//   and sync edges (end of the awaited GPU work + the trace's median round trip -> the sync
//   call's end). Identity replay times every node from its predecessors.
// - The step's critical path: from the end of the last host call that starts inside the
//   step, back along the edge that set each node's time (its binding), to the step's start.
//   Every nanosecond of [step start, that end] is attributed to exactly one of:
//     host_ns       host calls' own time and the framework time between calls on the path,
//                   and the step's host time before its thread's first call
//     gpu_ns        kernels, copies and memsets on the path (and their stream-order gaps)
//     launch_ns     launch edges: from a launch call's start to its activity's start
//     sync_wait_ns  sync edges: from the end of the awaited GPU work to the sync's return
//     other_ns      before a GPU activity that has neither a launch call nor a predecessor
//   so host + gpu + launch + sync_wait + other == length, exactly, in integer ns.
// - Times are the identity replay's, not the recorded ones: the replay reproduces each step
//   within its measured error (predict --trace prints it), so length_ns is close to, not
//   equal to, the step's recorded duration.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/core/units.hpp"

namespace syncscope {

enum class CriticalKind : std::uint8_t { Host = 0, Gpu = 1, Launch = 2, SyncWait = 3, Other = 4 };

// A run of the path on one place: consecutive pieces of one kind on one thread, stream or
// sync call. In the totals, runs with the same kind, place and names summed over steps.
struct CriticalRun {
  CriticalKind kind = CriticalKind::Host;
  std::string where;  // "host tid 12", "GPU 0 stream 7", "sync aten::item (cudaStreamSynchronize)"
  std::string what;   // first .. last record name of the run
  Ns start_ns = 0;    // offset from the step's replayed start (per step; 0 in the totals)
  Ns duration_ns = 0;
  std::uint64_t count = 1;  // runs summed (totals)
};

struct CriticalPath {
  Ns length_ns = 0;
  Ns host_ns = 0;
  Ns gpu_ns = 0;
  Ns launch_ns = 0;
  Ns sync_wait_ns = 0;
  Ns other_ns = 0;
  std::uint64_t sync_edges = 0;  // sync calls whose wait set their time on the path
  std::uint64_t steps = 1;       // steps summed (totals)
  std::vector<CriticalRun> top;  // the longest runs, longest first (at most kCriticalTopRuns)
};

inline constexpr std::size_t kCriticalTopRuns = 5;

std::string_view critical_kind_name(CriticalKind k);  // "host", "gpu", "launch", "sync_wait", "other"

}  // namespace syncscope
