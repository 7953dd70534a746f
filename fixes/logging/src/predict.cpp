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
// `predict --fix logging` takes S, N and r as values (--logging-read-ms, --logging-steps,
// --round-trip-us or --gpu) and runs the same closed form.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "internal.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/logging/logging.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/scenario/scenario.hpp"

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
  const double n = o.fix_number("logging", "logging_steps").value_or(kDefaultLoggingSteps);
  return n >= 1 ? n : kDefaultLoggingSteps;
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
  const double n = logging_steps_of(facts.opt);
  for (const char* variant : {"every", "deferred"}) {
    model::FixPrediction f =
        variant_prediction(base, variant, s, n, n == kDefaultLoggingSteps ? "by default" : "from the scenario",
                           facts.round_trip_ns);
    f.evidence = evidence;
    f.parameters["reads_per_step"] = model::Interval::exact(mean_reads);
    model::attach_speedup(f, facts.step_ns, facts.opt.propagation);
    report.fixes.push_back(std::move(f));
  }
}

model::FixPrediction variant_prediction(const model::FixPrediction& base, const std::string& variant,
                                        const model::Interval& s, double n, const std::string& n_source,
                                        double round_trip_ns) {
  model::FixPrediction f = base;
  f.variant = variant;
  f.parameters["S_ns"] = s;
  if (variant == "every") {
    const double keep = (n - 1) / n;
    f.formula = "S (N - 1) / N";
    f.parameters["N"] = model::Interval::exact(n);
    f.saving_ns = {s.value * keep, s.lo * keep, s.hi * keep};
    f.notes.push_back(fmt::format("N = {} (the trainer's logging_steps, {}; the saving for another N is S (N - 1) / N)",
                                  n, n_source));
  } else {
    // Its one cudaEventSynchronize per step costs the host a round trip r.
    const double r = round_trip_ns;
    f.formula = "max(S - r, 0)";
    f.saving_ns = {std::max(s.value - r, 0.0), std::max(s.lo - r, 0.0), std::max(s.hi - r, 0.0)};
  }
  return f;
}

std::vector<PredictOption> predict_options() {
  using K = PredictOption::Kind;
  return {
      {"logging-read-ms",
       K::Time,
       "logging: S, what the step's logging reads cost it (ms): the GPU idle each .item() after the optimizer "
       "leaves, bounded by the host's blocked time plus the round trip (predict --trace measures it)",
       {0, 0, ""},
       "",
       ""},
      {"logging-steps", K::Integer, "logging: N, the trainer's logging_steps (the every variant reads once per N)",
       kLoggingSteps, std::to_string(kDefaultLoggingSteps), "logging_steps"},
  };
}

void predict_from_scenario(const scenario::Scenario& sc, model::ExplicitPredictInputs& in) {
  if (in.given("logging-steps")) return;
  for (const auto& f : sc.fixes)
    if (f.fix == kLogging)
      if (auto it = f.numbers.find("logging_steps"); it != f.numbers.end())
        in.values["logging-steps"] = fmt::format("{:g}", it->second);
}

bool has_inputs(const model::ExplicitPredictInputs& in) { return in.given("logging-read-ms"); }

void predict_explicit(const model::ExplicitPredictInputs& in, model::PredictionReport& rep) {
  SYNCSCOPE_INPUT_ERROR_IF(!has_inputs(in),
                           "--fix logging needs --logging-read-ms S (and --logging-steps N, "
                           "--round-trip-us R or --gpu)");
  const std::optional<model::Interval> r = in.round_trip();
  SYNCSCOPE_INPUT_ERROR_IF(!r,
                           "--fix logging: the deferred variant's event wait needs the round trip: give "
                           "--round-trip-us R or --gpu");
  model::FixPrediction base;
  base.fix = "logging";
  base.applicable = true;
  const double n = in.integer("logging-steps", kDefaultLoggingSteps);
  const std::string n_source = in.given("logging-steps") ? "as given" : "by default";
  for (const char* variant : {"every", "deferred"}) {
    model::FixPrediction f =
        variant_prediction(base, variant, *in.interval("logging-read-ms", 1e6), n, n_source, r->value);
    if (std::string(variant) == "deferred")
      f.notes.push_back(fmt::format("r = {:.1f} us ({})", r->value / 1e3,
                                    in.round_trip_us.empty() ? "the GPU profile " + in.profile->name
                                                             : std::string("--round-trip-us")));
    model::attach_speedup(f, in.step_ns, in.propagation);
    rep.fixes.push_back(std::move(f));
  }
}

}  // namespace syncscope::fixes::logging::detail
