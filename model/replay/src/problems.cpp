// What a replay graph could not build, or built by inference and anchors, as the warning lines
// predict, diff and analyze print (replay.hpp, ReplayProblems).
#include <fmt/format.h>

#include "syncscope/replay/replay.hpp"

namespace syncscope::replay {

std::vector<std::string> ReplayProblems::describe(const std::string& step_glob) const {
  std::vector<std::string> out;
  if (no_gpu_records) out.push_back("replay: the trace has no GPU records (kernels, copies, memsets): host time only");
  if (no_steps)
    out.push_back(
        fmt::format("replay: no host ranges match the step glob '{}': the whole trace is replayed as one "
                    "window (pass --step-range GLOB)",
                    step_glob));
  if (gpu_without_launch)
    out.push_back(fmt::format(
        "replay: {} GPU record(s) ({} kernel(s), {} copy(ies), {} memset(s)) have a correlation id that points "
        "to no host call of a traced thread (NCCL's own launches, other threads, graph replays): anchored at "
        "their recorded start, so no edit moves them earlier",
        gpu_without_launch, anchored_kernels, anchored_copies, anchored_memsets));
  if (comm_kernels)
    out.push_back(fmt::format(
        "replay: {} communication kernel(s) anchored at their recorded end (their peers' data arrived then: "
        "the other ranks are not replayed), and at least their shortest run after their start",
        comm_kernels));
  if (inferred_deps)
    out.push_back(
        fmt::format("replay: {} GPU activit(ies) started later than their launch and stream allow, right after another "
                    "stream's work: that work taken as what they waited for (inferred)",
                    inferred_deps));
  if (held_anchored)
    out.push_back(fmt::format(
        "replay: {} GPU activit(ies) started later than their launch and stream allow, with no other stream's "
        "work ending right before: held by what the trace does not show, each keeps that delay",
        held_anchored));
  if (held_syncs)
    out.push_back(fmt::format(
        "replay: {} sync call(s) returned later after the work they waited for than the trace's round trips "
        "explain (the thread descheduled, a driver lock): held on the host by what the trace does not show, each "
        "keeps that excess unless an edit removes the sync",
        held_syncs));
  if (inferred_waits)
    out.push_back(
        fmt::format("replay: {} stream wait(s) with no event record in the trace: the stream and the work waited for "
                    "inferred from the timeline",
                    inferred_waits));
  if (thread_handoffs)
    out.push_back(fmt::format(
        "replay: {} hand-off(s) between {} pair(s) of host threads that take turns (their calls never overlap, "
        "each waiting while the other works: PyTorch's autograd thread and the thread that called backward): "
        "edges inferred from the timeline, so an edit on one thread moves the other",
        thread_handoffs, linked_thread_pairs));
  if (overlapping_calls)
    out.push_back(
        fmt::format("replay: {} host call(s) start inside the previous call of their thread (impossible on "
                    "one thread): replayed from the previous call's end",
                    overlapping_calls));
  if (syncs_without_work)
    out.push_back(
        fmt::format("replay: {} sync call(s) whose stream, event or copy is not in the trace: they keep their "
                    "own recorded time and no saving is claimed in a step holding them",
                    syncs_without_work));
  if (waits_without_record)
    out.push_back(
        fmt::format("replay: {} stream wait(s) whose event record is not in the trace and could not be inferred: "
                    "replayed without that cross-stream edge; no saving is claimed in a step holding them",
                    waits_without_record));
  if (cycle_nodes)
    out.push_back(
        fmt::format("replay: {} node(s) in a dependency cycle (inconsistent timestamps) kept at recorded "
                    "times",
                    cycle_nodes));
  return out;
}

}  // namespace syncscope::replay
