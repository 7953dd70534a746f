// The logging fix in `predict --trace`: find the reads a trainer's logging makes after the
// optimizer each step, and predict what reading them every N steps (`every`) or one step
// late (`deferred`) saves.
//
// The pattern: in each iteration, host syncs caused by .item() (aten::item /
// aten::_local_scalar_dense) that start after the iteration's last optimizer range ends
// (torch.optim's "Optimizer.step#AdamW.step", or a range named "optimizer"). What a read
// costs the step is the GPU idle it leaves behind: once the read returns, the GPU has
// nothing queued until the host launches the next work (the sync point's bubble_ns, the
// analysis' per-sync bubble). Without the read the host would have used the time it was
// blocked, plus the round trip, to queue that work, so one read saves
//     s_r = min(bubble_r, blocked_r + round_trip)
// and a step S = sum of s_r over its reads. `deferred` saves S every step less the host's
// round trip r for its one event wait (on the step before, long done): max(S - r, 0);
// `every` saves S on N - 1 of every N steps: S (N - 1) / N. The kernels the fixes add (two or
// three tiny ones and a pinned copy) are not subtracted: microseconds of GPU time.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "internal.hpp"
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

namespace syncscope::fixes::logging::detail {

namespace {

bool is_optimizer_range(const std::string& lowered) {
  // torch.optim's "Optimizer.step#AdamW.step" (and older "Optimizer.step"), or our programs' "optimizer".
  return lowered == "optimizer" || lowered.starts_with("optimizer.step");
}

bool is_item_cause(const std::string& lowered) {
  return model::detail::contains_any(lowered, {"aten::item", "_local_scalar_dense"});
}

}  // namespace

std::vector<const SyncPoint*> reads_in(const model::detail::TraceFacts& facts, const model::detail::Window& w) {
  Ns optimizer_end = -1;
  for (const Range& r : facts.trace.ranges) {
    if (!model::detail::is_host_range(r) || r.start < w.start || r.end > w.end) continue;
    if (!model::detail::same_thread(w.tid, r.tid)) continue;
    if (is_optimizer_range(model::detail::lower(facts.trace.str(r.name))))
      optimizer_end = std::max(optimizer_end, r.end);
  }
  std::vector<const SyncPoint*> out;
  if (optimizer_end < 0) return out;
  for (const SyncPoint* s : facts.syncs_in(w))
    if (s->start >= optimizer_end && is_item_cause(model::detail::lower(s->cause))) out.push_back(s);
  return out;
}

double read_saving_ns(const SyncPoint& s, double round_trip_ns) {
  return std::min(static_cast<double>(s.bubble_ns), static_cast<double>(s.blocked_ns) + round_trip_ns);
}

double logging_steps_of(const model::TracePredictOptions& o) {
  const auto f = o.fix_numbers.find("logging");
  if (f == o.fix_numbers.end()) return kDefaultLoggingSteps;
  const auto n = f->second.find("logging_steps");
  return n == f->second.end() || !(n->second >= 1) ? kDefaultLoggingSteps : n->second;
}

bool per_step_pattern(std::size_t with_reads, std::size_t iterations) {
  // The pattern repeats: reads after the optimizer in at least 3 of 4 iterations (a trainer
  // that already logs every N steps reads in 1 of N).
  return with_reads > 0 && 4 * with_reads >= 3 * iterations;
}

void detect(const model::detail::TraceFacts& facts, model::PredictionReport& report) {
  model::FixPrediction base;
  base.fix = "logging";
  base.formula = "S = sum over the step's logging reads of min(bubble, blocked + round trip)";
  base.applicable = false;  // until the pattern is found
  if (!facts.have_iterations()) {
    base.reason = "no iterations (step ranges or repeated optimizer ranges) to find per-step logging reads in";
    model::detail::add_not_applicable(report, base, {"every", "deferred"});
    return;
  }
  std::vector<double> savings;
  std::vector<int> counts;
  for (const model::detail::Window& w : facts.iterations) {
    const auto reads = reads_in(facts, w);
    double saving = 0;
    for (const SyncPoint* r : reads) saving += read_saving_ns(*r, facts.round_trip_ns);
    savings.push_back(saving);
    counts.push_back(static_cast<int>(reads.size()));
  }
  const auto with_reads =
      static_cast<std::size_t>(std::count_if(counts.begin(), counts.end(), [](int c) { return c > 0; }));
  if (!per_step_pattern(with_reads, counts.size())) {
    base.reason = fmt::format(
        "no per-step logging reads: {} of {} iterations have an .item() sync after the optimizer (needs 3 in 4)",
        with_reads, counts.size());
    model::detail::add_not_applicable(report, base, {"every", "deferred"});
    return;
  }
  const model::Interval s = model::detail::mean_ci(savings, facts.opt.bootstrap, facts.opt.seed + 41, facts.level);
  const double mean_reads =
      static_cast<double>(std::accumulate(counts.begin(), counts.end(), 0)) / static_cast<double>(counts.size());
  std::vector<std::string> evidence = {
      fmt::format("{} of {} iterations ({}) read values back after the optimizer: {:.2f} .item() syncs per "
                  "iteration",
                  with_reads, counts.size(), facts.iteration_source, mean_reads),
      fmt::format("the GPU idle those reads leave, bounded by the host's blocked time plus the round trip ({}, {}): "
                  "S = {} per step",
                  model::detail::us(facts.round_trip_ns), facts.round_trip_source, model::detail::ms(s.value))};
  base.applicable = true;
  for (const char* variant : {"every", "deferred"}) {
    model::FixPrediction f = base;
    f.variant = variant;
    f.evidence = evidence;
    f.parameters["S_ns"] = s;
    f.parameters["reads_per_step"] = model::Interval::exact(mean_reads);
    if (std::string(variant) == "every") {
      const double n = logging_steps_of(facts.opt);
      const double keep = (n - 1) / n;
      f.formula = "S (N - 1) / N";
      f.parameters["N"] = model::Interval::exact(n);
      f.saving_ns = {s.value * keep, s.lo * keep, s.hi * keep};
      f.notes.push_back(fmt::format("N = {} (the trainer's logging_steps{}; the saving for another N is S (N - 1) / N)",
                                    n, n == kDefaultLoggingSteps ? ", by default" : ", from the scenario"));
    } else {
      // Its one cudaEventSynchronize per step costs the host a round trip r.
      const double r = facts.round_trip_ns;
      f.formula = "max(S - r, 0)";
      f.saving_ns = {std::max(s.value - r, 0.0), std::max(s.lo - r, 0.0), std::max(s.hi - r, 0.0)};
    }
    model::attach_speedup(f, facts.step_ns, facts.opt.propagation);
    report.fixes.push_back(std::move(f));
  }
}

}  // namespace syncscope::fixes::logging::detail
