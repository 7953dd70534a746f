// The "one layer, baseline and fix" strips of a scenario: every strip on one time axis
// (the same ns per pixel), the layer's own GPU work apart from work queued before it, and
// host waits drawn where they happen: in the layer, or outside it (attributed by name).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "html_format.hpp"
#include "html_parts.hpp"

namespace syncscope::html {

namespace {

const char* kLegend =
    R"(<div class="legend"><span><i class="k-range"></i>the layer's host range</span>)"
    R"(<span><i class="k-kernel"></i>GPU work launched from it</span>)"
    R"(<span><i class="k-other"></i>GPU work launched before it (queued)</span>)"
    R"(<span><i class="k-h2d"></i>H2D copy</span><span><i class="k-d2h"></i>D2H copy</span>)"
    R"(<span><i class="k-sync"></i>host blocked in a sync of this layer</span>)"
    R"(<span><i class="k-sync-elsewhere"></i>host blocked outside the layer (its range in the tooltip)</span>)"
    R"(<span><i class="k-bubble"></i>GPU idle (bubble)</span></div>)";

std::string strip_svg(const std::string& id, const TimelineStrip& t, const TimeAxis& ta) {
  const int left = 170, width = 1100, plot = width - left - 20, lane_h = 18, top = 20;
  std::vector<std::string> lanes = t.lanes;
  if (lanes.empty()) lanes.push_back("host");
  const int height = top + static_cast<int>(lanes.size()) * lane_h + 24;
  const double ns_per_px = ta.max_ns() / plot;
  auto X = [&](Ns v) { return left + static_cast<double>(v) / ns_per_px; };
  std::map<std::string, int> lane_index;
  for (std::size_t i = 0; i < lanes.size(); ++i) lane_index[lanes[i]] = static_cast<int>(i);
  std::string s = fmt::format(
      R"(<svg class="timeline-strip" id="{}" data-variant="{}" data-duration-ns="{}" data-ns-per-px="{:.3f}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="timeline of {}">)",
      id, esc(t.fix + "=" + t.variant), t.duration_ns, ns_per_px, width, height, width, height, esc(t.window));
  // Where the range's own work sits: without syncs the GPU runs behind the host, so the
  // window is mostly queued work and the range's kernels come at its end.
  std::string own;
  std::size_t waits_elsewhere = 0;
  {
    Ns host = -1, first = -1, last = -1;
    for (const auto& g : t.segments) {
      if (g.kind == "range") host = g.end - g.start;
      waits_elsewhere += g.kind == "sync-elsewhere";
      const bool gpu_own = g.kind == "kernel" || g.kind == "h2d" || g.kind == "d2h" || g.kind == "copy";
      if (!gpu_own || g.lane == "host") continue;
      first = first < 0 ? g.start : std::min(first, g.start);
      last = std::max(last, g.end);
    }
    if (host >= 0) own += "; host range " + duration_text(static_cast<double>(host));
    if (first >= 0)
      own += fmt::format(", its GPU work {}&#8211;{}", duration_text(static_cast<double>(first)),
                         duration_text(static_cast<double>(last)));
    if (waits_elsewhere) own += fmt::format("; {} wait(s) outside the layer", waits_elsewhere);
  }
  s += fmt::format(
      R"(<text class="chart-title" x="0" y="13">{}={}: {} &#8212; {}, {} sync point(s) in the layer, {} GPU idle{}</text>)",
      esc(t.fix), esc(t.variant), esc(t.window), duration_text(static_cast<double>(t.duration_ns)), t.syncs,
      duration_text(static_cast<double>(t.bubble_ns)), own);
  const double end_x = X(t.duration_ns);
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const int y = top + static_cast<int>(i) * lane_h;
    s += fmt::format(R"(<rect class="lane-bg" x="{}" y="{}" width="{:.2f}" height="{}"/>)", left, y, end_x - left,
                     lane_h - 2);
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", left - 6, y + 12, esc(lanes[i]));
  }
  const int gpu_top = top + lane_h, gpu_h = std::max(lane_h - 2, (static_cast<int>(lanes.size()) - 1) * lane_h - 2);
  auto tip = [](const TimelineSegment& g) {
    return esc(g.label) + " " + duration_text(static_cast<double>(g.end - g.start));
  };
  // The host range under everything on its lane, bubbles under the GPU bars.
  for (const auto& g : t.segments) {
    if (g.kind != "range") continue;
    auto it = lane_index.find(g.lane);
    if (it == lane_index.end()) continue;
    s += fmt::format(
        R"(<rect class="seg kind-range" x="{:.2f}" y="{}" width="{:.2f}" height="{}"><title>{}</title></rect>)",
        X(g.start), top + it->second * lane_h + 1, std::max(0.5, X(g.end) - X(g.start)), lane_h - 4, tip(g));
  }
  for (const auto& g : t.segments) {
    if (g.kind != "bubble") continue;
    s += fmt::format(
        R"(<rect class="seg kind-bubble" x="{:.2f}" y="{}" width="{:.2f}" height="{}"><title>{}</title></rect>)",
        X(g.start), gpu_top, std::max(0.5, X(g.end) - X(g.start)), gpu_h, tip(g));
  }
  for (const auto& g : t.segments) {
    if (g.kind == "bubble" || g.kind == "range") continue;
    auto it = lane_index.find(g.lane);
    if (it == lane_index.end()) continue;
    const int y = top + it->second * lane_h + (g.kind == "api" ? 6 : 1);
    const int h = g.kind == "api" ? 4 : lane_h - 4;
    s += fmt::format(
        R"(<rect class="seg kind-{}" x="{:.2f}" y="{}" width="{:.2f}" height="{}"><title>{}</title></rect>)",
        slug(g.kind), X(g.start), y, std::max(0.5, X(g.end) - X(g.start)), h, tip(g));
  }
  // The window's end, then the shared axis: the same ticks under every strip.
  const int lanes_bottom = top + static_cast<int>(lanes.size()) * lane_h;
  s += fmt::format(R"(<line class="window-end" x1="{0:.2f}" x2="{0:.2f}" y1="{1}" y2="{2}"/>)", end_x, top - 2,
                   lanes_bottom);
  s += "<g class=\"axis\">";
  for (double v : ta.axis.ticks) {
    const double x = X(static_cast<Ns>(v * ta.ns_per_unit));
    s += fmt::format(R"(<line class="tick-mark" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", x, lanes_bottom,
                     lanes_bottom + 4);
    s += fmt::format(R"(<text class="tick" x="{:.1f}" y="{}" text-anchor="{}">{}</text>)", x, lanes_bottom + 16,
                     v == ta.axis.ticks.back() ? "end"
                     : v == 0                  ? "start"
                                               : "middle",
                     ta.label(v));
  }
  s += "</g></svg>";
  return s;
}

}  // namespace

std::string timeline_strips(const std::string& id_prefix, const std::vector<const TimelineStrip*>& strips,
                            const std::string& outcome) {
  if (strips.empty()) return "<p class=\"note\">No timeline kept for this scenario (no traces in the run).</p>\n";
  double max_ns = 1;
  for (auto* t : strips) max_ns = std::max(max_ns, static_cast<double>(t->duration_ns));
  const TimeAxis ta = time_axis(max_ns, 10);
  std::string s = fmt::format(
      "<p class=\"meta\">From the {} traces; every strip on one time axis ({} per tick), so lengths compare.</p>\n",
      outcome, ta.label(ta.axis.step));
  s += kLegend;
  s += "\n";
  for (auto* t : strips) s += strip_svg(slug(id_prefix + "-" + t->fix + "-" + t->variant), *t, ta) + "\n";
  return s;
}

}  // namespace syncscope::html
