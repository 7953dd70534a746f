// The replay's, diff's and simulator check's results as text for people (`predict --trace`'s
// replay section, `syncscope diff`, the simulator against a measured trace): the structs are
// the model's (replay/replay.hpp, replay_diff.hpp, sim/compare.hpp), and so is their JSON.
#include "syncscope/reports/replay_printers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "syncscope/core/text.hpp"
#include "text_cells.hpp"

namespace syncscope {

namespace {

using reports_detail::ms_text;

// "+1.000 ms (+10.0%)": b - a, and relative to a when a is not 0.
std::string delta(double a, double b, bool time) {
  const std::string d = time ? fmt::format("{:+.3f} ms", (b - a) / 1e6) : fmt::format("{:+.2f}", b - a);
  if (a == 0) return d;
  return d + fmt::format(" ({:+.1f}%)", (b - a) / a * 100);
}

}  // namespace

std::string replay_to_text(const replay::ReplayReport& r) {
  std::string s;
  s += fmt::format(
      "\nReplay of the trace as a dependency graph (model/README.md, \"Replay\"); round trip r = {:.1f} us\n",
      static_cast<double>(r.round_trip_ns) / 1e3);
  for (const auto& w : r.warnings) s += "  warning: " + printable(w) + "\n";
  s += fmt::format("  {:<28} {:>12} {:>12} {:>9}\n", "step", "measured", "replayed", "error");
  for (const auto& st : r.steps)
    s += fmt::format("  {:<28} {:>12} {:>12} {:>+8.2f}%{}\n", printable(st.name),
                     ms_text(static_cast<double>(st.measured_ns)), ms_text(static_cast<double>(st.replayed_ns)),
                     st.error() * 100, st.unbuilt ? fmt::format("  ({} unbuilt edge(s))", st.unbuilt) : "");
  if (r.error_steps == 0) {
    s += "  identity replay: no step replayed, so no error figure\n";
  } else {
    s += fmt::format(
        "  identity replay over {} step(s), step time |error|: median {:.2f}%, max {:.2f}% (goal: median <= {:.0f}%, "
        "max <= {:.0f}%){}\n",
        r.error_steps, r.median_abs_error * 100, r.max_abs_error * 100, replay::kIdentityGoalMedian * 100,
        replay::kIdentityGoalMax * 100, r.within_goal() ? "" : " OUTSIDE THE GOAL");
  }
  auto path = [&](const std::vector<replay::CriticalSegment>& p, const std::string& title) {
    if (p.empty()) return;
    s += title;
    for (const auto& c : p)
      s += fmt::format("    +{:>9.3f} ms {:>9.3f} ms  {:<44} {}\n", static_cast<double>(c.start_ns) / 1e6,
                       static_cast<double>(c.duration_ns) / 1e6, printable(c.where), printable(c.what));
  };
  path(r.critical_path, fmt::format("  critical path of {} (identity replay; start offset, duration, where, what):\n",
                                    printable(r.critical_step)));
  if (!r.what_if.empty()) {
    s += "What-if, replayed from this trace (closed form beside it):\n";
    for (const auto& w : r.what_if) {
      if (!w.applicable) {
        s += fmt::format("  {:<28} not applicable: {}\n", w.edit, printable(w.reason));
        continue;
      }
      s += fmt::format("  {:<28} replayed step {}, saving {}; closed form {}{}\n", w.edit,
                       ms_text(static_cast<double>(w.replayed_step_ns)),
                       w.saving_ns ? ms_text(static_cast<double>(*w.saving_ns)) : std::string("not claimed"),
                       w.closed_form_saving_ns ? ms_text(*w.closed_form_saving_ns) : std::string("none"),
                       w.closed_form.empty() ? "" : " (" + w.closed_form + ")");
      for (const auto& o : w.off_critical_path) s += "    off the critical path: " + printable(o) + "\n";
      for (const auto& n : w.notes) s += "    note: " + printable(n) + "\n";
    }
  }
  path(r.edited_critical_path, fmt::format("  critical path of {} after {}:\n", printable(r.critical_step),
                                           r.what_if.empty() ? std::string() : r.what_if.front().edit));
  return s;
}

std::string diff_to_text(const replay::DiffReport& d) {
  std::string s = fmt::format("before: {} ({} steps)\nafter:  {} ({} steps)\nper step (median over steps):\n",
                              printable(d.before.source), d.before.steps, printable(d.after.source), d.after.steps);
  auto row = [&](const std::string& what, double a, double b, bool time) {
    s += fmt::format("  {:<34} {:>14} {:>14}  {}\n", what, time ? ms_text(a) : fmt::format("{:.2f}", a),
                     time ? ms_text(b) : fmt::format("{:.2f}", b), delta(a, b, time));
  };
  row("step time", d.before.step_ns, d.after.step_ns, true);
  row("sync points", d.before.syncs, d.after.syncs, false);
  row("sync bubbles", d.before.bubble_ns, d.after.bubble_ns, true);
  row("host blocked in syncs", d.before.blocked_ns, d.after.blocked_ns, true);
  row("GPU busy", d.before.gpu_busy_ns, d.after.gpu_busy_ns, true);
  row("H2D copy/compute overlap", d.before.h2d_overlap, d.after.h2d_overlap, false);
  row("D2H copy/compute overlap", d.before.d2h_overlap, d.after.d2h_overlap, false);
  std::set<std::string> causes;
  for (const auto& [c, n] : d.before.syncs_by_cause) causes.insert(c);
  for (const auto& [c, n] : d.after.syncs_by_cause) causes.insert(c);
  for (const auto& c : causes) {
    auto get = [&](const std::map<std::string, double>& m) {
      auto it = m.find(c);
      return it == m.end() ? 0.0 : it->second;
    };
    row("syncs: " + printable(c), get(d.before.syncs_by_cause), get(d.after.syncs_by_cause), false);
  }
  // Kernel time by name: the 10 names that changed most.
  std::set<std::string> names;
  for (const auto& [k, v] : d.before.kernel_ns_by_name) names.insert(k);
  for (const auto& [k, v] : d.after.kernel_ns_by_name) names.insert(k);
  std::vector<std::pair<double, std::string>> changed;
  auto get = [](const std::map<std::string, double>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  for (const auto& k : names)
    changed.push_back({std::abs(get(d.after.kernel_ns_by_name, k) - get(d.before.kernel_ns_by_name, k)), k});
  std::sort(changed.rbegin(), changed.rend());
  if (changed.size() > 10) changed.resize(10);
  for (const auto& [x, k0] : changed) {
    const std::string k = printable(k0);
    row("kernel " + (k.size() > 26 ? k.substr(0, 23) + "..." : k), get(d.before.kernel_ns_by_name, k0),
        get(d.after.kernel_ns_by_name, k0), true);
  }
  if (d.predicted_after_step_ns) {
    std::string edits;
    for (const auto& e : d.edits) edits += (edits.empty() ? "" : ", ") + e;
    s += fmt::format("what-if ({}), replayed from BEFORE: step {} against the real AFTER {}: error {:+.2f}%\n", edits,
                     ms_text(*d.predicted_after_step_ns), ms_text(d.after.step_ns), d.what_if_error.value_or(0) * 100);
  }
  for (const auto& w : d.warnings) s += "warning: " + printable(w) + "\n";
  return s;
}

std::string comparison_to_text(const sim::TraceComparison& c) {
  std::string out = fmt::format("simulated: {} ({} steps)\nmeasured:  {} ({} steps)\n", printable(c.simulated_source),
                                c.simulated_steps, printable(c.measured_source), c.measured_steps);
  out += fmt::format("{:<26} {:>16} {:>16} {:>16} {:>9}\n", "metric", "simulated", "measured", "sim - meas", "rel");
  for (const auto& m : c.metrics) {
    const bool frac = m.unit == "fraction";
    auto num = [&](double v) { return frac ? fmt::format("{:.3f}", v) : fmt::format("{:.1f}", v); };
    out += fmt::format("{:<26} {:>16} {:>16} {:>16} {:>8.1f}%\n", m.metric, num(m.simulated), num(m.measured),
                       num(m.difference), 100.0 * m.relative);
  }
  for (const auto& n : c.notes) out += "note: " + printable(n) + "\n";
  return out;
}

}  // namespace syncscope
