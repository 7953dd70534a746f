// Sync points, bubbles, copy/compute overlap and GPU busy time, for a whole trace and per
// step and layer range. Plain result structs: printing lives in reports/.
//
// Definitions (README "Definitions" repeats them; tests pin them):
// - A sync point is one episode of a host thread blocking until the GPU finishes work:
//   cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cuCtxSynchronize,
//   cuStreamSynchronize, cuEventSynchronize (and their _ptsz/_v2 forms); a synchronous
//   cudaMemcpy/cuMemcpy* involving the device; a cudaMemcpyAsync from device into pageable
//   host memory. A device-to-pageable copy immediately followed by a synchronize of the same
//   stream on the same thread (PyTorch's .item()/.tolist()/nonzero() pattern) is ONE sync
//   point. cudaStreamWaitEvent is not a host sync (counted separately). Query calls
//   (cudaStreamQuery, cudaEventQuery) are not syncs.
// - Each sync point has a cause (the API, and the innermost enclosing CPU op when the trace
//   has them, e.g. aten::item), its host blocked time (the API call's duration), and its
//   bubble: from the end of the last GPU activity before the sync returned to the start of
//   the first GPU activity after it returned, on all streams of that device (0 when GPU work
//   was already queued, i.e. some activity overlaps the sync's return).
// - Copy/compute overlap per direction: of the time copies of that direction run (union of
//   their intervals), the part during which at least one kernel runs on another stream of
//   the same device.
// - GPU busy per device: the union of kernel, copy and memset intervals.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/trace/trace.hpp"

namespace syncscope {

inline constexpr int kAnalysisSchemaVersion = 1;

struct AnalysisOptions {
  std::string step_glob = "ProfilerStep#*";  // ranges that delimit steps
  std::string layer_glob;                    // ranges that delimit layers; empty: none
  std::optional<std::int64_t> pid;           // restrict host threads to this process
};

struct SyncPoint {
  std::int64_t pid = -1;
  std::int64_t tid = -1;
  std::int32_t device = -1;
  std::int64_t stream = -1;  // -1: device-wide
  Ns start = 0;              // host blocked from..to (the blocking API call(s))
  Ns end = 0;
  Ns blocked_ns = 0;
  Ns bubble_ns = 0;
  std::string api;    // e.g. "cudaStreamSynchronize"; for the .item() pattern the sync API
  std::string cause;  // "aten::item" when a CPU op encloses it, else the API name
  bool merged_copy = false;  // a D2H-pageable copy and its stream sync counted as one
  std::uint64_t correlation = 0;
};

struct OverlapStats {
  Ns copy_ns = 0;        // union of copy intervals of this direction
  Ns overlapped_ns = 0;  // part of it with a kernel running on another stream
  double fraction = 0;   // overlapped_ns / copy_ns, 0 when no copies
};

struct SyncStats {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> by_cause;  // cause -> count
  std::map<std::string, std::uint64_t> by_api;    // API -> count
  Ns blocked_ns = 0;
  Ns bubble_ns = 0;
  std::uint64_t stream_wait_events = 0;  // cudaStreamWaitEvent calls (not host syncs)
};

// One window of the trace: the whole trace, a step or a layer.
struct WindowStats {
  std::string name;
  std::int32_t index = 0;  // position among its kind (step number, layer occurrence)
  Ns start = 0;
  Ns end = 0;
  Ns duration_ns = 0;
  Ns gpu_busy_ns = 0;  // over all devices' unions, summed
  std::map<std::int32_t, Ns> gpu_busy_by_device;
  Ns kernel_ns = 0;  // union of kernel intervals
  std::uint64_t kernels = 0;
  std::uint64_t memcpys = 0;
  std::uint64_t memcpy_bytes = 0;
  SyncStats syncs;
  OverlapStats h2d;
  OverlapStats d2h;
};

// median/p10/p90 of one metric over steps (linear interpolation between order statistics).
struct Distribution {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  double min = 0;
  double max = 0;
  std::size_t n = 0;
};

struct StepSummary {
  Distribution duration_ns;
  Distribution gpu_busy_ns;
  Distribution syncs;
  Distribution sync_blocked_ns;
  Distribution sync_bubble_ns;
  Distribution h2d_overlap_fraction;
  Distribution d2h_overlap_fraction;
};

struct Offender {  // a cause ranked by the time it costs
  std::string cause;
  std::uint64_t count = 0;
  Ns blocked_ns = 0;
  Ns bubble_ns = 0;
};

struct AnalysisResult {
  int schema_version = kAnalysisSchemaVersion;
  std::string source;  // file name or description
  TraceMetadata meta;
  WindowStats totals;
  std::vector<WindowStats> steps;
  std::vector<WindowStats> layers;
  StepSummary step_summary;  // n == 0 when there are no steps
  std::vector<SyncPoint> sync_points;  // all, in time order
  std::vector<Offender> worst;         // causes by blocked+bubble time, largest first
  std::vector<std::string> warnings;   // dropped records, missing categories, ...
};

AnalysisResult analyze(const Trace& trace, const AnalysisOptions& options = {});

// Building blocks, exposed for the model, the simulator's checks and tests.
std::vector<SyncPoint> find_sync_points(const Trace& trace, const AnalysisOptions& options = {});
Distribution distribution(std::vector<double> values);

// Union length of [start,end) intervals (need not be sorted).
Ns union_length(std::vector<std::pair<Ns, Ns>> intervals);

}  // namespace syncscope
