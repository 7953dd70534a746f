#include "analysis_gpu_printers.hpp"

#include "analysis_hta_printers.hpp"
#include "analysis_memory_printers.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "analysis_hta_extras.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/reports/analysis_printers.hpp"
#include "text_cells.hpp"

namespace syncscope::reports_detail {

using nlohmann::ordered_json;

namespace {

std::string pct(double f) { return fmt::format("{:.1f}%", 100.0 * f); }
std::string stream_name(std::int32_t device, std::int64_t stream) {
  return stream < 0 ? fmt::format("device {}", device) : fmt::format("device {} stream {}", device, stream);
}

}  // namespace

ordered_json stats_json(const DurationStats& s) {
  return ordered_json{{"count", s.count},   {"total_ns", s.total_ns}, {"median_ns", s.median_ns}, {"p90_ns", s.p90_ns},
                      {"max_ns", s.max_ns}, {"min_ns", s.min_ns},     {"mean_ns", s.mean_ns},     {"std_ns", s.std_ns}};
}

ordered_json idle_json(const IdleBreakdown& b, Ns span_ns) {
  ordered_json j;
  j["window_ns"] = b.window_ns;
  j["busy_ns"] = b.busy_ns;
  j["sync_bubble_ns"] = b.sync_bubble_ns;
  j["host_wait_ns"] = b.host_wait_ns;
  j["dependency_wait_ns"] = b.dependency_wait_ns;
  j["other_ns"] = b.other_ns;
  // The window's own span beside the GPU window, named, so no percentage is read over it.
  j["span_ns"] = span_ns;
  j["fractions_of_window"] = ordered_json{{"busy", fraction(b.busy_ns, b.window_ns)},
                                          {"sync_bubble", fraction(b.sync_bubble_ns, b.window_ns)},
                                          {"host_wait", fraction(b.host_wait_ns, b.window_ns)},
                                          {"dependency_wait", fraction(b.dependency_wait_ns, b.window_ns)},
                                          {"other", fraction(b.other_ns, b.window_ns)}};
  j["sync_bubble_by_cause"] = ordered_json::object();
  for (const auto& [c, ns] : b.sync_bubble_by_cause) j["sync_bubble_by_cause"][c] = ns;
  return j;
}

ordered_json timeline_idle_json(const TimelineIdle& t) {
  ordered_json j;
  j["device"] = t.device;
  if (t.stream >= 0) j["stream"] = t.stream;
  j["first_ns"] = t.first_ns;
  j["last_ns"] = t.last_ns;
  j["gaps"] = t.gaps;
  j["idle"] = idle_json(t.idle, t.last_ns - t.first_ns);
  j["verdict"] = std::string(verdict_name(t.verdict));
  return j;
}

ordered_json gpu_analyses_json(const GpuAnalyses& g) {
  ordered_json j;
  auto groups = [](const std::vector<KernelGroup>& v) {
    ordered_json a = ordered_json::array();
    for (const auto& k : v) {
      ordered_json e{{"name", k.name}, {"class", std::string(kernel_class_name(k.cls))}};
      e.update(stats_json(k.stats));
      a.push_back(std::move(e));
    }
    return a;
  };
  j["kernels_by_class"] = groups(g.by_class);
  j["kernels_by_name"] = groups(g.by_name);
  j["kernel_names"] = g.kernel_names;
  j["launch_delay"] = ordered_json::array();
  for (const auto& s : g.launch_delay) {
    ordered_json e{{"device", s.device}, {"stream", s.stream}, {"delay", stats_json(s.delay)}};
    e["worst"] = ordered_json::array();
    for (const auto& w : s.worst)
      e["worst"].push_back(ordered_json{{"api", w.api},
                                        {"kernel", w.kernel},
                                        {"launch_ns", w.launch_ns},
                                        {"start_ns", w.start_ns},
                                        {"delay_ns", w.delay_ns},
                                        {"correlation", w.correlation}});
    j["launch_delay"].push_back(std::move(e));
  }
  j["queue_length"] = ordered_json::array();
  for (const auto& q : g.queues)
    j["queue_length"].push_back(ordered_json{{"device", q.device},
                                             {"stream", q.stream},
                                             {"max", q.max_depth},
                                             {"max_at_ns", q.max_at_ns},
                                             {"mean", q.mean_depth}});
  // Kernels per ATen op, queue length over time (analysis_hta_extras.cpp).
  j["aten_op_kernels"] = aten_op_kernels_json(g.aten_ops);
  j["queue_series"] = queue_series_json(g.queue_series);
  j["annotations"] = ordered_json::array();
  for (const auto& a : g.annotations)
    j["annotations"].push_back(ordered_json{{"name", a.name},
                                            {"count", a.count},
                                            {"host_ns", a.host_ns},
                                            {"gpu_ns", a.gpu_ns},
                                            {"activities", a.activities}});
  j["copy_bandwidth"] = ordered_json::array();
  for (const auto& c : g.copies)
    j["copy_bandwidth"].push_back(ordered_json{{"kind", std::string(kind_name(c.kind))},
                                               {"host_memory", std::string(kind_name(c.host_memory))},
                                               {"count", c.count},
                                               {"bytes", c.bytes},
                                               {"time_ns", c.time_ns},
                                               {"gb_per_s", c.gb_per_s}});
  j["findings"] = ordered_json::array();
  for (const auto& f : g.findings) {
    ordered_json e{{"rule", f.rule}, {"title", f.title}, {"count", f.count}, {"host_ns", f.host_ns}};
    e["events"] = ordered_json::array();
    for (const auto& ev : f.events)
      e["events"].push_back(ordered_json{{"api", ev.api},
                                         {"pid", ev.pid},
                                         {"tid", ev.tid},
                                         {"start_ns", ev.start_ns},
                                         {"duration_ns", ev.duration_ns},
                                         {"correlation", ev.correlation},
                                         {"bytes", ev.bytes},
                                         {"calls", ev.calls}});
    e["advice"] = f.advice;
    j["findings"].push_back(std::move(e));
  }
  j["memory"] = memory_json(g.memory);  // memory (issue 38): analysis_memory_printers.cpp
  hta_breakdowns_json(g, j);            // gpu_annotations, kernel_sequences (analysis_hta_printers.cpp)
  return j;
}

void idle_rows(const IdleBreakdown& b, IdleVerdict v,
               const std::function<void(const std::string&, const std::string&)>& row) {
  row("idle.window_ns", std::to_string(b.window_ns));
  row("idle.busy_ns", std::to_string(b.busy_ns));
  row("idle.sync_bubble_ns", std::to_string(b.sync_bubble_ns));
  row("idle.host_wait_ns", std::to_string(b.host_wait_ns));
  row("idle.dependency_wait_ns", std::to_string(b.dependency_wait_ns));
  row("idle.other_ns", std::to_string(b.other_ns));
  for (const auto& [c, ns] : b.sync_bubble_by_cause) row("idle.sync_bubble_by_cause." + c, std::to_string(ns));
  row("verdict", std::string(verdict_name(v)));
}

void gpu_analyses_rows(const AnalysisResult& r, CsvWriter& csv, const std::string& version) {
  auto rows_for = [&](const std::string& kind, const std::string& name) {
    return [&csv, &version, kind, name](const std::string& metric, const std::string& value) {
      // Kernel, annotation and stream names come from the trace: escaped as in the tables.
      csv.row({kind, printable(name), "0", printable(metric), printable(value), version});
    };
  };
  auto num = [](auto v) { return fmt::format("{}", v); };
  for (const auto* list : {&r.idle_by_device, &r.idle_by_stream})
    for (const auto& t : *list)
      idle_rows(t.idle, t.verdict,
                rows_for(t.stream < 0 ? "idle_device" : "idle_stream", stream_name(t.device, t.stream)));
  auto stats_rows = [&](const std::function<void(const std::string&, const std::string&)>& row, const DurationStats& s,
                        const std::string& prefix) {
    row(prefix + "count", num(s.count));
    row(prefix + "total_ns", num(s.total_ns));
    row(prefix + "median_ns", num(s.median_ns));
    row(prefix + "p90_ns", num(s.p90_ns));
    row(prefix + "max_ns", num(s.max_ns));
    row(prefix + "min_ns", num(s.min_ns));
    row(prefix + "mean_ns", num(s.mean_ns));
    row(prefix + "std_ns", num(s.std_ns));
  };
  const auto& g = r.gpu;
  for (const auto& k : g.by_class) stats_rows(rows_for("kernel_class", k.name), k.stats, "");
  for (const auto& k : g.by_name) {
    auto row = rows_for("kernel", k.name);
    row("class", std::string(kernel_class_name(k.cls)));
    stats_rows(row, k.stats, "");
  }
  for (const auto& s : g.launch_delay)
    stats_rows(rows_for("launch_delay", stream_name(s.device, s.stream)), s.delay, "delay.");
  for (const auto& q : g.queues) {
    auto row = rows_for("queue", stream_name(q.device, q.stream));
    row("max", num(q.max_depth));
    row("max_at_ns", num(q.max_at_ns));
    row("mean", num(q.mean_depth));
  }
  for (const auto& a : g.annotations) {
    auto row = rows_for("annotation", a.name);
    row("count", num(a.count));
    row("host_ns", num(a.host_ns));
    row("gpu_ns", num(a.gpu_ns));
    row("activities", num(a.activities));
  }
  for (const auto& c : g.copies) {
    auto row = rows_for("copy", fmt::format("{} {}", kind_name(c.kind), kind_name(c.host_memory)));
    row("count", num(c.count));
    row("bytes", num(c.bytes));
    row("time_ns", num(c.time_ns));
    row("gb_per_s", num(c.gb_per_s));
  }
  for (const auto& f : g.findings) {
    auto row = rows_for("finding", f.rule);
    row("count", num(f.count));
    row("host_ns", num(f.host_ns));
  }
  hta_extras_rows(g, csv, version);      // kernels per ATen op, queue length over time
  memory_rows(g.memory, csv, version);   // memory (issue 38): analysis_memory_printers.cpp
  hta_breakdowns_rows(g, csv, version);  // gpu_annotation, kernel_sequence (analysis_hta_printers.cpp)
}

void print_idle_table(const AnalysisResult& r, std::ostream& out) {
  const IdleBreakdown& i = r.totals.idle;
  if (i.window_ns <= 0) return;
  const double w = static_cast<double>(i.window_ns);
  auto f = [&](Ns ns) { return pct(static_cast<double>(ns) / w); };
  out << fmt::format("{:<22}{} (span {}): {}\n", "GPU window", format_duration(i.window_ns),
                     format_duration(r.totals.duration_ns), verdict_name(r.totals.verdict));
  out << fmt::format("  busy {}, idle: sync bubble {}, host wait {}, dependency wait {}, other {}\n", f(i.busy_ns),
                     f(i.sync_bubble_ns), f(i.host_wait_ns), f(i.dependency_wait_ns), f(i.other_ns));
  if (!r.steps.empty()) {
    std::map<IdleVerdict, std::size_t> n;
    for (const auto& s : r.steps) ++n[s.verdict];
    std::string line;
    for (const auto& [v, c] : n) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", verdict_name(v), c);
    out << fmt::format("  steps: {}\n", line);  // printed-name-ok: verdict names and counts
  }
}

void print_gpu_analyses_table(const GpuAnalyses& g, std::ostream& out) {
  if (!g.by_class.empty()) {
    Ns all = 0;
    for (const auto& k : g.by_class) all += k.stats.total_ns;
    std::string line;
    for (const auto& k : g.by_class)
      line += fmt::format("{}{} {}", line.empty() ? "" : ", ", printable(k.name), pct(fraction(k.stats.total_ns, all)));
    out << "\nGPU time by class: " << line << "\n";
    out << fmt::format("  {:<34}{:>7}{:>11}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "top kernels", "count", "total", "median",
                       "p90", "min", "max", "std");
    for (std::size_t i = 0; i < std::min<std::size_t>(5, g.by_name.size()); ++i) {
      const auto& k = g.by_name[i];
      out << fmt::format("  {:<34}{:>7}{:>11}{:>10}{:>10}{:>10}{:>10}{:>10}\n", shorten(printable(k.name), 33),
                         k.stats.count, format_duration(k.stats.total_ns), duration_cell(k.stats.median_ns),
                         duration_cell(k.stats.p90_ns), format_duration(k.stats.min_ns),
                         format_duration(k.stats.max_ns), duration_cell(k.stats.std_ns));
    }
  }
  if (!g.launch_delay.empty()) {
    out << "launch delay (launch call -> kernel start): median [p90], worst\n";
    std::vector<const StreamLaunchDelay*> v;
    for (const auto& s : g.launch_delay) v.push_back(&s);
    std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->delay.count > b->delay.count; });
    for (std::size_t i = 0; i < std::min<std::size_t>(3, v.size()); ++i)
      out << fmt::format("  {:<24}{:>8} kernels  {} [{}], worst {}\n", stream_name(v[i]->device, v[i]->stream),
                         v[i]->delay.count, duration_cell(v[i]->delay.median_ns), duration_cell(v[i]->delay.p90_ns),
                         format_duration(v[i]->delay.max_ns));
  }
  if (!g.queues.empty()) {
    std::string line;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, g.queues.size()); ++i)
      line += fmt::format("{}stream {} max {} mean {:.1f}", i ? "; " : "", g.queues[i].stream, g.queues[i].max_depth,
                          g.queues[i].mean_depth);
    out << "queue length: " << line << "\n";
  }
  print_hta_extras_table(g, out);  // kernels per ATen op, queue length over time
  if (!g.annotations.empty()) {
    out << "GPU time per annotation (launched inside it)\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, g.annotations.size()); ++i)
      out << fmt::format("  {:<44}{:>6} x  GPU {:>12}  host {:>12}\n", shorten(printable(g.annotations[i].name), 43),
                         g.annotations[i].count, format_duration(g.annotations[i].gpu_ns),
                         format_duration(g.annotations[i].host_ns));
  }
  print_hta_breakdowns_table(g, out);  // GPU annotations, kernel sequences (analysis_hta_printers.cpp)
  for (const auto& c : g.copies)
    out << fmt::format("copies {} ({}): {} x, {} bytes, {:.3g} GB/s\n", kind_name(c.kind), kind_name(c.host_memory),
                       c.count, c.bytes, c.gb_per_s);
  if (!g.findings.empty()) {
    out << "\nfindings\n";
    for (const auto& f : g.findings)
      out << fmt::format("  {} x {} (host {}): {}\n", f.count, f.title, format_duration(f.host_ns), f.advice);
  }
  print_memory_table(g.memory, out);  // memory (issue 38): analysis_memory_printers.cpp
}

}  // namespace syncscope::reports_detail
