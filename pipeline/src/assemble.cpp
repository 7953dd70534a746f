// From trace summaries to result rows (assemble.hpp, assemble_variants).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "syncscope/pipeline/assemble.hpp"

namespace syncscope::pipeline {

model::Estimate speedup_estimate(const model::Estimate& base, const model::Estimate& v) {
  model::Estimate e;
  if (v.value <= 0 || base.value <= 0) return e;
  e.value = base.value / v.value;
  e.lo = v.hi > 0 ? base.lo / v.hi : e.value;
  e.hi = v.lo > 0 ? base.hi / v.lo : e.value;
  e.lo = std::min(e.lo, e.value);
  e.hi = std::max(e.hi, e.value);
  e.n = std::min(base.n, v.n);
  return e;
}

namespace {

// The model's prediction for this row from its baseline's prediction report.
void take_prediction(const model::PredictionReport& report, const scenario::Scenario& s,
                     const model::Estimate& base_step, model::VariantResult& r, std::set<std::string>& noted,
                     model::RunResults& results) {
  bool found = false;
  for (const auto& f : report.fixes) {
    if (f.fix != r.fix || f.variant != r.variant) continue;
    found = true;
    for (const auto& [k, iv] : f.parameters) {
      r.model_parameters[k] = iv.value;
      if (!iv.is_exact()) {
        r.model_parameters[k + "_lo"] = iv.lo;
        r.model_parameters[k + "_hi"] = iv.hi;
      }
    }
    r.predicted_saving_ns = f.saving_ns.value;
    if (f.applicable && f.speedup) {
      r.predicted_speedup = model::Estimate{f.speedup->value, f.speedup->lo, f.speedup->hi, base_step.n};
    } else {
      const std::string n = fmt::format("{} {}={} L={}: no prediction: {}", s.name, r.fix, r.variant, r.layers,
                                        f.reason.empty() ? "no step time" : f.reason);
      if (noted.insert(n).second) results.notes.push_back(n);
    }
  }
  if (!found) {
    const std::string n =
        fmt::format("{} {}={}: the model has no prediction for this variant", s.name, r.fix, r.variant);
    if (noted.insert(n).second) results.notes.push_back(n);
  }
}

}  // namespace

void assemble_variants(const std::vector<scenario::Scenario>& scenarios, const std::vector<Job>& jobs,
                       const std::map<std::string, TraceSummary>& summaries, model::RunResults& results) {
  std::set<std::string> noted;
  for (const auto& job : jobs) {
    const scenario::Scenario& s = scenarios[job.scenario];
    const TraceSummary& v = summaries.at(job.key);
    const TraceSummary& b = summaries.at(job.base_key);
    model::VariantResult r;
    r.scenario = s.name;
    r.fix = scenario::fix_name(job.fix);
    r.variant = job.variant;
    r.baseline = job.baseline;
    r.layers = job.layers;
    r.step_time_ns = v.step_ns;
    r.syncs_per_step = v.syncs;
    r.sync_bubble_ns_per_step = v.bubble;
    r.sync_blocked_ns_per_step = v.blocked;
    r.h2d_overlap_fraction = v.h2d;
    r.d2h_overlap_fraction = v.d2h;
    r.tolerance = job.tolerance;
    r.trace_file = v.trace_file;
    r.measured_speedup = job.baseline ? model::Estimate{1, 1, 1, v.step_ns.n} : speedup_estimate(b.step_ns, v.step_ns);
    if (v.forward.n > 0) {
      r.forward_time_ns = v.forward;
      r.forward_speedup = job.baseline ? model::Estimate{1, 1, 1, v.forward.n} : speedup_estimate(b.forward, v.forward);
    }
    r.network = job.network;
    r.sync_removals = v.removals;
    if (job.baseline) {
      r.predicted_speedup = model::Estimate{1, 1, 1, 0};
    } else if (b.prediction) {
      take_prediction(*b.prediction, s, b.step_ns, r, noted, results);
    }
    for (const auto& w : v.warnings) {
      const std::string n = fmt::format("{}: {}", v.trace_file, w);
      if (noted.insert(n).second) results.notes.push_back(n);
    }
    results.variants.push_back(std::move(r));
  }
}

}  // namespace syncscope::pipeline
