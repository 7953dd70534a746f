// Hand-offs between host threads that take turns, inferred from the timeline (replay.hpp,
// ReplayHandoff; model/README.md "Replay").
//
// Why there are edges between threads: `loss.backward()` on the main thread does not run the
// backward pass there. PyTorch's autograd engine (torch/csrc/autograd/engine.cpp) hands the
// graph task to the ready queue of the device's worker thread ("CUDA ... device threads ...
// are spinning threads waiting for works on their device", the note on `worker_device`), and
// the caller blocks in `Engine::execute` on the graph task's future until that thread has run
// it (PyTorch blog, "How Computational Graphs are Executed in PyTorch", 2022-06-27, for v1.11).
// So the backward's launches come from another thread, released by the main thread's call and
// releasing it in turn; none of this is a CUDA call, so nothing else in the graph orders them.
//
// The rule, the same for any pair of threads and no name matched (the hand-off leaves no
// record of its own in nsys exports or Kineto traces; Kineto's "fwdbwd" flows tie forward ops to
// their backward ops, not the release of the backward's thread, and we do not read them): two
// threads of one process TAKE TURNS when, with their top-level calls merged in order of start
// into runs of one thread,
//   - no call of one overlaps a call of the other: at every switch of thread the new run's first
//     call starts at or after the end of every call of the run before it; and
//   - the one waits while the other works: over the runs with calls of the other thread on both
//     sides, the median run lasts at least kHandoffCover of the other thread's gap around it (the
//     backward runs fill 71-99% of the main thread's gaps around them on the real traces we hold:
//     the mnist nsys pair, the ResNet-50 Kineto traces, the two NCCL rank traces);
//   - and there is at least one such run.
// A thread with calls of its own at its own times (a DataLoader's pin-memory thread, NCCL's
// watchdog, a CUDA graph capture on another thread) overlaps the other thread's calls somewhere,
// or its calls are short against the gaps they fall into: not linked. On the rank traces, every
// pair but (main, autograd) fails the first condition.
//
// For a pair that takes turns, each switch is an edge: the new run's first call starts no earlier
// than the end of the call before the switch plus the recorded offset between them (the caller's
// own time up to the hand-off and the wake-up), instead of after its own thread's previous call
// plus the recorded gap (its thread was waiting, not working). An edit that moves the main
// thread's call before backward moves the backward's launches; one that shortens the backward
// moves the main thread's return from it.
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "graph_internal.hpp"

namespace syncscope::replay::graph_detail {
namespace {

// The share of the other thread's gap a run must last (median over the runs) to count as that
// thread waiting for it: half. The real hand-offs fill 71-99% (above); an independent thread's
// short calls in the main thread's gaps fill a few percent.
constexpr double kHandoffCover = 0.5;

struct Run {
  std::uint32_t first = kNoNode;  // its first call
  Ns start = 0, end = 0;          // first call's start, latest end among its calls
  std::uint32_t last_ending = kNoNode;
};

// The runs of the two threads' calls (each list in order of start) merged in order of start;
// empty as soon as two calls of different threads overlap (a busy independent thread does early,
// so most pairs cost little).
std::vector<Run> turns(const ReplayGraph& g, const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  std::vector<Run> runs;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const bool take_a = j == b.size() || (i < a.size() && std::tie(g.nodes[a[i]].rec_start, a[i]) <
                                                              std::tie(g.nodes[b[j]].rec_start, b[j]));
    const std::uint32_t x = take_a ? a[i++] : b[j++];
    const ReplayNode& n = g.nodes[x];
    if (runs.empty() || g.nodes[runs.back().first].thread != n.thread) {
      if (!runs.empty() && n.rec_start < runs.back().end) return {};  // overlaps the run before
      runs.push_back({x, n.rec_start, n.rec_end, x});
      continue;
    }
    Run& r = runs.back();
    if (n.rec_end >= r.end) {
      r.end = n.rec_end;
      r.last_ending = x;
    }
  }
  return runs;
}

bool take_turns(const std::vector<Run>& runs) {
  std::vector<double> cover;
  for (std::size_t k = 1; k + 1 < runs.size(); ++k) {
    const Ns gap = runs[k + 1].start - runs[k - 1].end;  // the other thread's gap around run k
    cover.push_back(gap > 0 ? static_cast<double>(runs[k].end - runs[k].start) / static_cast<double>(gap) : 1.0);
  }
  if (cover.empty()) return false;
  const auto mid = cover.begin() + static_cast<std::ptrdiff_t>(cover.size() / 2);
  std::nth_element(cover.begin(), mid, cover.end());
  return *mid >= kHandoffCover;
}

}  // namespace

void link_threads(ReplayGraph& g) {
  // Threads by process, in order of index (so the pairs, and the edges, come out in one order).
  std::map<std::int64_t, std::vector<std::int32_t>> by_pid;
  for (std::size_t t = 0; t < g.threads.size(); ++t)
    if (!g.thread_calls[t].empty()) by_pid[g.threads[t].first].push_back(static_cast<std::int32_t>(t));
  for (const auto& [pid, threads] : by_pid)
    for (std::size_t i = 0; i < threads.size(); ++i)
      for (std::size_t j = i + 1; j < threads.size(); ++j) {
        const auto& a = g.thread_calls[static_cast<std::size_t>(threads[i])];
        const auto& b = g.thread_calls[static_cast<std::size_t>(threads[j])];
        const std::vector<Run> runs = turns(g, a, b);
        if (!take_turns(runs)) continue;
        ++g.problems.linked_thread_pairs;
        for (std::size_t k = 1; k < runs.size(); ++k) {
          const std::uint32_t from = runs[k - 1].last_ending, to = runs[k].first;
          g.handoffs.push_back({to, from, g.nodes[to].rec_start - g.nodes[from].rec_end});
          g.nodes[to].handoff = true;
          g.nodes[to].gap_ns = 0;  // its thread waited for the hand-off, it did not work
          ++g.problems.thread_handoffs;
        }
      }
  std::sort(g.handoffs.begin(), g.handoffs.end(), [](const ReplayHandoff& x, const ReplayHandoff& y) {
    return std::tie(x.to, x.from) < std::tie(y.to, y.from);
  });
}

}  // namespace syncscope::replay::graph_detail
