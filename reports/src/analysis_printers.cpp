#include "syncscope/reports/analysis_printers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis_critical_path.hpp"
#include "analysis_gpu_printers.hpp"
#include "syncscope/core/csv.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/units.hpp"
#include "syncscope/replay/replay.hpp"
#include "text_cells.hpp"

namespace syncscope {

using nlohmann::ordered_json;

std::string format_duration(Ns ns) {
  const Ns mag = ns < 0 ? -ns : ns;
  if (mag >= kNsPerS) return fmt::format("{:.3f} s", s_from_ns(ns));
  if (mag >= kNsPerMs) return fmt::format("{:.3f} ms", ms_from_ns(ns));
  if (mag >= kNsPerUs) return fmt::format("{:.1f} us", us_from_ns(ns));
  return fmt::format("{} ns", ns);
}

namespace {

std::string format_duration(double ns) { return syncscope::format_duration(static_cast<Ns>(std::llround(ns))); }

std::string percent(double f) { return fmt::format("{:.1f}%", 100.0 * f); }

// The replayed removal saving of a cause, when analyze computed one.
const replay::CauseCost* removal_of(const CauseRemovals* removals, const std::string& cause) {
  if (removals == nullptr) return nullptr;
  for (const auto& c : *removals)
    if (c.cause == cause) return &c;
  return nullptr;
}

// Number of devices the GPU-busy fraction is over (at least 1).
std::size_t device_count(const WindowStats& w) { return std::max<std::size_t>(1, w.gpu_busy_by_device.size()); }

double busy_fraction(const WindowStats& w) {
  return fraction(w.gpu_busy_ns, w.duration_ns * static_cast<Ns>(device_count(w)));
}

// ---- JSON -------------------------------------------------------------------------------

ordered_json overlap_json(const OverlapStats& o) {
  return ordered_json{{"copy_ns", o.copy_ns}, {"overlapped_ns", o.overlapped_ns}, {"fraction", o.fraction}};
}

ordered_json window_json(const WindowStats& w) {
  ordered_json j;
  j["name"] = w.name;
  j["index"] = w.index;
  j["start_ns"] = w.start;
  j["end_ns"] = w.end;
  j["duration_ns"] = w.duration_ns;
  j["gpu_busy_ns"] = w.gpu_busy_ns;
  ordered_json by_dev = ordered_json::object();
  for (const auto& [d, ns] : w.gpu_busy_by_device) by_dev[std::to_string(d)] = ns;
  j["gpu_busy_by_device"] = std::move(by_dev);
  j["kernel_ns"] = w.kernel_ns;
  j["compute_kernel_ns"] = w.compute_kernel_ns;
  j["communication"] = ordered_json{{"kernel_ns", w.comm.kernel_ns},
                                    {"kernels", w.comm.kernels},
                                    {"overlapped_ns", w.comm.overlapped_ns},
                                    {"overlap_fraction", w.comm.overlap_fraction}};
  j["kernels"] = w.kernels;
  j["memcpys"] = w.memcpys;
  j["memcpy_bytes"] = w.memcpy_bytes;
  ordered_json syncs;
  syncs["total"] = w.syncs.total;
  syncs["by_cause"] = ordered_json::object();
  for (const auto& [c, n] : w.syncs.by_cause) syncs["by_cause"][c] = n;
  syncs["by_api"] = ordered_json::object();
  for (const auto& [a, n] : w.syncs.by_api) syncs["by_api"][a] = n;
  syncs["stream_wait_events"] = w.syncs.stream_wait_events;
  syncs["polling"] = w.syncs.polling;
  j["syncs"] = std::move(syncs);
  j["sync_blocked_ns"] = w.syncs.blocked_ns;
  j["sync_bubble_ns"] = w.syncs.bubble_ns;
  j["overlap"] = ordered_json{{"h2d", overlap_json(w.h2d)}, {"d2h", overlap_json(w.d2h)}};
  j["idle"] = reports_detail::idle_json(w.idle, w.duration_ns);
  j["verdict"] = std::string(verdict_name(w.verdict));
  if (w.critical_path) j["critical_path"] = reports_detail::critical_path_json(*w.critical_path);
  return j;
}

ordered_json distribution_json(const Distribution& d) {
  return ordered_json{{"median", d.median}, {"p10", d.p10}, {"p90", d.p90}, {"min", d.min}, {"max", d.max}};
}

ordered_json summary_json(const StepSummary& s) {
  ordered_json j;
  j["n"] = s.duration_ns.n;
  j["duration_ns"] = distribution_json(s.duration_ns);
  j["gpu_busy_ns"] = distribution_json(s.gpu_busy_ns);
  j["compute_kernel_ns"] = distribution_json(s.compute_kernel_ns);
  j["communication_kernel_ns"] = distribution_json(s.comm_kernel_ns);
  j["syncs"] = distribution_json(s.syncs);
  j["sync_blocked_ns"] = distribution_json(s.sync_blocked_ns);
  j["sync_bubble_ns"] = distribution_json(s.sync_bubble_ns);
  j["h2d_overlap_fraction"] = distribution_json(s.h2d_overlap_fraction);
  j["d2h_overlap_fraction"] = distribution_json(s.d2h_overlap_fraction);
  return j;
}

ordered_json meta_json(const TraceMetadata& m) {
  ordered_json j;
  j["source_tool"] = m.source_tool;
  j["source_version"] = m.source_version;
  j["trace_name"] = m.trace_name;
  j["trace_schema_version"] = m.schema_version;
  j["source_schema_version"] = m.source_schema_version;
  j["dropped_records"] = m.dropped_records;
  j["clock"] = std::string(kind_name(m.clock));
  j["base_time_ns"] = m.base_time_ns;
  j["unknown_categories"] = ordered_json::object();
  for (const auto& [c, n] : m.unknown_categories) j["unknown_categories"][c] = n;
  j["extra"] = ordered_json::object();
  for (const auto& [k, v] : m.extra) j["extra"][k] = v;
  return j;
}

ordered_json sync_point_json(const SyncPoint& p) {
  ordered_json j;
  j["start_ns"] = p.start;
  j["end_ns"] = p.end;
  j["blocked_ns"] = p.blocked_ns;
  j["bubble_ns"] = p.bubble_ns;
  j["api"] = p.api;
  j["cause"] = p.cause;
  j["merged_copy"] = p.merged_copy;
  j["polling"] = p.polling;
  if (p.polling) j["polls"] = p.polls;
  j["pid"] = p.pid;
  j["tid"] = p.tid;
  j["device"] = p.device;
  j["stream"] = p.stream;
  j["correlation"] = p.correlation;
  return j;
}

// ---- CSV --------------------------------------------------------------------------------

std::string number(double v) { return fmt::format("{}", v); }
template <class I>
std::string number(I v) requires std::is_integral_v<I> {
  return std::to_string(v);
}

void window_rows(CsvWriter& csv, std::string_view kind, const WindowStats& w, const std::string& version) {
  const std::string index = std::to_string(w.index);
  auto row = [&](const std::string& metric, const std::string& value) {
    // Metrics and values quote the trace too (syncs.by_api.NAME, the critical path's where/what).
    csv.row({std::string(kind), printable(w.name), index, printable(metric), printable(value), version});
  };
  row("start_ns", number(w.start));
  row("end_ns", number(w.end));
  row("duration_ns", number(w.duration_ns));
  row("gpu_busy_ns", number(w.gpu_busy_ns));
  for (const auto& [d, ns] : w.gpu_busy_by_device) row("gpu_busy_by_device." + std::to_string(d), number(ns));
  row("kernel_ns", number(w.kernel_ns));
  row("compute_kernel_ns", number(w.compute_kernel_ns));
  row("communication.kernel_ns", number(w.comm.kernel_ns));
  row("communication.kernels", number(w.comm.kernels));
  row("communication.overlapped_ns", number(w.comm.overlapped_ns));
  row("communication.overlap_fraction", number(w.comm.overlap_fraction));
  row("kernels", number(w.kernels));
  row("memcpys", number(w.memcpys));
  row("memcpy_bytes", number(w.memcpy_bytes));
  row("syncs.total", number(w.syncs.total));
  for (const auto& [c, n] : w.syncs.by_cause) row("syncs.by_cause." + c, number(n));
  for (const auto& [a, n] : w.syncs.by_api) row("syncs.by_api." + a, number(n));
  row("syncs.stream_wait_events", number(w.syncs.stream_wait_events));
  row("syncs.polling", number(w.syncs.polling));
  row("sync_blocked_ns", number(w.syncs.blocked_ns));
  row("sync_bubble_ns", number(w.syncs.bubble_ns));
  for (const auto& [dir, o] : {std::pair<const char*, const OverlapStats*>{"h2d", &w.h2d}, {"d2h", &w.d2h}}) {
    row(fmt::format("overlap.{}.copy_ns", dir), number(o->copy_ns));
    row(fmt::format("overlap.{}.overlapped_ns", dir), number(o->overlapped_ns));
    row(fmt::format("overlap.{}.fraction", dir), number(o->fraction));
  }
  reports_detail::idle_rows(w.idle, w.verdict, row);
  if (w.critical_path) reports_detail::critical_path_rows(*w.critical_path, row);
}

void summary_rows(CsvWriter& csv, std::string_view kind, const StepSummary& s, const std::string& version) {
  if (s.duration_ns.n == 0) return;
  const std::pair<const char*, const Distribution*> metrics[] = {
      {"duration_ns", &s.duration_ns},
      {"gpu_busy_ns", &s.gpu_busy_ns},
      {"compute_kernel_ns", &s.compute_kernel_ns},
      {"communication.kernel_ns", &s.comm_kernel_ns},
      {"syncs.total", &s.syncs},
      {"sync_blocked_ns", &s.sync_blocked_ns},
      {"sync_bubble_ns", &s.sync_bubble_ns},
      {"overlap.h2d.fraction", &s.h2d_overlap_fraction},
      {"overlap.d2h.fraction", &s.d2h_overlap_fraction},
  };
  csv.row({std::string(kind), "n", "0", "windows", number(s.duration_ns.n), version});
  for (const auto& [metric, d] : metrics) {
    const std::pair<const char*, double> stats[] = {
        {"median", d->median}, {"p10", d->p10}, {"p90", d->p90}, {"min", d->min}, {"max", d->max}};
    for (const auto& [stat, v] : stats)
      csv.row({std::string(kind), stat, "0", metric, number(v), version});  // printed-name-ok: our labels
  }
}

// ---- table ------------------------------------------------------------------------------

std::string dist_line(const Distribution& d, bool durations) {
  auto f = [&](double v) { return durations ? format_duration(v) : fmt::format("{:g}", v); };
  return fmt::format("{} [{}, {}]", f(d.median), f(d.p10), f(d.p90));
}

using reports_detail::shorten;

}  // namespace

std::string analysis_to_json(const AnalysisResult& r, int indent) {
  AnalysisJsonOptions o;
  o.indent = indent;
  return analysis_to_json(r, o);
}

std::string analysis_to_json(const AnalysisResult& r, const AnalysisJsonOptions& options) {
  ordered_json j;
  j["schema_version"] = r.schema_version;
  j["kind"] = "syncscope.analysis";
  j["source"] = r.source;
  j["options"] = ordered_json{{"step_range", r.options.step_glob},
                              {"layer_range", r.options.layer_glob},
                              {"pid", r.options.pid ? ordered_json(*r.options.pid) : ordered_json(nullptr)}};
  j["meta"] = meta_json(r.meta);
  j["totals"] = window_json(r.totals);
  j["steps"] = ordered_json::array();
  for (const auto& s : r.steps) j["steps"].push_back(window_json(s));
  j["layers"] = ordered_json::array();
  for (const auto& l : r.layers) j["layers"].push_back(window_json(l));
  j["step_summary"] = summary_json(r.step_summary);
  j["layer_summary"] = summary_json(r.layer_summary);
  j["worst"] = ordered_json::array();
  for (const auto& o : r.worst) {
    ordered_json w{{"cause", o.cause},
                   {"count", o.count},
                   {"blocked_ns", o.blocked_ns},
                   {"bubble_ns", o.bubble_ns},
                   {"cost_ns", o.blocked_ns + o.bubble_ns}};
    if (const auto* c = removal_of(options.removals, o.cause)) {
      w["syncs_per_step"] = c->syncs_per_step;
      w["removal_saving_ns"] = c->saving_ns ? ordered_json(*c->saving_ns) : ordered_json(nullptr);
    }
    j["worst"].push_back(std::move(w));
  }
  j["idle_by_device"] = ordered_json::array();
  for (const auto& t : r.idle_by_device) j["idle_by_device"].push_back(reports_detail::timeline_idle_json(t));
  j["idle_by_stream"] = ordered_json::array();
  for (const auto& t : r.idle_by_stream) j["idle_by_stream"].push_back(reports_detail::timeline_idle_json(t));
  j["gpu"] = reports_detail::gpu_analyses_json(r.gpu);
  j["warnings"] = r.warnings;
  const std::size_t n = std::min(options.max_sync_points, r.sync_points.size());
  j["sync_points_total"] = r.sync_points.size();
  j["sync_points_truncated"] = n < r.sync_points.size();
  j["sync_points"] = ordered_json::array();
  for (std::size_t i = 0; i < n; ++i) j["sync_points"].push_back(sync_point_json(r.sync_points[i]));
  // Names in traces are not always valid UTF-8 (truncated kernel names): replace, never throw.
  return j.dump(options.indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string analysis_to_csv(const AnalysisResult& r, const CauseRemovals* removals) {
  CsvWriter csv;
  const std::string version = std::to_string(r.schema_version);
  csv.row({"window_kind", "window_name", "window_index", "metric", "value", "schema_version"});
  window_rows(csv, "total", r.totals, version);
  for (const auto& s : r.steps) window_rows(csv, "step", s, version);
  for (const auto& l : r.layers) window_rows(csv, "layer", l, version);
  summary_rows(csv, "step_summary", r.step_summary, version);
  summary_rows(csv, "layer_summary", r.layer_summary, version);
  reports_detail::gpu_analyses_rows(r, csv, version);
  // Worst offenders: window_name the cause, window_index its rank (0 the worst).
  for (std::size_t i = 0; i < r.worst.size(); ++i) {
    const Offender& o = r.worst[i];
    auto row = [&](const std::string& metric, const std::string& value) {
      csv.row({"worst", printable(o.cause), std::to_string(i), printable(metric), printable(value), version});
    };
    row("count", number(o.count));
    row("blocked_ns", number(o.blocked_ns));
    row("bubble_ns", number(o.bubble_ns));
    row("cost_ns", number(o.blocked_ns + o.bubble_ns));
    if (const auto* c = removal_of(removals, o.cause)) {
      row("syncs_per_step", number(c->syncs_per_step));
      row("removal_saving_ns", c->saving_ns ? number(*c->saving_ns) : std::string());
    }
  }
  return csv.str();
}

void print_analysis_table(const AnalysisResult& r, std::ostream& out, const CauseRemovals* removals) {
  const WindowStats& t = r.totals;
  const std::string source = r.source.empty() ? r.meta.trace_name : r.source;
  // Names come from the trace: escaped (core/text.hpp), so no escape sequence reaches the terminal.
  out << "syncscope analysis: " << (source.empty() ? std::string("(unnamed trace)") : printable(source)) << "\n";
  std::string producer = r.meta.source_tool.empty() ? "unknown producer" : printable(r.meta.source_tool);
  if (!r.meta.source_version.empty()) producer += " " + printable(r.meta.source_version);
  out << fmt::format("  recorded by {}, {} device(s), span {}\n", producer, t.gpu_busy_by_device.size(),
                     format_duration(t.duration_ns));
  const std::string per = device_count(t) > 1 ? fmt::format("of span x {} devices", device_count(t)) : "of span";
  // Over the GPU window (first to last GPU activity, summed over devices) first, as Holistic
  // Trace Analysis reports it; the whole span (host prologue included) beside it, named.
  out << fmt::format("  GPU busy {} ({} of GPU window, {} {}), kernels {}, copies {}\n", format_duration(t.gpu_busy_ns),
                     percent(fraction(t.idle.busy_ns, t.idle.window_ns)), percent(busy_fraction(t)), per, t.kernels,
                     t.memcpys);
  if (t.comm.kernels > 0)
    out << fmt::format("  compute {}, communication {} in {} NCCL kernels ({} of it overlapped with compute)\n",
                       format_duration(t.compute_kernel_ns), format_duration(t.comm.kernel_ns), t.comm.kernels,
                       percent(t.comm.overlap_fraction));
  out << "\n";
  out << fmt::format("{:<22}{:>10}   blocked {:>10}   bubble {:>10}   stream waits {}\n", "sync points", t.syncs.total,
                     format_duration(t.syncs.blocked_ns), format_duration(t.syncs.bubble_ns),
                     t.syncs.stream_wait_events);
  auto summary_block = [&](const char* what, const std::string& glob, const StepSummary& s) {
    out << fmt::format("  per {} ({} x '{}'): median [p10, p90]\n", what, s.duration_ns.n, printable(glob));
    out << fmt::format("    {:<18}{}\n", "duration", dist_line(s.duration_ns, true));
    out << fmt::format("    {:<18}{}\n", "sync points", dist_line(s.syncs, false));
    out << fmt::format("    {:<18}{}\n", "blocked", dist_line(s.sync_blocked_ns, true));
    out << fmt::format("    {:<18}{}\n", "bubble", dist_line(s.sync_bubble_ns, true));
    out << fmt::format("    {:<18}{}\n", "GPU busy", dist_line(s.gpu_busy_ns, true));
  };
  if (r.step_summary.duration_ns.n > 0) summary_block("step", r.options.step_glob, r.step_summary);
  if (r.layer_summary.duration_ns.n > 0) {
    const auto& l = r.layer_summary;
    out << fmt::format("  per layer ({} x '{}'): sync points {}, blocked {}\n", l.duration_ns.n,
                       printable(r.options.layer_glob), dist_line(l.syncs, false), dist_line(l.sync_blocked_ns, true));
  }
  out << fmt::format("{:<22}H2D {:>6} of {:<12} D2H {:>6} of {}\n", "copy/compute overlap", percent(t.h2d.fraction),
                     format_duration(t.h2d.copy_ns), percent(t.d2h.fraction), format_duration(t.d2h.copy_ns));
  reports_detail::print_idle_table(r, out);
  reports_detail::print_critical_path_table(r, out);
  reports_detail::print_gpu_analyses_table(r.gpu, out);

  if (!r.worst.empty()) {
    out << "\nworst offenders (by blocked + bubble time)\n";
    out << fmt::format("  {:<32}{:>8}{:>13}{:>13}{:>8}\n", "cause", "count", "blocked", "bubble", "share");
    Ns all = 0;
    for (const auto& o : r.worst) all += o.blocked_ns + o.bubble_ns;
    const std::size_t shown = std::min<std::size_t>(r.worst.size(), 6);
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& o = r.worst[i];
      out << fmt::format("  {:<32}{:>8}{:>13}{:>13}{:>8}\n", shorten(printable(o.cause), 31), o.count,
                         format_duration(o.blocked_ns), format_duration(o.bubble_ns),
                         percent(fraction(o.blocked_ns + o.bubble_ns, all)));
    }
    if (r.worst.size() > shown)
      out << fmt::format("  ... and {} more causes (--format json lists all)\n", r.worst.size() - shown);
    // What removing each saves: the trace replayed without that cause's syncs (model/README.md,
    // "Replay"): the step time saved, median over steps; a wait off the critical path saves nothing.
    bool any = false;
    for (std::size_t i = 0; i < shown; ++i) any = any || removal_of(removals, r.worst[i].cause) != nullptr;
    // Without step ranges the replay's one window is the whole trace: say so, not "per step".
    const bool whole = r.steps.empty();
    const std::string per_step = whole ? "" : " per step";
    if (any) {
      out << (whole ? "  if removed (the trace replayed without that cause's syncs; time saved over the whole trace, "
                      "which has no step ranges):\n"
                    : "  if removed (the trace replayed without that cause's syncs; step time saved, median over "
                      "steps):\n");
      for (std::size_t i = 0; i < shown; ++i) {
        const auto* c = removal_of(removals, r.worst[i].cause);
        if (c == nullptr) continue;
        const double n = c->syncs_per_step;
        if (n == 0) {
          out << fmt::format("    {}: none inside a step\n", printable(c->cause));
          continue;
        }
        out << fmt::format("    {} x {}{}: {}\n",
                           std::fabs(n - std::round(n)) < 1e-9 ? fmt::format("{:.0f}", n) : fmt::format("{:.1f}", n),
                           printable(c->cause), per_step,
                           c->saving_ns ? format_duration(*c->saving_ns) + (whole ? "" : "/step") + " if removed"
                                        : std::string("not claimed (a step holds an edge the replay could not build)"));
      }
    }
  }
  if (!r.warnings.empty()) {
    out << "\nwarnings\n";
    const std::size_t shown = std::min<std::size_t>(r.warnings.size(), 6);
    for (std::size_t i = 0; i < shown; ++i) out << "  ! " << printable(r.warnings[i]) << "\n";
    if (r.warnings.size() > shown)
      out << fmt::format("  ... and {} more (--format json lists all)\n", r.warnings.size() - shown);
  }
}

}  // namespace syncscope
