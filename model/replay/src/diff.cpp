// `syncscope diff` (replay_diff.hpp): two traces digested per step, side by side, and the
// replayed what-if of AFTER from BEFORE against the real AFTER.
//
// JSON: {"schema_version", "before": DIGEST, "after": DIGEST, "what_if": {"edits",
// "predicted_after_step_ns", "real_after_step_ns", "error"} (absent without edits),
// "warnings"}; DIGEST: {"source", "steps", "step_ns", "syncs", "syncs_by_cause",
// "bubble_ns", "blocked_ns", "h2d_overlap", "d2h_overlap", "gpu_busy_ns",
// "kernel_ns_by_name"}. Per-step values are medians over steps (counts and by-name maps:
// means); fractions 0..1; times ns.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/replay/replay_diff.hpp"

namespace syncscope::replay {
namespace {

inline constexpr int kDiffSchemaVersion = 1;

nlohmann::ordered_json digest_json(const TraceDigest& d) {
  return {{"source", d.source},
          {"steps", d.steps},
          {"step_ns", d.step_ns},
          {"syncs", d.syncs},
          {"syncs_by_cause", d.syncs_by_cause},
          {"bubble_ns", d.bubble_ns},
          {"blocked_ns", d.blocked_ns},
          {"h2d_overlap", d.h2d_overlap},
          {"d2h_overlap", d.d2h_overlap},
          {"gpu_busy_ns", d.gpu_busy_ns},
          {"kernel_ns_by_name", d.kernel_ns_by_name}};
}

}  // namespace

TraceDigest digest_trace(const Trace& trace, const std::string& step_glob, const std::string& source) {
  AnalysisOptions o;
  o.step_glob = step_glob;
  const AnalysisResult a = analyze(trace, o);
  TraceDigest d;
  d.source = source;
  std::vector<WindowStats> windows = a.steps;
  if (windows.empty()) windows.push_back(a.totals);
  d.steps = a.steps.size();
  auto med = [&](auto get) {
    std::vector<double> v;
    for (const auto& w : windows) v.push_back(static_cast<double>(get(w)));
    return distribution(v).median;
  };
  d.step_ns = med([](const WindowStats& w) { return w.duration_ns; });
  d.syncs = med([](const WindowStats& w) { return w.syncs.total; });
  d.bubble_ns = med([](const WindowStats& w) { return w.syncs.bubble_ns; });
  d.blocked_ns = med([](const WindowStats& w) { return w.syncs.blocked_ns; });
  d.h2d_overlap = med([](const WindowStats& w) { return w.h2d.fraction; });
  d.d2h_overlap = med([](const WindowStats& w) { return w.d2h.fraction; });
  d.gpu_busy_ns = med([](const WindowStats& w) { return w.gpu_busy_ns; });
  const double n = static_cast<double>(windows.size());
  for (const auto& w : windows)
    for (const auto& [cause, k] : w.syncs.by_cause) d.syncs_by_cause[cause] += static_cast<double>(k) / n;
  for (const auto& k : trace.kernels)
    for (const auto& w : windows)
      if (w.start <= k.start && k.start < w.end) {
        d.kernel_ns_by_name[std::string(trace.str(k.name))] += static_cast<double>(k.end - k.start) / n;
        break;
      }
  return d;
}

DiffReport diff_traces(const Trace& before, const Trace& after, const std::vector<std::string>& edits,
                       const model::TracePredictOptions& options, const std::string& before_name,
                       const std::string& after_name) {
  DiffReport d;
  d.before = digest_trace(before, options.step_glob, before_name);
  d.after = digest_trace(after, options.step_glob, after_name);
  d.edits = edits;
  if (!edits.empty()) {
    // Closed forms are not needed to replay; an empty prediction leaves them out.
    const ReplayReport r = replay_what_if(before, edits, options, model::PredictionReport{});
    d.warnings = r.warnings;
    // Every edit applies to the same graph in turn: replay them together.
    ReplayGraph g = build_replay_graph(before, ReplayOptions{options.step_glob, std::nullopt});
    for (const auto& e : edits) (void)apply_what_if(before, g, parse_what_if(e), options);
    std::vector<double> v;
    for (const auto& s : replay_steps(g, run_replay(g))) v.push_back(static_cast<double>(s.replayed_ns));
    d.predicted_after_step_ns = distribution(v).median;
    if (d.after.step_ns > 0) d.what_if_error = (*d.predicted_after_step_ns - d.after.step_ns) / d.after.step_ns;
  }
  return d;
}

std::string diff_to_json(const DiffReport& d) {
  nlohmann::ordered_json j;
  j["schema_version"] = kDiffSchemaVersion;
  j["before"] = digest_json(d.before);
  j["after"] = digest_json(d.after);
  if (d.predicted_after_step_ns)
    j["what_if"] = {{"edits", d.edits},
                    {"predicted_after_step_ns", *d.predicted_after_step_ns},
                    {"real_after_step_ns", d.after.step_ns},
                    {"error",
                     d.what_if_error ? nlohmann::ordered_json(*d.what_if_error) : nlohmann::ordered_json(nullptr)}};
  j["warnings"] = d.warnings;
  return j.dump(2) + "\n";
}

}  // namespace syncscope::replay
