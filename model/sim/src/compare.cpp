#include "syncscope/sim/compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace syncscope::sim {

namespace {

struct Side {
  bool per_step = false;
  double step_time = 0, syncs = 0, blocked = 0, bubble = 0, busy = 0, h2d = 0, d2h = 0, kernels = 0, copies = 0;
};

Side summarize(const AnalysisResult& a) {
  Side s;
  const auto& t = a.totals;
  if (!a.steps.empty()) {
    const auto& ss = a.step_summary;
    const double n = static_cast<double>(a.steps.size());
    s.per_step = true;
    s.step_time = ss.duration_ns.median;
    s.syncs = ss.syncs.median;
    s.blocked = ss.sync_blocked_ns.median;
    s.bubble = ss.sync_bubble_ns.median;
    s.busy = ss.gpu_busy_ns.median;
    s.h2d = ss.h2d_overlap_fraction.median;
    s.d2h = ss.d2h_overlap_fraction.median;
    std::uint64_t k = 0, c = 0;
    for (const auto& w : a.steps) {
      k += w.kernels;
      c += w.memcpys;
    }
    s.kernels = static_cast<double>(k) / n;
    s.copies = static_cast<double>(c) / n;
  } else {
    s.step_time = static_cast<double>(t.duration_ns);
    s.syncs = static_cast<double>(t.syncs.total);
    s.blocked = static_cast<double>(t.syncs.blocked_ns);
    s.bubble = static_cast<double>(t.syncs.bubble_ns);
    s.busy = static_cast<double>(t.gpu_busy_ns);
    s.h2d = t.h2d.fraction;
    s.d2h = t.d2h.fraction;
    s.kernels = static_cast<double>(t.kernels);
    s.copies = static_cast<double>(t.memcpys);
  }
  return s;
}

MetricComparison metric(const char* name, const char* unit, double sim, double meas) {
  MetricComparison m;
  m.metric = name;
  m.unit = unit;
  m.simulated = sim;
  m.measured = meas;
  m.difference = sim - meas;
  if (std::string_view(unit) == "fraction") m.relative = m.difference;
  else if (meas != 0) m.relative = m.difference / std::fabs(meas);
  else m.relative = sim == 0 ? 0.0 : 1.0;
  return m;
}

}  // namespace

const MetricComparison* TraceComparison::find(const std::string& name) const {
  for (const auto& m : metrics)
    if (m.metric == name) return &m;
  return nullptr;
}

TraceComparison compare_analyses(const AnalysisResult& sim, const AnalysisResult& meas) {
  TraceComparison c;
  c.simulated_source = sim.source;
  c.measured_source = meas.source;
  c.simulated_steps = sim.steps.size();
  c.measured_steps = meas.steps.size();
  Side s = summarize(sim), m = summarize(meas);
  if (s.per_step != m.per_step) {
    c.notes.push_back(fmt::format("only the {} trace has step ranges: comparing whole traces",
                                  s.per_step ? "simulated" : "measured"));
    AnalysisResult a = sim, b = meas;
    a.steps.clear();
    b.steps.clear();
    s = summarize(a);
    m = summarize(b);
  } else if (!s.per_step) {
    c.notes.push_back("no step ranges in either trace: comparing whole traces");
  }
  c.metrics = {
      metric("step_time_ns", "ns", s.step_time, m.step_time),
      metric("syncs_per_step", "count", s.syncs, m.syncs),
      metric("sync_blocked_ns_per_step", "ns", s.blocked, m.blocked),
      metric("sync_bubble_ns_per_step", "ns", s.bubble, m.bubble),
      metric("gpu_busy_ns_per_step", "ns", s.busy, m.busy),
      metric("h2d_overlap_fraction", "fraction", s.h2d, m.h2d),
      metric("d2h_overlap_fraction", "fraction", s.d2h, m.d2h),
      metric("kernels_per_step", "count", s.kernels, m.kernels),
      metric("memcpys_per_step", "count", s.copies, m.copies),
  };
  for (const auto& x : c.metrics) c.max_abs_relative = std::max(c.max_abs_relative, std::fabs(x.relative));
  for (const auto& w : meas.warnings) c.notes.push_back("measured: " + w);
  for (const auto& w : sim.warnings) c.notes.push_back("simulated: " + w);
  return c;
}

TraceComparison compare_traces(const Trace& simulated, const Trace& measured, const AnalysisOptions& options) {
  AnalysisResult a = analyze(simulated, options);
  AnalysisResult b = analyze(measured, options);
  if (a.source.empty()) a.source = simulated.meta.trace_name;
  if (b.source.empty()) b.source = measured.meta.trace_name;
  return compare_analyses(a, b);
}

std::string comparison_to_json(const TraceComparison& c, int indent) {
  nlohmann::json j;
  j["schema_version"] = c.schema_version;
  j["simulated_source"] = c.simulated_source;
  j["measured_source"] = c.measured_source;
  j["simulated_steps"] = c.simulated_steps;
  j["measured_steps"] = c.measured_steps;
  j["max_abs_relative"] = c.max_abs_relative;
  j["metrics"] = nlohmann::json::array();
  for (const auto& m : c.metrics)
    j["metrics"].push_back({{"metric", m.metric},
                            {"unit", m.unit},
                            {"simulated", m.simulated},
                            {"measured", m.measured},
                            {"difference", m.difference},
                            {"relative", m.relative}});
  j["notes"] = c.notes;
  return j.dump(indent);
}

}  // namespace syncscope::sim
