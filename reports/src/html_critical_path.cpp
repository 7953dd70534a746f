// The report's critical path of each variant's step (timelines.json "critical_path";
// analysis/critical_path.hpp has the definitions): one stacked bar per variant of where the
// path runs (host, GPU, launch, sync wait, other) and, below it, the path's longest runs.
// The same figures as `analyze --critical-path` on that variant's trace.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "html_format.hpp"
#include "html_parts.hpp"

namespace syncscope::html {

namespace {

// How many of a step's longest runs the table lists (the strip keeps kCriticalTopRuns).
constexpr std::size_t kRunsShown = 3;

// Fills of the five shares; inline, as the idle chart's classes without a report.css colour.
struct Share {
  const char* cls;
  const char* fill;
  const char* what;
};
constexpr Share kShares[] = {{"cp-host", "#4a7bd0", "host (calls and framework time)"},
                             {"cp-gpu", "#3f9e5a", "GPU (kernels, copies, memsets)"},
                             {"cp-launch", "#a0a0a0", "launch (call to GPU start)"},
                             {"cp-sync-wait", "#d0453d", "sync wait (awaited work's end to the sync's return)"},
                             {"cp-other", "#e0b040", "other"}};

Ns share_ns(const CriticalPath& c, std::size_t k) {
  switch (k) {
    case 0: return c.host_ns;
    case 1: return c.gpu_ns;
    case 2: return c.launch_ns;
    case 3: return c.sync_wait_ns;
    default: return c.other_ns;
  }
}

}  // namespace

std::string critical_path_chart(const std::string& id, const std::vector<const TimelineStrip*>& strips,
                                const std::string& outcome) {
  std::vector<const TimelineStrip*> rows;
  for (auto* t : strips)
    if (t->critical_path && t->critical_path->length_ns > 0) rows.push_back(t);
  if (rows.empty()) return "";
  // Bars on one time axis, so a fix that shortens the path shows it.
  Ns longest = 1;
  for (auto* t : rows) longest = std::max(longest, t->critical_path->length_ns);
  const TimeAxis ta = time_axis(static_cast<double>(longest), 8);
  const int left = 190, width = 1100, plot = width - left - 260, row_h = 26, top = 24;
  const int height = top + static_cast<int>(rows.size()) * row_h + 30;
  auto X = [&](double ns) { return left + ns / ta.max_ns() * plot; };
  std::string s = "<div class=\"legend\">";
  for (const Share& sh : kShares) s += fmt::format(R"(<span><i style="background:{}"></i>{}</span>)", sh.fill, sh.what);
  s += "</div>";
  s += fmt::format(
      R"(<svg class="chart critical-path-chart" id="{}-critical-path" data-outcome="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="critical path of the {} step">)",
      id, outcome, width, height, width, height, outcome);
  s += fmt::format(
      R"(<text class="chart-title" x="{}" y="14">the same step's critical path through host and GPU (replayed from its trace): where it runs</text>)",
      left);
  s += "<g class=\"axis\">";
  for (double v : ta.axis.ticks)
    s += fmt::format(
        R"(<line class="grid" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/><text class="tick" x="{0:.1f}" y="{3}" text-anchor="middle">{4}</text>)",
        X(v * ta.ns_per_unit), top, height - 26, height - 12, ta.label(v));
  s += "</g>";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TimelineStrip& t = *rows[i];
    const CriticalPath& c = *t.critical_path;
    const int y = top + static_cast<int>(i) * row_h + 4;
    s += fmt::format(
        R"(<g class="variant critical-path-bar" data-variant="{}" data-length-ns="{}" data-host-ns="{}" data-gpu-ns="{}" data-launch-ns="{}" data-sync-wait-ns="{}" data-other-ns="{}" data-sync-edges="{}">)",
        esc(t.fix + "=" + t.variant), c.length_ns, c.host_ns, c.gpu_ns, c.launch_ns, c.sync_wait_ns, c.other_ns,
        c.sync_edges);
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}={}</text>)", left - 8, y + 13, esc(t.fix),
                     esc(t.variant));
    double x = 0;
    const double len = static_cast<double>(c.length_ns);
    for (std::size_t k = 0; k < std::size(kShares); ++k) {
      const Ns ns = share_ns(c, k);
      if (ns <= 0) continue;
      s += fmt::format(
          R"(<rect class="part {}" style="fill:{}" x="{:.2f}" y="{}" width="{:.2f}" height="16"><title>{}: {} ({:.1f}% of the path)</title></rect>)",
          kShares[k].cls, kShares[k].fill, X(x), y, X(x + static_cast<double>(ns)) - X(x), kShares[k].what,
          duration_text(static_cast<double>(ns)), 100.0 * static_cast<double>(ns) / len);
      x += static_cast<double>(ns);
    }
    // Short enough to stay inside the chart right of the longest bar; the sync edges and
    // every share are in the bar's data attributes and tooltips.
    s += fmt::format(R"(<text x="{:.1f}" y="{}">{} (host {:.0f}%, GPU {:.0f}%, sync {:.0f}%)</text>)", X(len) + 5,
                     y + 13, duration_text(len), 100.0 * static_cast<double>(c.host_ns) / len,
                     100.0 * static_cast<double>(c.gpu_ns) / len, 100.0 * static_cast<double>(c.sync_wait_ns) / len);
    s += "</g>";
  }
  s += "</svg>\n";
  // The longest runs: consecutive pieces of one kind on one thread, stream or sync call.
  s += std::string(
      "<table class=\"critical-path-runs\"><thead><tr><th class=\"l\">fix</th><th class=\"l\">variant</th><th "
      "class=\"l\">step</th><th>rank</th><th class=\"l\">kind</th><th class=\"l\">where</th><th "
      "class=\"l\">records</th><th>from step start</th><th>duration</th></tr></thead><tbody>\n");
  for (auto* t : rows) {
    const CriticalPath& c = *t->critical_path;
    const std::string step = t->step ? t->step->step : std::string();
    for (std::size_t r = 0; r < std::min(kRunsShown, c.top.size()); ++r) {
      const CriticalRun& run = c.top[r];
      s += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td "
          "class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td data-ns=\"{}\">{}</td><td "
          "data-ns=\"{}\">{}</td></tr>\n",
          esc(t->fix), esc(t->variant), esc(step), r + 1, esc(std::string(critical_kind_name(run.kind))),
          esc(run.where), esc(run.what), run.start_ns, duration_text(static_cast<double>(run.start_ns)),
          run.duration_ns, duration_text(static_cast<double>(run.duration_ns)));
    }
  }
  s += "</tbody></table>\n";
  s += fmt::format(
      "<p class=\"meta\">The critical path runs from the step's start to the end of its last host call, back along "
      "what set each replayed time; its parts sum to its length exactly. Times are the {0} trace replayed as a "
      "dependency graph (within the replay's error of the recorded step), not the recorded ones.</p>\n",
      esc(outcome));
  return s;
}

}  // namespace syncscope::html
