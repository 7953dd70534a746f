// The sections of `syncscope view` beside the timeline (view.hpp): idle per stream (ours
// and HTA's classes as stacked bars and a table), the critical path's shares, the step's
// sync points, the worst causes with their replayed saving, kernels, launch delays and the
// ranks side by side. Rendering only: every number comes from the ViewTrace.
#include <fmt/format.h>

#include <algorithm>

#include "html_format.hpp"
#include "view_internal.hpp"

namespace syncscope::view_detail {

namespace {

using html::duration_text;
using html::esc;

std::string dur(Ns ns) { return duration_text(static_cast<double>(ns)); }
std::string pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "&ndash;";
}

struct Part {
  const char* cls;
  Ns ns;
};

std::string stacked(double x0, int y, double px_per_ns, const std::vector<Part>& parts, const std::string& who) {
  std::string s;
  double x = x0;
  for (const Part& p : parts) {
    const double w = static_cast<double>(p.ns) * px_per_ns;
    if (w <= 0) continue;
    s += fmt::format(
        R"(<rect class="idle-part {}" x="{:.2f}" y="{}" width="{:.2f}" height="11"><title>{} {}: {}</title></rect>)",
        p.cls, x, y, w, who, p.cls, dur(p.ns));
    x += w;
  }
  return s;
}

}  // namespace

std::string idle_section(const std::string& id, const ViewTrace& v) {
  if (v.stream_idle.empty()) return "<p class=\"note\">No GPU activity: no idle to break down.</p>\n";
  Ns max_idle = 1;
  for (const auto& s : v.stream_idle) {
    max_idle = std::max(max_idle, s.ours.idle.idle_ns());
    max_idle = std::max(max_idle, s.hta.host_wait_ns + s.hta.kernel_wait_ns + s.hta.other_ns);
  }
  const int left = 200, plot = 900, row_h = 30;
  const int height = 8 + static_cast<int>(v.stream_idle.size()) * row_h + 6;
  const double px = plot / static_cast<double>(max_idle);
  std::string svg = fmt::format(
      R"(<svg class="chart idle-chart" id="{}" viewBox="0 0 1180 {}" width="1180" height="{}" role="img" aria-label="idle per stream">)",
      id, height, height);
  std::string rows;
  int y = 8;
  for (const auto& s : v.stream_idle) {
    const IdleBreakdown& b = s.ours.idle;
    const std::string name = fmt::format("GPU {} stream {}", s.ours.device, s.ours.stream);
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", left - 6, y + 13, esc(name));
    svg += fmt::format(R"(<text class="who" x="{}" y="{}">ours</text>)", left + 2, y + 9);
    svg += stacked(left + 34, y, px,
                   {{"sync-bubble", b.sync_bubble_ns},
                    {"host-wait", b.host_wait_ns},
                    {"dependency-wait", b.dependency_wait_ns},
                    {"other", b.other_ns}},
                   "ours");
    svg += fmt::format(R"(<text class="who" x="{}" y="{}">HTA</text>)", left + 2, y + 22);
    svg += stacked(left + 34, y + 13, px,
                   {{"hta-host-wait", s.hta.host_wait_ns},
                    {"hta-kernel-wait", s.hta.kernel_wait_ns},
                    {"hta-other", s.hta.other_ns}},
                   "HTA");
    y += row_h;
    rows += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
        esc(name), dur(b.window_ns), pct(static_cast<double>(b.busy_ns), static_cast<double>(b.window_ns)),
        dur(b.sync_bubble_ns), dur(b.host_wait_ns), dur(b.dependency_wait_ns), dur(b.other_ns), dur(s.hta.host_wait_ns),
        dur(s.hta.kernel_wait_ns), dur(s.hta.other_ns), verdict_name(s.ours.verdict));
  }
  svg += "</svg>\n";
  const char* legend =
      R"(<div class="legend"><span><i class="k-sync-bubble"></i>sync bubble</span><span><i class="k-host-wait"></i>host wait</span>)"
      R"(<span><i class="k-dependency-wait"></i>dependency wait</span><span><i class="k-other-idle"></i>other</span>)"
      R"( &#8212; HTA: <span><i class="k-hta-host-wait"></i>host wait</span><span><i class="k-hta-kernel-wait"></i>kernel wait</span>)"
      R"(<span><i class="k-hta-other"></i>other</span></div>)";
  return std::string(legend) + "\n" + svg +
         "<table class=\"idle\"><tr><th class=\"l\">stream</th><th>GPU window</th><th>busy</th><th>sync bubble</th>"
         "<th>host wait</th><th>dependency wait</th><th>other</th><th>HTA host wait</th><th>HTA kernel wait</th>"
         "<th>HTA other</th><th class=\"l\">verdict</th></tr>\n" +
         rows + "</table>\n";
}

std::string critical_path_section(const ViewTrace& v) {
  if (!v.critical) return "<p class=\"note\">No critical path: the replay found no host call in this window.</p>\n";
  const CriticalPath& c = *v.critical;
  const double L = static_cast<double>(c.length_ns);
  std::string s = fmt::format(
      "<p class=\"critical-summary\">Critical path {}: host {}, GPU {}, launch {}, sync wait {}, other {}; {} sync "
      "edge(s) on it.</p>\n",
      dur(c.length_ns), pct(static_cast<double>(c.host_ns), L), pct(static_cast<double>(c.gpu_ns), L),
      pct(static_cast<double>(c.launch_ns), L), pct(static_cast<double>(c.sync_wait_ns), L),
      pct(static_cast<double>(c.other_ns), L), c.sync_edges);
  // The path is the identity replay's: beside the recorded window, so a replay that misses
  // on this trace (predict --trace gives its error) is seen, not hidden.
  const Ns recorded = v.has_step ? v.result.steps[v.step_index].duration_ns : v.window_end - v.window_start;
  if (recorded > 0)
    s += fmt::format("<p class=\"note\">Recorded {} {}; the replayed path is {:.2f} times that.</p>\n",
                     v.has_step ? "step" : "trace", dur(recorded), L / static_cast<double>(recorded));
  s += "<table class=\"critical-runs\"><tr><th class=\"l\">kind</th><th class=\"l\">where</th><th class=\"l\">what</th>"
       "<th>from step start</th><th>duration</th></tr>\n";
  for (const auto& r : c.top)
    s += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>\n",
        critical_kind_name(r.kind), esc(r.where), esc(r.what), dur(r.start_ns), dur(r.duration_ns));
  return s + "</table>\n";
}

std::string syncs_table(const ViewTrace& v) {
  if (v.syncs.empty()) return "<p class=\"note\">No sync point in this window.</p>\n";
  constexpr std::size_t kRows = 40;
  std::string s =
      "<table class=\"syncs\"><tr><th>at</th><th class=\"l\">thread</th><th class=\"l\">cause</th>"
      "<th class=\"l\">API</th><th>blocked</th><th>bubble left</th></tr>\n";
  for (std::size_t i = 0; i < v.syncs.size() && i < kRows; ++i) {
    const SyncPoint& p = v.syncs[i];
    s += fmt::format(
        "<tr><td>{}</td><td class=\"l\">{} / {}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        dur(p.start - v.window_start), p.pid, p.tid, esc(p.cause), esc(p.api), dur(p.blocked_ns), dur(p.bubble_ns));
  }
  s += "</table>\n";
  if (v.syncs.size() > kRows)
    s += fmt::format("<p class=\"note\">The first {} of {} sync points marked; all are on the timeline.</p>\n", kRows,
                     v.syncs.size());
  return s;
}

std::string causes_table(const ViewTrace& v) {
  const auto& worst = v.result.worst;
  if (worst.empty()) return "<p class=\"note\">No sync point in the trace.</p>\n";
  std::string s =
      "<table class=\"causes\"><tr><th class=\"l\">cause</th><th>count</th><th>blocked</th><th>bubble</th>"
      "<th>per step</th><th>replayed saving per step</th></tr>\n";
  for (std::size_t i = 0; i < worst.size() && i < 10; ++i) {
    const Offender& w = worst[i];
    std::string per_step = "&ndash;", saving = "not replayed";
    for (const auto& r : v.removals)
      if (r.cause == w.cause) {
        per_step = fmt::format("{:.1f}", r.syncs_per_step);
        saving = r.saving_ns ? dur(*r.saving_ns) : "not claimed (no step fully replayed)";
      }
    s += fmt::format("<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     esc(w.cause), w.count, dur(w.blocked_ns), dur(w.bubble_ns), per_step, saving);
  }
  return s + "</table>\n";
}

std::string kernels_table(const ViewTrace& v) {
  const auto& k = v.result.gpu.by_name;
  if (k.empty()) return "<p class=\"note\">No kernels in the trace.</p>\n";
  std::string s =
      "<table class=\"kernels\"><tr><th class=\"l\">kernel</th><th class=\"l\">class</th><th>count</th>"
      "<th>total</th><th>median</th><th>p90</th><th>max</th></tr>\n";
  for (std::size_t i = 0; i < k.size() && i < 15; ++i) {
    const std::string name = clip(k[i].name, 90);
    s += fmt::format(
        "<tr><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        esc(k[i].name), esc(name), kernel_class_name(k[i].cls), k[i].stats.count, dur(k[i].stats.total_ns),
        duration_text(k[i].stats.median_ns), duration_text(k[i].stats.p90_ns), dur(k[i].stats.max_ns));
  }
  s += "</table>\n";
  if (v.result.gpu.kernel_names > 15)
    s += fmt::format("<p class=\"note\">15 of {} kernel names, by total time.</p>\n", v.result.gpu.kernel_names);
  return s;
}

std::string launch_delay_table(const ViewTrace& v) {
  const auto& d = v.result.gpu.launch_delay;
  if (d.empty()) return "<p class=\"note\">No kernel with a launch call in the trace.</p>\n";
  std::string s =
      "<table class=\"launch-delay\"><tr><th class=\"l\">stream</th><th>kernels</th><th>median</th>"
      "<th>p90</th><th>max</th><th class=\"l\">worst launch</th></tr>\n";
  for (const auto& st : d) {
    std::string worst = "&ndash;";
    if (!st.worst.empty()) {
      const auto& w = st.worst.front();
      const std::string kn = clip(w.kernel, 60);
      worst = esc(w.api) + " &#8594; " + esc(kn) + " " + dur(w.delay_ns);
    }
    s += fmt::format(
        "<tr><td class=\"l\">GPU {} stream {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"l\">{}</td></tr>\n",
        st.device, st.stream, st.delay.count, duration_text(st.delay.median_ns), duration_text(st.delay.p90_ns),
        dur(st.delay.max_ns), worst);
  }
  return s + "</table>\n";
}

std::string ranks_table(const ViewPage& page) {  // whole-trace figures, one row per trace
  std::string s =
      "<table class=\"ranks\"><tr><th class=\"l\">trace</th><th>steps</th><th>median step</th>"
      "<th>sync points</th><th>blocked</th><th>bubble</th><th>GPU busy</th><th class=\"l\">verdict</th>"
      "<th class=\"l\">top cause</th></tr>\n";
  for (std::size_t i = 0; i < page.traces.size(); ++i) {
    const ViewTrace& t = page.traces[i];
    const WindowStats& w = t.result.totals;
    const std::string name =
        i < page.max_sections ? fmt::format("<a href=\"#trace-{}\">{}</a>", i, esc(t.label)) : esc(t.label);
    s += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
        name, t.result.steps.size(),
        t.result.step_summary.duration_ns.n ? duration_text(t.result.step_summary.duration_ns.median) : "&ndash;",
        w.syncs.total, dur(w.syncs.blocked_ns), dur(w.syncs.bubble_ns), dur(w.gpu_busy_ns), verdict_name(w.verdict),
        t.result.worst.empty() ? "&ndash;" : esc(t.result.worst.front().cause));
  }
  return s + "</table>\n";
}

}  // namespace syncscope::view_detail
