#include "analysis_hta_extras.hpp"
#include "text_cells.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "syncscope/core/text.hpp"
#include "syncscope/core/units.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope::reports_detail {

using nlohmann::ordered_json;

namespace {

constexpr std::size_t kTableGroups = 5;

std::string hta_stream_name(std::int32_t device, std::int64_t stream) {
  return fmt::format("device {} stream {}", device, stream);
}

}  // namespace

ordered_json aten_op_kernels_json(const AtenOpKernels& a) {
  ordered_json j{{"ops", a.ops},
                 {"launches", a.launches},
                 {"launches_outside_ops", a.launches_outside_ops},
                 {"groups_total", a.group_count},
                 {"groups_truncated", a.group_count > a.groups.size()}};
  j["groups"] = ordered_json::array();
  for (const auto& g : a.groups)
    j["groups"].push_back(ordered_json{{"op", g.op},
                                       {"kernels", g.kernels},
                                       {"kernels_per_op", g.kernels_per_op},
                                       {"count", g.count},
                                       {"op_delay_mean_ns", g.op_delay_mean_ns},
                                       {"op_delay_max_ns", g.op_delay_max_ns},
                                       {"launch_delay_mean_ns", g.launch_delay_mean_ns},
                                       {"launch_delay_max_ns", g.launch_delay_max_ns},
                                       {"kernel_ns", g.kernel_ns}});
  return j;
}

ordered_json queue_series_json(const QueueSeries& q) {
  ordered_json j{{"threshold", q.threshold},
                 {"trace_ns", q.trace_ns},
                 {"max_points_per_stream", kQueueSeriesMaxPoints},
                 {"point_fields", ordered_json::array({"t_ns", "depth", "pending"})}};
  j["streams"] = ordered_json::array();
  for (const auto& s : q.streams) {
    ordered_json e{{"device", s.device},
                   {"stream", s.stream},
                   {"change_points", s.change_points},
                   {"bucket_ns", s.bucket_ns},
                   {"max_pending", s.max_pending},
                   {"blocked_ns", s.blocked_ns},
                   {"blocked_fraction", fraction(s.blocked_ns, q.trace_ns)}};
    ordered_json pts = ordered_json::array();
    for (const auto& p : s.points) pts.push_back(ordered_json::array({p.t_ns, p.depth, p.pending}));
    e["points"] = std::move(pts);
    j["streams"].push_back(std::move(e));
  }
  return j;
}

void hta_extras_rows(const GpuAnalyses& g, CsvWriter& csv, const std::string& version) {
  auto row = [&](const char* kind, const std::string& name, std::size_t index, const std::string& metric,
                 const std::string& value) {
    // Op, kernel and stream names come from the trace: escaped as in the tables.
    csv.row({kind, printable(name), std::to_string(index), metric, printable(value), version});
  };
  auto num = [](auto v) { return fmt::format("{}", v); };
  const auto& a = g.aten_ops;
  row("aten_ops", "trace", 0, "ops", num(a.ops));
  row("aten_ops", "trace", 0, "launches", num(a.launches));
  row("aten_ops", "trace", 0, "launches_outside_ops", num(a.launches_outside_ops));
  row("aten_ops", "trace", 0, "groups_total", num(a.group_count));
  for (std::size_t i = 0; i < a.groups.size(); ++i) {
    const auto& x = a.groups[i];
    row("aten_op", x.op, i, "kernels", x.kernels);
    row("aten_op", x.op, i, "kernels_per_op", num(x.kernels_per_op));
    row("aten_op", x.op, i, "count", num(x.count));
    row("aten_op", x.op, i, "op_delay_mean_ns", num(x.op_delay_mean_ns));
    row("aten_op", x.op, i, "op_delay_max_ns", num(x.op_delay_max_ns));
    row("aten_op", x.op, i, "launch_delay_mean_ns", num(x.launch_delay_mean_ns));
    row("aten_op", x.op, i, "launch_delay_max_ns", num(x.launch_delay_max_ns));
    row("aten_op", x.op, i, "kernel_ns", num(x.kernel_ns));
  }
  const auto& q = g.queue_series;
  for (const auto& s : q.streams) {
    const std::string name = hta_stream_name(s.device, s.stream);
    row("queue_blocked", name, 0, "threshold", num(q.threshold));
    row("queue_blocked", name, 0, "max_pending", num(s.max_pending));
    row("queue_blocked", name, 0, "blocked_ns", num(s.blocked_ns));
    row("queue_blocked", name, 0, "blocked_fraction", num(fraction(s.blocked_ns, q.trace_ns)));
    row("queue_blocked", name, 0, "change_points", num(s.change_points));
    row("queue_blocked", name, 0, "bucket_ns", num(s.bucket_ns));
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      row("queue_point", name, i, "t_ns", num(s.points[i].t_ns));
      row("queue_point", name, i, "depth", num(s.points[i].depth));
      row("queue_point", name, i, "pending", num(s.points[i].pending));
    }
  }
}

void print_hta_extras_table(const GpuAnalyses& g, std::ostream& out) {
  const auto& a = g.aten_ops;
  if (a.launches == 0 && a.launches_outside_ops > 0)
    out << fmt::format("kernels per ATen op: none (no aten op around any of the {} kernel launches)\n",
                       a.launches_outside_ops);
  if (a.launches > 0) {
    out << fmt::format("kernels per ATen op: {} ops launched {} kernels ({} launches outside any aten op)\n", a.ops,
                       a.launches, a.launches_outside_ops);
    if (!a.groups.empty())
      out << fmt::format("  {:<24}{:>7}{:>12}{:>12}  {}\n", "op", "count", "op delay", "launch", "kernels");
    const std::size_t n = std::min(kTableGroups, a.groups.size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto& x = a.groups[i];
      out << fmt::format("  {:<24}{:>7}{:>12}{:>12}  {}\n", shorten(printable(x.op), 23), x.count,
                         format_duration(x.op_delay_mean_ns), format_duration(x.launch_delay_mean_ns),
                         shorten(printable(x.kernels), 60));
    }
    if (a.group_count > n)
      out << fmt::format("  ... {} more (op, kernel sequence) groups (JSON gpu.aten_op_kernels)\n", a.group_count - n);
  }
  const auto& q = g.queue_series;
  if (q.streams.empty()) return;
  std::uint64_t points = 0, bucketed = 0;
  const StreamQueueSeries* worst = nullptr;
  for (const auto& s : q.streams) {
    points += s.change_points;
    bucketed += s.bucket_ns > 0;
    if (!worst || s.blocked_ns > worst->blocked_ns ||
        (s.blocked_ns == worst->blocked_ns && s.max_pending > worst->max_pending))
      worst = &s;
  }
  out << fmt::format("queue length over time: {} stream{}, {} change points{}\n", q.streams.size(),
                     q.streams.size() == 1 ? "" : "s", points,
                     bucketed
                         ? fmt::format(" ({} streams bucketed to at most {} points)", bucketed, kQueueSeriesMaxPoints)
                         : std::string());
  if (worst->blocked_ns > 0)
    out << fmt::format("  blocked on a full queue (launched, not started >= {}): {} ({}) on {}\n", q.threshold,
                       format_duration(worst->blocked_ns),
                       fmt::format("{:.1f}% of trace", 100.0 * fraction(worst->blocked_ns, q.trace_ns)),
                       hta_stream_name(worst->device, worst->stream));
  else
    out << fmt::format("  never blocked on a full queue (launched, not started >= {}; at most {} on {})\n", q.threshold,
                       worst->max_pending, hta_stream_name(worst->device, worst->stream));
}

}  // namespace syncscope::reports_detail
