#include "analysis_critical_path.hpp"

#include <array>

#include <fmt/format.h>

#include "syncscope/core/text.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope::reports_detail {

using nlohmann::ordered_json;

namespace {

struct Share {
  const char* name;
  Ns ns;
};
std::array<Share, 5> shares(const CriticalPath& c) {
  return {{{"host", c.host_ns},
           {"gpu", c.gpu_ns},
           {"launch", c.launch_ns},
           {"sync_wait", c.sync_wait_ns},
           {"other", c.other_ns}}};
}

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

ordered_json critical_path_json(const CriticalPath& c) {
  ordered_json j;
  j["length_ns"] = c.length_ns;
  for (const auto& s : shares(c)) j[std::string(s.name) + "_ns"] = s.ns;
  ordered_json f = ordered_json::object();
  for (const auto& s : shares(c)) f[s.name] = fraction(s.ns, c.length_ns);
  j["fractions"] = std::move(f);
  j["sync_edges"] = c.sync_edges;
  j["steps"] = c.steps;
  j["top"] = ordered_json::array();
  for (const auto& r : c.top)
    j["top"].push_back(ordered_json{{"kind", std::string(critical_kind_name(r.kind))},
                                    {"where", r.where},
                                    {"what", r.what},
                                    {"start_ns", r.start_ns},
                                    {"duration_ns", r.duration_ns},
                                    {"count", r.count}});
  return j;
}

void critical_path_rows(const CriticalPath& c, const std::function<void(const std::string&, const std::string&)>& row) {
  row("critical_path.length_ns", std::to_string(c.length_ns));
  for (const auto& s : shares(c))
    row(fmt::format("critical_path.{}_ns", s.name), std::to_string(s.ns));  // printed-name-ok
  for (const auto& s : shares(c))
    row(fmt::format("critical_path.fractions.{}", s.name),  // printed-name-ok
        num(fraction(s.ns, c.length_ns)));
  row("critical_path.sync_edges", std::to_string(c.sync_edges));
  row("critical_path.steps", std::to_string(c.steps));
  for (std::size_t i = 0; i < c.top.size(); ++i) {
    const auto& r = c.top[i];
    const std::string p = fmt::format("critical_path.top.{}.", i + 1);
    row(p + "kind", std::string(critical_kind_name(r.kind)));
    row(p + "where", r.where);
    row(p + "what", r.what);
    row(p + "start_ns", std::to_string(r.start_ns));
    row(p + "duration_ns", std::to_string(r.duration_ns));
    row(p + "count", std::to_string(r.count));
  }
}

void print_critical_path_table(const AnalysisResult& r, std::ostream& out) {
  if (!r.totals.critical_path || r.totals.critical_path->length_ns <= 0) return;
  const CriticalPath& c = *r.totals.critical_path;
  auto pct = [&](Ns ns) { return fmt::format("{:.1f}%", 100.0 * fraction(ns, c.length_ns)); };
  const std::string over = r.steps.empty() ? std::string("whole trace") : fmt::format("{} step(s)", c.steps);
  out << fmt::format(
      "\ncritical path (replayed, {})  {}: host {}, GPU {}, launch {}, sync wait {}, other {}; {} sync "
      "edge(s)\n",
      over, format_duration(c.length_ns), pct(c.host_ns), pct(c.gpu_ns), pct(c.launch_ns), pct(c.sync_wait_ns),
      pct(c.other_ns), c.sync_edges);
  if (c.top.empty()) return;
  out << "  longest runs on it" << (c.steps > 1 ? " (summed over steps)" : "") << "\n";
  for (const auto& run : c.top) {
    std::string where = printable(run.where);
    if (where.size() > 44) where = where.substr(0, 41) + "...";
    std::string what = printable(run.what);
    if (what.size() > 60) what = what.substr(0, 57) + "...";
    out << fmt::format("    {:<44}{:>5} x {:>11}  {}\n", where, run.count, format_duration(run.duration_ns), what);
  }
}

}  // namespace syncscope::reports_detail
