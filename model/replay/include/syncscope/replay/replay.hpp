// Replay of a trace as a dependency graph: identity replay checks the graph
// against the run it came from; an edit (remove sync points, the three fixes) changes the
// graph and replays it, so a what-if rests on the user's own trace, not on a closed form.
//
// The graph (model/README.md, "Replay"), from any trace we read (Kineto JSON, nsys SQLite,
// our own; they all arrive as one Trace):
// - Host: per thread its top-level API calls in order (a driver call inside a runtime call
//   is part of it), each with its recorded duration and the recorded gap after the previous
//   one (the framework's own host time: Python, aten dispatch).
// - GPU: each kernel, copy and memset starts at max(its launch call's start + the launch
//   latency of its kind, the end of the previous activity on its stream, the end of the
//   previous copy on its device's copy engine for that direction (one engine per
//   direction), the work an event wait makes its stream wait for); it lasts its recorded
//   duration.
// - Sync points (stream, device, event syncs; blocking copies): the call ends at
//   max(start + its own time, end of the GPU work it waits for + the round trip).
// What an edit can change is computed, never copied: only host-call durations (sync waits
// excluded), GPU durations and host gaps come from the trace; the round trip r and the
// launch latencies are single medians over the whole trace (so identity replay is not
// exact by construction, and its error is a measurement of the graph).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/units.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::replay {

inline constexpr std::uint32_t kNoNode = 0xFFFF'FFFFu;
// A launch call that lasts longer than this was blocked, the GPU's launch queue full: a launch
// takes 2-40 us of host time when it is not (the fixtures' medians are 4-9 us); issue 36 saw
// 100 us - 5 ms launches on a full queue.
inline constexpr Ns kBlockedLaunchNs = 100'000;
// GPU work held this long or longer past what its launch and stream allow, with nothing in the
// trace to explain it, waited for something outside the trace (another process, a peer, lost
// records): it is anchored at its recorded start. Shorter holds are a launch's own delay (a
// kernel's first launch, a driver lock: microseconds to hundreds of them) and move with it.
inline constexpr Ns kHeldExternalNs = 1'000'000;

struct ReplayOptions {
  std::string step_glob = "ProfilerStep#*";  // host ranges that delimit steps
  std::optional<std::int64_t> pid;           // restrict host threads to this process
};

struct ReplayNode {
  enum class Kind : std::uint8_t { Call = 0, Kernel = 1, Copy = 2, Memset = 3 };
  // Fields ordered so that no padding is left between them (88 bytes a node, was 96; the eight
  // one-byte fields fill the first word): a 200 MB trace makes a few hundred thousand nodes.
  Kind kind = Kind::Call;
  CopyKind direction = CopyKind::Unknown;  // copies
  bool sync = false;                       // a host call that blocks until `waits` finish
  bool unbuilt = false;                    // an edge it needs could not be built (see ReplayProblems)
  bool removed = false;                    // an edit removed it (time 0, order kept)
  // A communication kernel (NCCL/RCCL, is_communication_kernel): its peers' data arrived when it
  // ended, so it cannot end before its recorded end (an external anchor) nor before its start
  // plus its transfer time (own_ns: the shortest run of that kernel in the trace, a lower bound).
  bool comm = false;
  // GPU work that started later than its launch and stream allow, by something the trace does not
  // show: it keeps that delay (gap_ns) after whatever binds it in the replay, or, a hold of
  // kHeldExternalNs or more, is anchored at its recorded start.
  // A sync call: it returned later after the work it waited for than the trace's round trips
  // explain (ReplayGraph::sync_holds): held on the host by what the trace does not show (the
  // thread descheduled, a driver lock); it keeps that excess after the work, unless removed.
  bool held = false;
  // A host call released by a call of another thread (ReplayGraph::handoffs; graph_threads.cpp):
  // it starts no earlier than that call's end plus the recorded offset, and after its own
  // thread's previous call with no gap (its thread waited for the hand-off).
  bool handoff = false;
  std::uint32_t record = 0;      // index into trace.api_calls / kernels / memcpys / memsets
  std::int32_t thread = -1;      // host: index into ReplayGraph::threads
  std::int32_t lane = -1;        // GPU: index into ReplayGraph::lanes
  std::uint32_t prev = kNoNode;  // host: previous call of its thread; GPU: previous on its stream
  // Copy: the previous copy on its device's engine, same direction. Launch call: the GPU activity
  // whose start frees the launch-queue slot it needs (ReplayGraph::launch_queue_depth).
  std::uint32_t engine_prev = kNoNode;
  std::uint32_t launch = kNoNode;  // GPU: the top-level call that launched it
  Ns rec_start = 0, rec_end = 0;
  Ns own_ns = 0;                     // host: the call's own time (a sync's wait excluded); GPU: its duration
  Ns gap_ns = 0;                     // host: recorded gap after the previous call of its thread; GPU: a held delay
  std::vector<std::uint32_t> waits;  // sync call: GPU work it waits for; GPU: event-wait sources
};

// One sync point of the analysis (analysis.hpp's definition) as graph nodes.
struct ReplaySync {
  std::uint32_t node = kNoNode;       // the blocking call
  std::uint32_t copy_call = kNoNode;  // a merged copy's call (the .item() pattern), else none
  std::vector<std::uint32_t> copies;  // device-to-host copies that only serve this sync
  std::string cause, api;
  std::int64_t pid = -1, tid = -1;
  Ns rec_start = 0;
  Ns bubble_ns = 0;  // the analysis's bubble (closed form: a removed sync saves its bubble)
};

struct ReplayStepWindow {
  std::string name;
  std::int32_t thread = -1;  // the host thread whose range it is (-1: none of ours)
  Ns rec_start = 0, rec_end = 0;
};

// What the graph could not build, counted; replay goes on without those edges.
struct ReplayProblems {
  std::uint64_t gpu_without_launch = 0;  // GPU records whose correlation points to no call
  // ... of which kernels, copies, memsets: anchored at their recorded start (no host call of a
  // traced thread issued them: NCCL's own launches, other threads, graph replays).
  std::uint64_t anchored_kernels = 0, anchored_copies = 0, anchored_memsets = 0;
  std::uint64_t comm_kernels = 0;    // communication kernels, their ends anchored
  std::uint64_t inferred_deps = 0;   // GPU activities that started right after another stream's work: edge inferred
  std::uint64_t held_anchored = 0;   // GPU activities held by an unseen wait, anchored (ReplayNode::held)
  std::uint64_t held_syncs = 0;      // sync calls that returned late, held on the host (ReplayGraph::sync_holds)
  std::uint64_t inferred_waits = 0;  // stream waits with no event record, edge inferred from the timeline
  // Host threads of one process that take turns (graph_threads.cpp: PyTorch's autograd thread and
  // the thread that called backward), and the hand-offs between them: edges inferred.
  std::uint64_t linked_thread_pairs = 0, thread_handoffs = 0;
  std::uint64_t overlapping_calls = 0;     // calls starting inside the previous call of their thread
  std::uint64_t syncs_without_work = 0;    // sync calls whose stream, event or copy was not found
  std::uint64_t waits_without_record = 0;  // stream waits whose event record was not found
  std::uint64_t cycle_nodes = 0;           // nodes left in a dependency cycle (kept at recorded times)
  bool no_gpu_records = false;
  bool no_steps = false;
  std::vector<std::string> describe(const std::string& step_glob) const;  // one line per problem
};

// A hand-off between host threads that take turns (graph_threads.cpp): call `to` starts no
// earlier than the end of call `from`, of another thread, plus gap_ns (the recorded offset).
struct ReplayHandoff {
  std::uint32_t to = kNoNode, from = kNoNode;
  Ns gap_ns = 0;
};

struct ReplayGraph {
  std::vector<ReplayNode> nodes;
  std::vector<std::pair<std::int64_t, std::int64_t>> threads;  // (pid, tid)
  std::vector<std::pair<std::int32_t, std::int64_t>> lanes;    // (device, stream)
  std::vector<std::vector<std::uint32_t>> thread_calls;        // per thread, its calls in order
  std::vector<ReplaySync> syncs;
  std::vector<ReplayHandoff> handoffs;     // sorted by (to, from); ReplayNode::handoff marks each `to`
  std::vector<ReplayStepWindow> steps;     // the step ranges, or one window over the whole trace
  Ns round_trip_ns = 0;                    // median (sync end - end of the work it waited for), syncs that waited
  Ns sync_own_ns = 0;                      // median duration of syncs that did not wait: a waited sync's own time
  Ns launch_latency_ns[4] = {0, 0, 0, 0};  // by Kind: median (start - launch start), launch-bound activities
  std::uint64_t round_trip_samples = 0;
  // Syncs that returned later after their work than round_trip_ns + kWaitSlackNs + 3 x the round
  // trips' median absolute deviation: (node, the excess over round_trip_ns), sorted by node. In
  // the replay such a sync returns that much after the round trip (ReplayNode::held).
  std::vector<std::pair<std::uint32_t, Ns>> sync_holds;
  // The launch queue, per device: a launch call cannot return while this many activities it
  // issued earlier have not started (fitted: the most ever left pending at a launch call's
  // return; 0: no launch call blocked in the trace, so the queue is not modelled).
  std::uint32_t launch_queue_depth = 0;
  std::uint64_t blocked_launches = 0;  // launch calls over kBlockedLaunchNs that returned with work pending
  ReplayProblems problems;
  std::string step_glob;
};

ReplayGraph build_replay_graph(const Trace& trace, const ReplayOptions& options = {});
// The same with the analysis's sync points of this trace already found (AnalysisResult::
// sync_points, or find_sync_points, with the same pid as `options`): not found again.
ReplayGraph build_replay_graph(const Trace& trace, const ReplayOptions& options,
                               const std::vector<SyncPoint>& sync_points);
// The same for a caller done with the trace: it is consumed (left empty), its ranges released
// as soon as the steps are read from them and the rest once the graph is built, so that the
// graph does not add to the trace's memory (analyze's removal savings).
ReplayGraph build_replay_graph(Trace&& trace, const ReplayOptions& options, const std::vector<SyncPoint>& sync_points);

struct ReplayTimes {
  std::vector<Ns> start, end;
  // The predecessor that set the node's time: for a sync call the awaited node that set its
  // end (kNoNode: its own time did); for the others the node that set the start.
  std::vector<std::uint32_t> binding;
  std::uint64_t cycle_nodes = 0;  // nodes in a dependency cycle, timed in recorded order
};

ReplayTimes run_replay(const ReplayGraph& graph);

// The order run_replay times the graph's events in: Kahn's topological order of each node's
// start (calls) and end, first in first out; a cycle's events last, in recorded order. It
// depends on the edges only, not on `removed` or the durations, so an edit that changes just
// those (remove-syncs, removal_savings) replays with the order made once:
// run_replay(g, replay_order(g)) == run_replay(g) for as long as g's edges stay as they were.
struct ReplayOrder {
  std::vector<std::uint32_t> events;  // 2i: node i's start (calls only), 2i + 1: node i's end
  std::uint64_t cycle_nodes = 0;      // ReplayTimes::cycle_nodes
};
ReplayOrder replay_order(const ReplayGraph& graph);
ReplayTimes run_replay(const ReplayGraph& graph, const ReplayOrder& order);

struct ReplayedStep {
  std::string name;
  Ns measured_ns = 0;
  Ns replayed_ns = 0;
  std::uint64_t unbuilt = 0;  // nodes in the step with an edge that could not be built
  double error() const;       // (replayed - measured) / measured, 0 when measured is 0
};

// Replayed host time of a recorded time `t` on `thread`: from the call it lies in, or the
// gap it lies in (offset from the previous call's end, never past the next call's start).
Ns replayed_time(const ReplayGraph& graph, const ReplayTimes& times, std::int32_t thread, Ns t);
std::vector<ReplayedStep> replay_steps(const ReplayGraph& graph, const ReplayTimes& times);

// One step's critical path, from its end backwards, as runs of one thread or one stream.
struct CriticalSegment {
  std::string where;  // "host tid 123", "GPU 0 stream 7", "sync aten::item (cudaStreamSynchronize)"
  std::string what;   // first..last record names
  Ns start_ns = 0;    // offset from the step's start (replayed)
  Ns duration_ns = 0;
};
std::vector<CriticalSegment> critical_path(const Trace& trace, const ReplayGraph& graph, const ReplayTimes& times,
                                           std::size_t step);
// Sync points whose wait sets the time of the step's critical path (indices into graph.syncs).
std::vector<std::size_t> critical_syncs(const ReplayGraph& graph, const ReplayTimes& times, std::size_t step);

// ---- edits (model/replay/src/edits.cpp) ----
// Spellings (model/README.md, "Replay"):
//   remove-syncs:cause=GLOB | remove-syncs:api=GLOB | remove-syncs:range=GLOB | remove-syncs:all
//   pin-memory | pin-memory:h2d | pin-memory:d2h (model/replay/src/edit_copies.cpp)
//   and each registered fix's own (FixSpec::what_if_edits, in its folder: packing-cache,
//   packing-device, double-buffer, prefetch[:K], moe-sorted, moe-device, logging-every[:N],
//   logging-deferred)
struct WhatIfEdit {
  enum class Kind : std::uint8_t {
    RemoveSyncs,
    PinMemory,  // every copy with a pageable host side pinned (selector "h2d", "d2h" or "": both)
    Registered  // a fix's edit (FixSpec::what_if_edits, syncscope/replay/replay_edit.hpp)
  };
  Kind kind = Kind::RemoveSyncs;
  std::string selector;  // "cause", "api", "range", "all" (RemoveSyncs); "h2d", "d2h", "" (PinMemory)
  std::string pattern;   // the glob
  std::string text;      // as given
  // Registered: the fix and the variant its spelling models, and the text after ':' ("").
  fixes::Fix fix{};  // a registered fix's id (fix_spec.hpp)
  std::string variant;
  std::string argument;
};
// Throws InputError naming the accepted forms.
WhatIfEdit parse_what_if(const std::string& text);
// The accepted forms, for messages and --help ("remove-syncs:cause=GLOB, ... or pin-memory[:h2d|:d2h]").
std::string what_if_forms();
// The registered fixes' edit spellings (FixSpec::what_if_edits), registry order.
std::vector<std::string> registered_what_if_edits();

struct EditResult {
  std::size_t selected = 0;      // sync points (or copies, for double-buffer) the edit changed
  std::string nothing_selected;  // when selected == 0: the selector and what the trace holds
  std::vector<std::string> notes;
};
EditResult apply_what_if(const Trace& trace, ReplayGraph& graph, const WhatIfEdit& edit,
                         const model::TracePredictOptions& predict_options);

// ---- the report (model/replay/src/report.cpp) ----
struct WhatIfOutcome {
  std::string edit;
  bool applicable = true;
  std::string reason;           // not applicable: why
  Ns replayed_step_ns = 0;      // median over steps, edited replay
  std::optional<Ns> saving_ns;  // median over steps of (identity replay - edited), steps fully built
  std::optional<double> closed_form_saving_ns;
  std::string closed_form;                     // which form
  std::vector<std::string> off_critical_path;  // "8 x aten::item (cudaStreamSynchronize) per step"
  std::vector<std::string> notes;
};

// The identity replay's goal (model/README.md, "Replay"): |error| of the step time, as
// fractions, median over the replayed steps and the largest.
inline constexpr double kIdentityGoalMedian = 0.01;
inline constexpr double kIdentityGoalMax = 0.05;

struct ReplayReport {
  std::vector<ReplayedStep> steps;
  // Over the `error_steps` steps with a measured time (0: nothing replayed, and the two
  // figures mean nothing: printers say so and write none).
  double median_abs_error = 0, max_abs_error = 0;  // fractions
  std::size_t error_steps = 0;
  bool within_goal() const {
    return error_steps > 0 && median_abs_error <= kIdentityGoalMedian && max_abs_error <= kIdentityGoalMax;
  }
  Ns round_trip_ns = 0;
  std::vector<std::string> warnings;
  std::vector<WhatIfOutcome> what_if;
  std::vector<CriticalSegment> critical_path;  // of the median step, identity replay
  std::string critical_step;
  std::vector<CriticalSegment> edited_critical_path;  // of the same step, first explicit edit
};

// Identity replay, then each edit (empty: every fix variant's edit, each "not applicable"
// when it selects nothing). An explicit edit that selects nothing throws InputError naming
// the selector and what the trace holds. `closed_forms` is predict_from_trace's report.
ReplayReport replay_what_if(const Trace& trace, const std::vector<std::string>& edits,
                            const model::TracePredictOptions& predict_options,
                            const model::PredictionReport& closed_forms);

// predict --trace as the CLI and the Python module both run it: the closed forms
// (predict_from_trace), the replay with `edits` beside them (replay_what_if), then, given a
// step time, every speedup against it (replace_step_time, after the replay: the closed forms
// the replay prints beside its edits are the trace's own).
struct TracePredictionWithReplay {
  model::PredictionReport prediction;
  ReplayReport replay;
};
TracePredictionWithReplay predict_with_replay(const Trace& trace, const model::TracePredictOptions& options,
                                              const std::string& source, const std::vector<std::string>& edits,
                                              const std::optional<model::Interval>& step_time_ns);

// The prediction's JSON with "replay" and "what_if" added (names in the header comment of
// model/replay/src/report.cpp; errors as fractions, times in ns).
std::string prediction_with_replay_to_json(const model::PredictionReport& prediction, const ReplayReport& replay);

// ---- what each cause costs (model/replay/src/causes.cpp): analyze's worst offenders ----
struct CauseCost {
  std::string cause;
  double syncs_per_step = 0;
  std::optional<Ns> saving_ns;  // median over fully built steps of the step time saved
                                // by replaying without that cause's syncs; none when no
                                // step was fully built
};
// The `max_causes` causes with the most sync points, each replayed away on its own.
std::vector<CauseCost> replay_cost_by_cause(const Trace& trace, const ReplayOptions& options,
                                            std::size_t max_causes = 10);
// The named causes, in that order, each replayed away on its own (one graph for all).
std::vector<CauseCost> replay_cost_of_causes(const Trace& trace, const ReplayOptions& options,
                                             const std::vector<std::string>& causes);
// analyze's worst offenders (result.worst, by blocked + bubble time): the first `max_causes`
// replayed away one by one, with the analysis's own step glob and pid. The analysis library
// cannot call the model: analyze (the CLI and the Python module) calls this and hands the
// result to the printers (reports/analysis_printers.hpp, CauseRemovals).
std::vector<CauseCost> removal_savings(const AnalysisResult& result, const Trace& trace, std::size_t max_causes);
// The same for a caller done with the trace: it is consumed while the graph is built (left
// empty; build_replay_graph's Trace&& form), since the replays read only the graph.
std::vector<CauseCost> removal_savings(const AnalysisResult& result, Trace&& trace, std::size_t max_causes);

}  // namespace syncscope::replay
