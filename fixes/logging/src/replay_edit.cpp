// The logging fix's what-if edits on a replayed trace (FixSpec::replay_edit):
//   logging-every[:N]  the reads of N - 1 of every N iterations go (the trainer's
//                      logging_steps = N: the scenario's in a run, else 10; the reads of
//                      iterations N, 2N, ... stay);
//   logging-deferred   every iteration's reads go (the values are read one step late, after
//                      an event the step before recorded, long finished).
// The reads are those predict --trace finds (predict.cpp: .item() syncs after the iteration's
// last optimizer range). Removing one removes its wait (and the copy that only serves it),
// as remove-syncs does; the host op around it keeps its own time, and the replay computes
// what the GPU and the next step's launches gain.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "internal.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::fixes::logging::detail {

namespace {

// N of logging-every:N: a whole number of steps, 2 to 100000 (1 would read every step).
int window_of(const ReplayEditContext& ctx) {
  const std::string& a = ctx.edit.argument;
  if (a.empty()) return static_cast<int>(logging_steps_of(ctx.options));
  const bool digits = a.size() <= 6 && std::all_of(a.begin(), a.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int n = digits ? std::stoi(a) : 0;
  SYNCSCOPE_INPUT_ERROR_IF(n < 2 || n > 100000,
                           fmt::format("--what-if '{}': N is the steps per read, a whole number from 2 to 100000 "
                                       "(N = 1 reads every step: the baseline)",
                                       ctx.edit.text));
  return n;
}

}  // namespace

void replay_edit(ReplayEditContext& ctx) {
  const model::detail::TraceFacts& facts = ctx.facts();
  const bool every = ctx.edit.variant == "every";
  const int n = every ? window_of(ctx) : 1;
  if (!facts.have_iterations()) {
    ctx.result.nothing_selected =
        fmt::format("--what-if {}: no iterations (step ranges or repeated optimizer ranges) to find logging reads in",
                    ctx.edit.text);
    return;
  }
  std::vector<std::vector<const SyncPoint*>> reads;
  for (const model::detail::Window& w : facts.iterations) reads.push_back(reads_in(facts, w));
  const auto with_reads =
      static_cast<std::size_t>(std::count_if(reads.begin(), reads.end(), [](const auto& r) { return !r.empty(); }));
  if (with_reads == 0) {
    ctx.result.nothing_selected =
        fmt::format("--what-if {}: no .item() sync after the optimizer in any of {} iterations ({})", ctx.edit.text,
                    reads.size(), facts.iteration_source);
    return;
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const bool logging_step = every && (i + 1) % static_cast<std::size_t>(n) == 0;
    for (const SyncPoint* r : reads[i]) {
      if (logging_step) {
        ++kept;
        continue;
      }
      (void)ctx.remove_sync(*r);
    }
  }
  auto& notes = ctx.result.notes;
  if (!per_step_pattern(with_reads, reads.size()))
    notes.push_back(fmt::format("reads after the optimizer in {} of {} iterations only: not a per-step pattern",
                                with_reads, reads.size()));
  if (!every) {
    notes.push_back(
        "the deferred read's wait on the step before's event (finished: host time only) and its 8-byte pinned copy "
        "are not charged");
    return;
  }
  notes.push_back(
      fmt::format("N = {}: the reads of every {}th iteration stay ({} kept); the device-side "
                  "accumulation (one small kernel per step) is not charged",
                  n, n, kept));
  if (reads.size() < static_cast<std::size_t>(n))
    notes.push_back(
        fmt::format("the trace holds {} iterations, fewer than N: none of its reads stays, so the "
                    "median step saves S; over a long run a step saves S (N - 1) / N",
                    reads.size()));
  const int closed_n = static_cast<int>(logging_steps_of(facts.opt));
  if (n != closed_n) {
    double s = 0;
    for (const auto& r : reads)
      for (const SyncPoint* x : r) s += read_saving_ns(*x, facts.round_trip_ns);
    s /= static_cast<double>(reads.size());
    notes.push_back(fmt::format("the closed form beside this is for N = {}; for N = {}: S (N - 1) / N = {}", closed_n,
                                n, model::detail::ms(s * (n - 1) / n)));
  }
}

}  // namespace syncscope::fixes::logging::detail
