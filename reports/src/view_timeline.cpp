// The step timeline of `syncscope view` (view.hpp): one SVG with a lane per host thread,
// stream and copy engine, every sync point marked (the host's blocked time on its thread,
// a line where it returned across its device's lanes, the bubble it left after it), and the
// critical path's longest runs on a lane of their own. Element count is bounded by the lanes'
// bars (view_lanes.cpp's level of detail) and the sync markers kept.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "html_format.hpp"
#include "view_internal.hpp"

namespace syncscope::view_detail {

namespace {

using html::duration_text;
using html::esc;

constexpr int kLeft = 200, kWidth = 1180, kLaneH = 16, kTop = 22;

std::string lane_label(const std::string& name) {
  return clip(name, 34);  // the label column is 200 px
}

std::string bar_tip(const ViewBar& b) {
  if (b.events > 1 || b.busy_ns != b.end - b.start)
    return fmt::format("{}: {} busy of {}", b.label, duration_text(static_cast<double>(b.busy_ns)),
                       duration_text(static_cast<double>(b.end - b.start)));
  return fmt::format("{} {}", b.label, duration_text(static_cast<double>(b.end - b.start)));
}

}  // namespace

std::string timeline_svg(const std::string& id, const ViewTrace& v, double axis_ns) {
  const int plot = kWidth - kLeft - 12;
  const Ns ws = v.window_start;
  axis_ns = std::max(axis_ns, 1.0);
  const html::TimeAxis ta = html::time_axis(axis_ns, 10);
  const double ns_per_px = ta.max_ns() / plot;
  // Everything is clipped to the plot: a bubble after the window's last sync, or a replayed
  // critical path longer than the recorded step, stops at the axis's end.
  const Ns plot_end = ws + static_cast<Ns>(ta.max_ns());
  auto clip = [&](Ns t) { return std::clamp(t, ws, plot_end); };
  auto X = [&](Ns t) { return kLeft + static_cast<double>(clip(t) - ws) / ns_per_px; };
  auto W = [&](Ns a, Ns z) { return std::max(0.6, static_cast<double>(clip(z) - clip(a)) / ns_per_px); };
  const int n_lanes = static_cast<int>(v.lanes.size());
  const int cp_y = kTop + n_lanes * kLaneH + 6;
  const int axis_y = cp_y + kLaneH + 4;
  const int height = axis_y + 22;
  std::string s = fmt::format(
      R"(<svg class="view-timeline" id="{}" data-window-start-ns="{}" data-ns-per-px="{:.3f}" data-left="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="timeline of {}">)",
      id, ws, ns_per_px, kLeft, kWidth, height, kWidth, height, esc(v.label));
  s += fmt::format(R"(<text class="chart-title" x="0" y="13">{}: {} lane(s), {} events as {} bars</text>)",
                   esc(v.has_step ? v.result.steps[v.step_index].name : std::string("whole trace")), n_lanes,
                   v.events_in_window, v.bars_drawn);
  std::map<std::pair<std::int64_t, std::int64_t>, int> host_lane;
  std::map<std::int32_t, std::pair<int, int>> device_lanes;  // first, last GPU lane of a device
  for (int i = 0; i < n_lanes; ++i) {
    const ViewLane& l = v.lanes[static_cast<std::size_t>(i)];
    const int y = kTop + i * kLaneH;
    if (l.kind == ViewLane::Kind::Host) host_lane[{l.pid, l.tid}] = i;
    else {
      auto [it, fresh] = device_lanes.try_emplace(l.device, i, i);
      if (!fresh) it->second.second = i;
    }
    s += fmt::format(
        R"(<g class="lane lane-{}{}" data-events="{}"><rect class="lane-bg" x="{}" y="{}" width="{}" height="{}"/>)",
        l.kind == ViewLane::Kind::Host     ? "host"
        : l.kind == ViewLane::Kind::Stream ? "stream"
                                           : "copy",
        l.aggregated ? " aggregated" : "", l.events, kLeft, y, plot, kLaneH - 2);
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}<title>{}</title></text>)", kLeft - 6, y + 11,
                     esc(lane_label(l.name)) + (l.aggregated ? " &#8801;" : ""), esc(l.name));
    for (const ViewBar& b : l.bars) {
      const bool range = b.kind == ViewBarKind::Range;
      const int by = y + (range ? 0 : b.kind == ViewBarKind::Api ? 4 : 1);
      const int bh = range ? kLaneH - 2 : b.kind == ViewBarKind::Api ? 6 : kLaneH - 4;
      const double span = static_cast<double>(std::max<Ns>(b.end - b.start, 1));
      const std::string shade =
          b.events > 1 ? fmt::format(R"( fill-opacity="{:.2f}")", 0.25 + 0.75 * static_cast<double>(b.busy_ns) / span)
                       : "";
      s += fmt::format(
          R"(<rect class="bar kind-{}" x="{:.2f}" y="{}" width="{:.2f}" height="{}"{}><title>{}</title></rect>)",
          view_bar_kind_name(b.kind), X(b.start), by, W(b.start, b.end), bh, shade, esc(bar_tip(b)));
    }
    s += "</g>";
  }
  // Sync points: blocked time on the thread, the return across the device's lanes, the bubble.
  for (const SyncPoint& p : v.syncs) {
    const auto h = host_lane.find({p.pid, p.tid});
    const int hy = h != host_lane.end() ? kTop + h->second * kLaneH : kTop;
    int g0 = kTop, g1 = kTop + n_lanes * kLaneH;
    if (auto d = device_lanes.find(p.device); d != device_lanes.end())
      g0 = kTop + d->second.first * kLaneH, g1 = kTop + (d->second.second + 1) * kLaneH;
    else if (!device_lanes.empty())
      g0 = kTop + device_lanes.begin()->second.first * kLaneH,
      g1 = kTop + device_lanes.rbegin()->second.second * kLaneH + kLaneH;
    const std::string tip =
        fmt::format("sync point: {} ({}), host blocked {}, GPU bubble {}", p.cause, p.api,
                    duration_text(static_cast<double>(p.blocked_ns)), duration_text(static_cast<double>(p.bubble_ns)));
    s += fmt::format(
        R"(<g class="sync-marker" data-cause="{}" data-api="{}" data-blocked-ns="{}" data-bubble-ns="{}"><title>{}</title>)",
        esc(p.cause), esc(p.api), p.blocked_ns, p.bubble_ns, esc(tip));
    s += fmt::format(R"(<rect class="sync-blocked" x="{:.2f}" y="{}" width="{:.2f}" height="{}"/>)", X(p.start), hy + 1,
                     W(p.start, p.end), kLaneH - 4);
    if (p.bubble_ns > 0)
      s += fmt::format(R"(<rect class="sync-bubble" x="{:.2f}" y="{}" width="{:.2f}" height="{}"/>)", X(p.end), g0,
                       W(p.end, p.end + p.bubble_ns), g1 - g0 - 2);
    s += fmt::format(R"(<line class="sync-line" x1="{0:.2f}" x2="{0:.2f}" y1="{1}" y2="{2}"/>)", X(p.end), hy, g1 - 2);
    s += fmt::format(R"(<path class="sync-tick" d="M{0:.2f} {1} l-4 -6 h8 z"/></g>)", X(p.end), hy + 1);
  }
  // The critical path's runs, at their offset from the step's replayed start.
  s += fmt::format(R"(<g class="critical-path"><text x="{}" y="{}" text-anchor="end">critical path (replayed)</text>)",
                   kLeft - 6, cp_y + 11);
  s += fmt::format(R"(<rect class="lane-bg" x="{}" y="{}" width="{}" height="{}"/>)", kLeft, cp_y, plot, kLaneH - 2);
  if (v.critical) {
    s += fmt::format(
        R"(<line class="cp-length" x1="{0:.2f}" x2="{1:.2f}" y1="{2}" y2="{2}"><title>critical path {3}</title></line>)",
        X(ws), X(ws + v.critical->length_ns), cp_y + kLaneH - 3,
        duration_text(static_cast<double>(v.critical->length_ns)));
    for (const CriticalRun& r : v.critical_runs)
      s += fmt::format(
          R"(<rect class="cp-run kind-{}" x="{:.2f}" y="{}" width="{:.2f}" height="{}"><title>{}</title></rect>)",
          critical_kind_name(r.kind), X(ws + r.start_ns), cp_y + 1, W(ws + r.start_ns, ws + r.start_ns + r.duration_ns),
          kLaneH - 5,
          esc(fmt::format("{} {}: {} ({})", critical_kind_name(r.kind), r.where, r.what,
                          duration_text(static_cast<double>(r.duration_ns)))));
  }
  s += "</g><g class=\"axis\">";
  for (double t : ta.axis.ticks) {
    const double x = kLeft + t * ta.ns_per_unit / ns_per_px;
    s += fmt::format(R"(<line class="tick-mark" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", x, axis_y - 2,
                     axis_y + 3);
    s += fmt::format(R"(<text class="tick" x="{:.1f}" y="{}" text-anchor="{}">{}</text>)", x, axis_y + 15,
                     t == ta.axis.ticks.back() ? "end"
                     : t == 0                  ? "start"
                                               : "middle",
                     ta.label(t));
  }
  s +=
      "</g><text class=\"readout\" x=\"" + std::to_string(kWidth - 4) + "\" y=\"13\" text-anchor=\"end\"></text></svg>";
  return s;
}

}  // namespace syncscope::view_detail
