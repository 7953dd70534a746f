// render_view_html (view.hpp): the page of `syncscope view`: report.html's style sheet and
// escaping, a one-paragraph reading of each trace, its step timeline, idle per stream, the
// critical path, sync points, causes, kernels and launch delays; a directory's ranks side by
// side (a table, then each rank on the same time axis). No external URL: the style sheet and
// the few lines of script (a time readout under the pointer) are inline.
#include <fmt/format.h>

#include <algorithm>

#include "html_format.hpp"
#include "report_css.hpp"
#include "view_internal.hpp"

namespace syncscope {

std::string_view view_bar_kind_name(ViewBarKind k) {
  switch (k) {
    case ViewBarKind::Range: return "range";
    case ViewBarKind::Api: return "api";
    case ViewBarKind::Kernel: return "kernel";
    case ViewBarKind::Comm: return "comm";
    case ViewBarKind::H2D: return "h2d";
    case ViewBarKind::D2H: return "d2h";
    case ViewBarKind::Copy: return "copy";
    case ViewBarKind::Memset: return "memset";
  }
  return "kernel";
}

namespace {

using html::duration_text;
using html::esc;

// The view's own classes, after report.css (colours from its variables).
constexpr const char* kViewCss = R"(
svg.view-timeline .bar.kind-range { fill: var(--range); stroke: #9fb6d3; stroke-width: 0.5; }
svg.view-timeline .bar.kind-api { fill: #8a8a8a; }
svg.view-timeline .bar.kind-kernel { fill: var(--kernel); }
svg.view-timeline .bar.kind-comm { fill: #d35400; }
svg.view-timeline .bar.kind-h2d { fill: var(--h2d); }
svg.view-timeline .bar.kind-d2h { fill: var(--d2h); }
svg.view-timeline .bar.kind-copy, svg.view-timeline .bar.kind-memset { fill: var(--copy); }
svg.view-timeline .sync-blocked { fill: var(--sync); }
svg.view-timeline .sync-bubble { fill: var(--sync-bubble); fill-opacity: 0.55; }
svg.view-timeline .sync-line { stroke: var(--sync); stroke-width: 1; stroke-dasharray: 2 2; }
svg.view-timeline .sync-tick { fill: var(--sync); }
svg.view-timeline .cp-length { stroke: #111; stroke-width: 1.5; }
svg.view-timeline .cp-run { fill: #f1c40f; stroke: #7d6608; stroke-width: 0.6; }
svg.view-timeline .cp-run.kind-sync_wait { fill: var(--sync); }
svg.view-timeline .cp-run.kind-gpu { fill: var(--kernel); }
svg.view-timeline .cp-run.kind-launch { fill: #e67e22; }
svg.view-timeline .cp-run.kind-other { fill: #bbb; }
svg .idle-part.sync-bubble, .legend i.k-sync-bubble { fill: var(--sync-bubble); background: var(--sync-bubble); }
svg .idle-part.host-wait, .legend i.k-host-wait { fill: #f0b27a; background: #f0b27a; }
svg .idle-part.dependency-wait, .legend i.k-dependency-wait { fill: #a9cce3; background: #a9cce3; }
svg .idle-part.other, .legend i.k-other-idle { fill: var(--other-idle); background: var(--other-idle); }
svg .idle-part.hta-host-wait, .legend i.k-hta-host-wait { fill: #ca6f1e; background: #ca6f1e; }
svg .idle-part.hta-kernel-wait, .legend i.k-hta-kernel-wait { fill: #5dade2; background: #5dade2; }
svg .idle-part.hta-other, .legend i.k-hta-other { fill: #909497; background: #909497; }
.legend i.k-range { background: var(--range); } .legend i.k-api { background: #8a8a8a; }
.legend i.k-kernel { background: var(--kernel); } .legend i.k-comm { background: #d35400; }
.legend i.k-h2d { background: var(--h2d); } .legend i.k-d2h { background: var(--d2h); }
.legend i.k-sync { background: var(--sync); } .legend i.k-bubble { background: var(--sync-bubble); }
.legend i.k-cp { background: #f1c40f; } .legend i.k-cp-launch { background: #e67e22; }
.set-note { background: #fff3cd; border: 1px solid #e0c060; }
.sampling-note { background: #fff3cd; border: 1px solid #e0c060; padding: 6px 10px; border-radius: 4px; }
.reading { font-size: 15px; }
section.trace { border-top: 3px solid #bbb; margin-top: 24px; }
)";

// A readout of the time under the pointer on each timeline (no other script on the page).
constexpr const char* kViewJs = R"(
document.querySelectorAll('svg.view-timeline').forEach(function (svg) {
  var out = svg.querySelector('text.readout');
  var left = Number(svg.dataset.left), nsPerPx = Number(svg.dataset.nsPerPx);
  svg.addEventListener('mousemove', function (e) {
    var box = svg.getBoundingClientRect();
    var x = (e.clientX - box.left) * (svg.viewBox.baseVal.width / box.width) - left;
    if (!out || x < 0) return;
    out.textContent = 't = ' + (x * nsPerPx / 1000).toFixed(1) + ' \u00b5s from the window start';
  });
});
)";

const char* kTimelineLegend =
    R"(<div class="legend"><span><i class="k-range"></i>host range</span><span><i class="k-api"></i>API call</span>)"
    R"(<span><i class="k-kernel"></i>kernel</span><span><i class="k-comm"></i>NCCL kernel</span>)"
    R"(<span><i class="k-h2d"></i>H2D copy</span><span><i class="k-d2h"></i>D2H copy</span>)"
    R"(<span><i class="k-sync"></i>sync point: host blocked (&#9660; where it returned)</span>)"
    R"(<span><i class="k-bubble"></i>GPU bubble it left</span><span><i class="k-cp"></i>critical path: host</span>)"
    R"(<span><i class="k-cp-launch"></i>launch</span><span><i class="k-kernel"></i>GPU</span>)"
    R"(<span><i class="k-sync"></i>sync wait</span></div>)";

// What a reader takes away in one minute: the step, its syncs and what they cost, the verdict.
std::string reading(const ViewTrace& v) {
  const WindowStats& w = v.has_step ? v.result.steps[v.step_index] : v.result.totals;
  std::string s = v.has_step ? fmt::format("Step <b>{}</b> (index {}, {}) took <b>{}</b>", esc(w.name), v.step_index,
                                           esc(v.step_why), duration_text(static_cast<double>(w.duration_ns)))
                             : fmt::format("No step range matched '{}': the whole trace ({}) is drawn",
                                           esc(v.result.options.step_glob),
                                           duration_text(static_cast<double>(v.window_end - v.window_start)));
  s += fmt::format("; <b>{}</b> sync point(s) blocked the host for {} and left {} of GPU bubble", w.syncs.total,
                   duration_text(static_cast<double>(w.syncs.blocked_ns)),
                   duration_text(static_cast<double>(w.syncs.bubble_ns)));
  s += fmt::format("; the GPU was busy {} of its window: <b>{}</b>.",
                   w.idle.window_ns > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(w.idle.busy_ns) /
                                                                     static_cast<double>(w.idle.window_ns))
                                        : std::string("0%"),
                   verdict_name(w.verdict));
  if (!v.result.worst.empty()) {
    const Offender& o = v.result.worst.front();
    s += fmt::format(" Worst cause over the trace: <b>{}</b> ({} x)", esc(o.cause), o.count);
    for (const auto& r : v.removals)
      if (r.cause == o.cause && r.saving_ns)
        s += fmt::format("; replaying the trace without it saves {} per step",
                         duration_text(static_cast<double>(*r.saving_ns)));
    s += ".";
  }
  return "<p class=\"reading\">" + s + "</p>\n";
}

std::string trace_section(const ViewTrace& v, std::size_t i, double axis_ns) {
  const std::string id = fmt::format("trace-{}", i);
  std::string h = fmt::format("<section class=\"trace\" id=\"{}\">\n<h2>{}</h2>\n", id, esc(v.label));
  h += fmt::format(
      "<p class=\"meta\">{}; recorded by {}; {} device(s); {} sync point(s), {} kernel(s) in the trace</p>\n",
      esc(v.source), esc(v.result.meta.source_tool.empty() ? "an unnamed tool" : v.result.meta.source_tool),
      v.result.totals.gpu_busy_by_device.size(), v.result.totals.syncs.total, v.result.totals.kernels);
  h += reading(v);
  h += "<h3>Timeline of the step, per host thread, stream and copy engine</h3>\n";
  for (const auto& n : v.sampling_notes) h += "<p class=\"sampling-note\">Sampled: " + esc(n) + ".</p>\n";
  h += kTimelineLegend;
  h += "\n" + view_detail::timeline_svg(id + "-timeline", v, axis_ns) + "\n";
  h += "<p class=\"note\">The critical path lane shows the path's runs at their offset from the step's start in "
       "the identity replay (replayed times, close to but not the recorded ones).</p>\n";
  h += "<h3>Sync points in the window</h3>\n" + view_detail::syncs_table(v);
  h += "<h3>Idle per stream: our four classes beside HTA's three</h3>\n" + view_detail::idle_section(id + "-idle", v);
  h += "<p class=\"note\">HTA's classes computed here by HTA's rule (host wait: the launch call started after the "
       "previous activity ended; kernel wait: a shorter gap than consecutive_kernel_delay, 30 in HTA's microsecond "
       "timestamps; other: the rest). Ours split HTA's host wait into sync bubble and host wait.</p>\n";
  h += "<h3>Critical path of the step</h3>\n" + view_detail::critical_path_section(v);
  h += "<h3>Worst causes and what removing them saves (replayed)</h3>\n" + view_detail::causes_table(v);
  h += "<h3>Kernels</h3>\n" + view_detail::kernels_table(v);
  h += "<h3>Launch delays (launch call start to kernel start)</h3>\n" + view_detail::launch_delay_table(v);
  if (!v.result.warnings.empty()) {
    h += "<h3>Warnings</h3>\n<ul class=\"warnings\">\n";
    for (const auto& w : v.result.warnings) h += "<li>" + esc(w) + "</li>\n";
    h += "</ul>\n";
  }
  return h + "</section>\n";
}

}  // namespace

std::string render_view_html(const ViewPage& page) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<meta name=\"generator\" content=\"syncscope view schema {}\">\n", kViewSchemaVersion);
  h += "<title>" + esc(page.title) + "</title>\n<style>" + std::string(reports_detail::kReportCss) + kViewCss +
       "</style>\n</head>\n<body>\n<header><h1>" + esc(page.title) + "</h1>\n";
  if (!page.generated_utc.empty()) h += "<p class=\"meta\">Generated " + esc(page.generated_utc) + " UTC.</p>\n";
  h += "</header>\n";
  for (const auto& n : page.notes) h += "<p class=\"banner set-note\">" + esc(n) + "</p>\n";
  // Ranks side by side share one time axis, so the lengths of their steps compare.
  double axis_ns = 1;
  for (const auto& t : page.traces) axis_ns = std::max(axis_ns, static_cast<double>(t.window_end - t.window_start));
  if (page.traces.size() > 1) h += "<h2>Ranks side by side</h2>\n" + view_detail::ranks_table(page);
  const std::size_t drawn = std::min(page.traces.size(), page.max_sections);
  if (drawn < page.traces.size())
    h += fmt::format(
        "<p class=\"sampling-note\">Sampled: the first {} of {} traces are drawn below (in rank order); "
        "the table above lists them all.</p>\n",
        drawn, page.traces.size());
  for (std::size_t i = 0; i < drawn; ++i) h += trace_section(page.traces[i], i, axis_ns);
  h += "<footer><p class=\"meta\">Every number comes from syncscope's analysis of the trace named in its section "
       "(docs/analysis.md gives the definitions).</p></footer>\n";
  h += "<script>" + std::string(kViewJs) + "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace syncscope
