// Sync points, bubbles, copy/compute overlap and GPU busy time, for a whole trace and per
// step and layer range. Plain result structs: printing lives in reports/.
//
// Definitions (README "Definitions" repeats them; tests/analysis pins them):
// - A sync point is one episode of a host thread blocking until the GPU finishes work,
//   found from host API calls (runtime and driver, any _ptsz/_ptds/_vN form; the CUPTI
//   callback id names a call whose name is missing):
//   cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cuCtxSynchronize,
//   cuStreamSynchronize, cuEventSynchronize; a synchronous cudaMemcpy*/cuMemcpy* between host
//   and device (device-to-device and peer copies are not: CUDA docs, "API synchronization
//   behavior", say no host-side synchronization is performed for them); a *Async memcpy
//   whose GPU copy record (joined by correlation id) is device-to-host into PAGEABLE memory.
//   Such a copy immediately followed (the next sync-relevant call of the same thread: a
//   sync, copy, launch, memset or stream-wait) by a synchronize of the same stream or of
//   the device is ONE sync point (merged_copy; PyTorch's .item()/.tolist()/nonzero() into
//   pageable memory). A pinned copy followed by a stream sync is one sync point: the sync.
//   cudaStreamWaitEvent is not a host sync (SyncStats::stream_wait_events). Query calls
//   (cudaStreamQuery, cudaEventQuery) are not, with one exception: a cudaEventQuery (or
//   cuEventQuery, hipEventQuery) for which the profiler wrote an Event Sync record (joined
//   by correlation id; Kineto writes one, CUPTI does by default) is a poll of the GPU from
//   the host and counts as a sync point (SyncPoint::polling); consecutive polling queries of
//   one thread, with no other sync-relevant call between them, are one sync point from the
//   first query's start to the last one's end. Neither is cudaGraphLaunch. A sync call made
//   inside another API call of the same thread (the driver call under a runtime call) is part
//   of that call. HIP's calls by HIP's documented semantics (hipDeviceSynchronize,
//   hipStreamSynchronize, hipEventSynchronize, synchronous hipMemcpy* and
//   hipMemcpyWithStream between host and device; hipStreamWaitEvent a stream wait; queries
//   never). A copy's direction: its GPU copy record, else its "kind" argument, else its name.
//   One rule for copies the trace does not decide: a synchronous copy of unknown direction,
//   and an async device-to-host copy into host memory of unknown kind not followed by a sync
//   of its stream, are not counted (a warning counts them); such an async copy followed by a
//   sync of its stream is one sync point with it.
//   CUPTI/Kineto sync records are evidence (they give a call's stream and device by
//   correlation id), never counted themselves.
// - Each sync point has a cause: the outermost enclosing `aten::` CPU op on its thread
//   (e.g. aten::item, aten::nonzero), else the innermost enclosing CPU op, else the API
//   name (SyncPoint::api keeps the API either way); its host blocked time (the API call's
//   duration; for a merged copy+sync, from the copy call's start to the sync's end); and
//   its bubble on the sync's device d (device-wide syncs, and an unknown device in a
//   multi-device trace: the largest over devices with activity; an unknown device in a
//   one-device trace: that device). With t the time the sync returned and A the kernels,
//   copies and memsets on every stream of d: 0 when some activity runs at t
//   (start < t < end: work was queued), else (start of the first activity starting at or
//   after t) - (end of the last activity ending at or before t), and 0 when either does
//   not exist in the trace (a sync at the end of a trace has bubble 0).
// - Copy/compute overlap per direction (HtoD, DtoH): of the union of that direction's copy
//   intervals per device, the part during which at least one kernel runs on a stream of the
//   same device other than the copy's stream; fraction = overlapped/copy (0: no copies).
// - GPU busy per device: the union of kernel, copy and memset intervals; totals sum devices.
// - Compute and communication: a kernel whose name starts with "nccl" or "rccl" is
//   communication (NCCL/RCCL collectives and point-to-point; Holistic Trace Analysis's rule),
//   every other kernel compute. Per device, compute_kernel_ns and CommStats::kernel_ns are
//   the unions of each kind; CommStats::overlapped_ns the part of communication during which
//   a compute kernel runs on the same device (any stream), overlap_fraction = overlapped/comm.
// - Windows: the whole trace; steps (host ranges, any kind but GpuUserAnnotation, whose
//   name matches step_glob) and layers (layer_glob). A sync point belongs to the window its
//   start lies in ([start, end)); GPU time is clipped to the window; kernels and copies are
//   counted by start.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/analysis/critical_path.hpp"
#include "syncscope/analysis/gpu_analyses.hpp"
#include "syncscope/analysis/idle.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope {

inline constexpr int kAnalysisSchemaVersion = 1;

struct AnalysisOptions {
  std::string step_glob = "ProfilerStep#*";  // ranges that delimit steps
  std::string layer_glob;                    // ranges that delimit layers; empty: none
  std::optional<std::int64_t> pid;           // restrict host threads to this process
  // Time blocked on a full launch queue: HTA's max_queue_length (hta_extras.hpp).
  std::uint64_t queue_full = 1024;
  KernelSequenceOptions sequences;  // frequent kernel sequences (kernel_sequences.hpp)
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
  std::string api;           // e.g. "cudaStreamSynchronize"; for the .item() pattern the sync API
  std::string cause;         // "aten::item" when a CPU op encloses it, else the API name (see above)
  bool merged_copy = false;  // a D2H-pageable copy and its stream sync counted as one
  bool polling = false;      // a run of cudaEventQuery calls with Event Sync records (above)
  std::uint32_t polls = 0;   // polling: the query calls in the run
  std::uint64_t correlation = 0;
};

struct OverlapStats {
  Ns copy_ns = 0;        // union of copy intervals of this direction
  Ns overlapped_ns = 0;  // part of it with a kernel running on another stream
  double fraction = 0;   // overlapped_ns / copy_ns, 0 when no copies
};

struct CommStats {
  Ns kernel_ns = 0;             // union of communication kernel intervals
  std::uint64_t kernels = 0;    // communication kernels, counted by start
  Ns overlapped_ns = 0;         // part of kernel_ns with a compute kernel running on the device
  double overlap_fraction = 0;  // overlapped_ns / kernel_ns, 0 when no communication
};

struct SyncStats {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> by_cause;  // cause -> count
  std::map<std::string, std::uint64_t> by_api;    // API -> count
  Ns blocked_ns = 0;
  Ns bubble_ns = 0;
  std::uint64_t stream_wait_events = 0;  // cudaStreamWaitEvent calls (not host syncs)
  std::uint64_t polling = 0;             // of total: cudaEventQuery polling episodes
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
  Ns kernel_ns = 0;          // union of kernel intervals
  Ns compute_kernel_ns = 0;  // union of kernels that are not communication
  CommStats comm;            // communication (NCCL/RCCL) kernels
  std::uint64_t kernels = 0;
  std::uint64_t memcpys = 0;
  std::uint64_t memcpy_bytes = 0;
  SyncStats syncs;
  OverlapStats h2d;
  OverlapStats d2h;
  IdleBreakdown idle;  // over the GPU window inside this window (idle.hpp)
  IdleVerdict verdict = IdleVerdict::NoGpuActivity;
  // Through host and GPU (critical_path.hpp); filled by the model's replay, which the CLI
  // runs after analyze(): absent from analyze() alone. Totals: summed over steps.
  std::optional<CriticalPath> critical_path;
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
  Distribution compute_kernel_ns;
  Distribution comm_kernel_ns;
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
  std::string source;       // file name or description
  AnalysisOptions options;  // what produced this result (step/layer globs, pid)
  TraceMetadata meta;
  WindowStats totals;
  std::vector<WindowStats> steps;
  std::vector<WindowStats> layers;
  StepSummary step_summary;                  // n == 0 when there are no steps
  StepSummary layer_summary;                 // the same over layer windows; n == 0 when there are none
  std::vector<TimelineIdle> idle_by_device;  // each device's whole GPU window
  std::vector<TimelineIdle> idle_by_stream;  // each (device, stream)'s
  GpuAnalyses gpu;                           // kernels, launch delay, queues, ... (gpu_analyses.hpp)
  std::vector<SyncPoint> sync_points;        // all, in time order
  std::vector<Offender> worst;               // causes by blocked+bubble time, largest first
  std::vector<std::string> warnings;         // dropped records, missing categories, ...
};

AnalysisResult analyze(const Trace& trace, const AnalysisOptions& options = {});

// Building blocks, exposed for the model, the simulator's checks and tests.
std::vector<SyncPoint> find_sync_points(const Trace& trace, const AnalysisOptions& options = {});
Distribution distribution(std::vector<double> values);

// A communication kernel (NCCL/RCCL) by its name; see "Compute and communication" above.
bool is_communication_kernel(std::string_view name);

// Union length of [start,end) intervals (need not be sorted).
Ns union_length(std::vector<std::pair<Ns, Ns>> intervals);

}  // namespace syncscope
