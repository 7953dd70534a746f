// The report's bar charts: predicted vs measured (or simulated) speedup, sync points per
// step, and where one step's time goes per variant. Inline SVG, styled by report.css.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "html_format.hpp"
#include "html_parts.hpp"

namespace syncscope::html {

namespace {

// Grid lines and labels of a horizontal value axis.
std::string x_axis(const Axis& a, const std::function<double(double)>& X, int top, int bottom,
                   const std::function<std::string(double)>& label) {
  std::string s = "<g class=\"axis\">";
  for (double v : a.ticks) {
    s += fmt::format(R"(<line class="grid" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(v), top, bottom);
    s += fmt::format(R"(<text class="tick" x="{:.1f}" y="{}" text-anchor="middle">{}</text>)", X(v), bottom + 14,
                     label(v));
  }
  return s + "</g>";
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s = "<div class=\"legend\">";
  for (const auto& [cls, text] : items) s += "<span><i class=\"" + cls + "\"></i>" + text + "</span>";
  return s + "</div>";
}

}  // namespace

std::string speedup_chart(const std::string& id, const std::vector<const model::VariantResult*>& vs, bool show_layers,
                          const std::string& outcome) {
  std::vector<const model::VariantResult*> rows;
  for (auto* v : vs)
    if (!v->baseline) rows.push_back(v);
  if (rows.empty()) return "<p class=\"note\">No fix variants besides the baselines.</p>";
  double hi = 1.05, lo = 1.0;
  for (auto* v : rows) {
    for (const model::Estimate* e : {&v->measured_speedup, &v->predicted_speedup}) {
      if (!has_estimate(*e)) continue;
      hi = std::max(hi, std::max(e->hi, e->value));
      lo = std::min(lo, std::min(e->lo, e->value));
    }
  }
  Axis a = nice_axis(lo, hi, 6);
  if (a.lo >= 1.0) a = nice_axis(lo - (hi - lo) / 6, hi, 6);  // room left of the baseline line
  const int left = 190, width = 860, plot = width - left - 60, row_h = 40, top = 24;
  const int height = top + static_cast<int>(rows.size()) * row_h + 34;
  auto X = [&](double v) { return left + (v - a.lo) / (a.hi - a.lo) * plot; };
  std::string s = legend({{"k-predicted", "predicted (model)"}, {"k-" + outcome, outcome}});
  s += fmt::format(
      R"(<svg class="chart speedup-chart" id="{}" data-outcome="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="predicted and {} speedup">)",
      id, outcome, width, height, width, height, outcome);
  s += fmt::format(
      R"(<text class="chart-title" x="{}" y="14">predicted and {} speedup over the baseline (&#215;); whiskers: interval</text>)",
      left, outcome);
  s += x_axis(a, X, top, height - 28, [&](double v) { return fmt::format("{:.{}f}", v, a.decimals); });
  s += fmt::format(R"(<line class="baseline-line" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(1.0), top - 4,
                   height - 28);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const model::VariantResult& v = *rows[i];
    const int y = top + static_cast<int>(i) * row_h;
    s += fmt::format(R"(<g class="variant" data-variant="{}">)", esc(v.fix + "=" + v.variant));
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", left - 8, y + 22,
                     esc(variant_label(v, show_layers)));
    auto bar = [&](const model::Estimate& e, const std::string& cls, int dy) {
      if (!has_estimate(e)) {
        s += fmt::format(R"(<text class="{}-missing" x="{}" y="{}">no {} speedup</text>)", cls, left + 4, y + dy + 11,
                         cls);
        return;
      }
      const double bx = X(std::max(a.lo, std::min(1.0, e.value))), ex = X(std::max(1.0, e.value));
      s += fmt::format(
          R"(<rect class="bar {}" x="{:.1f}" y="{}" width="{:.1f}" height="14"><title>{} speedup {:.4f} [{:.4f}, {:.4f}]</title></rect>)",
          cls, std::min(bx, X(e.value)), y + dy, std::max(1.0, std::fabs(ex - bx)), cls, e.value, e.lo, e.hi);
      s += fmt::format(R"(<line class="whisker" x1="{:.1f}" x2="{:.1f}" y1="{}" y2="{}"/>)", X(e.lo), X(e.hi),
                       y + dy + 7, y + dy + 7);
      s += fmt::format(R"(<line class="whisker" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(e.lo), y + dy + 2,
                       y + dy + 12);
      s += fmt::format(R"(<line class="whisker" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(e.hi), y + dy + 2,
                       y + dy + 12);
      // The label goes right of everything drawn on this row (bar end at 1.0 or beyond).
      s += fmt::format(R"(<text x="{:.1f}" y="{}">{:.3f}</text>)", std::max(X(1.0), X(std::max(e.hi, e.value))) + 4,
                       y + dy + 11, e.value);
    };
    bar(v.predicted_speedup, "predicted", 2);
    bar(v.measured_speedup, outcome, 19);
    s += "</g>";
  }
  return s + "</svg>";
}

std::string syncs_chart(const std::string& id, const std::vector<const model::VariantResult*>& vs, bool show_layers,
                        const std::string& outcome) {
  if (vs.empty()) return "";
  double hi = 1;
  for (auto* v : vs) hi = std::max(hi, v->syncs_per_step);
  const int left = 190, width = 860, plot = width - left - 60, row_h = 22, top = 22;
  const int height = top + static_cast<int>(vs.size()) * row_h + 10;
  std::string s = fmt::format(
      R"(<svg class="chart syncs-chart" id="{}" data-outcome="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="sync points per step">)",
      id, outcome, width, height, width, height);
  s += fmt::format(
      R"(<text class="chart-title" x="{}" y="14">host sync points per step, {} (baseline first in each fix)</text>)",
      left, outcome);
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const model::VariantResult& v = *vs[i];
    const int y = top + static_cast<int>(i) * row_h;
    const double w = v.syncs_per_step / hi * plot;
    s += fmt::format(R"(<g class="variant" data-variant="{}">)", esc(v.fix + "=" + v.variant));
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}{}</text>)", left - 8, y + 13,
                     esc(variant_label(v, show_layers)), v.baseline ? " (baseline)" : "");
    s += fmt::format(
        R"(<rect class="bar syncs" x="{}" y="{}" width="{:.1f}" height="14"><title>{:.1f} syncs per step</title></rect>)",
        left, y + 2, std::max(0.5, w), v.syncs_per_step);
    s += fmt::format(R"(<text x="{:.1f}" y="{}">{:g}</text></g>)", left + w + 5, y + 13, v.syncs_per_step);
  }
  return s + "</svg>";
}

namespace {

// One stacked bar per variant over its step's GPU window (first to last GPU activity in the
// step, all devices): busy, then each idle class (analysis/idle.hpp), with the verdict.
// Bars are fractions of each step's own window, so variants of different length compare.
std::string idle_chart(const std::string& id, const std::vector<const TimelineStrip*>& strips,
                       const std::string& outcome) {
  std::vector<const TimelineStrip*> rows;
  for (auto* t : strips)
    if (t->step && t->step->idle.window_ns > 0) rows.push_back(t);
  if (rows.empty()) return "";
  const int left = 190, width = 1100, plot = width - left - 260, row_h = 26, top = 24;
  const int height = top + static_cast<int>(rows.size()) * row_h + 8;
  // Host wait and dependency wait have no colour in report.css yet: inline fills.
  std::string s =
      "<div class=\"legend\"><span><i class=\"k-compute\"></i>GPU busy</span>"
      "<span><i class=\"k-sync-bubble\"></i>idle: sync bubble</span>"
      "<span><i style=\"background:#e0b040\"></i>idle: host wait (launch came late)</span>"
      "<span><i style=\"background:#9b7fd1\"></i>idle: dependency wait</span>"
      "<span><i class=\"k-other-idle\"></i>idle: other</span></div>";
  s += fmt::format(
      R"(<svg class="chart idle-chart" id="{}-idle" data-outcome="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="idle attribution of the {} step">)",
      id, outcome, width, height, width, height, outcome);
  s += fmt::format(
      R"(<text class="chart-title" x="{}" y="14">the same step's GPU window (100% = first to last GPU activity in it): busy and why the GPU idled</text>)",
      left);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TimelineStrip& t = *rows[i];
    const IdleBreakdown& b = t.step->idle;
    const int y = top + static_cast<int>(i) * row_h + 4;
    s += fmt::format(R"(<g class="variant idle-bar" data-variant="{}" data-window-ns="{}" data-verdict="{}">)",
                     esc(t.fix + "=" + t.variant), b.window_ns, verdict_name(t.step->verdict));
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}={}</text>)", left - 8, y + 13, esc(t.fix),
                     esc(t.variant));
    double x = 0;
    const double w = static_cast<double>(b.window_ns);
    auto part = [&](const char* cls, const char* fill, Ns ns, const char* what) {
      if (ns <= 0) return;
      const double f = static_cast<double>(ns) / w;
      s += fmt::format(
          R"(<rect class="part {}"{} x="{:.2f}" y="{}" width="{:.2f}" height="16"><title>{} {} ({:.1f}% of the GPU window)</title></rect>)",
          cls, fill[0] ? fmt::format(R"( style="fill:{}")", fill) : std::string(), left + x * plot, y, f * plot, what,
          duration_text(static_cast<double>(ns)), 100.0 * f);
      x += f;
    };
    part("compute", "", b.busy_ns, "GPU busy:");
    part("sync-bubble", "", b.sync_bubble_ns, "idle, sync bubble:");
    part("host-wait", "#e0b040", b.host_wait_ns, "idle, host wait:");
    part("dependency-wait", "#9b7fd1", b.dependency_wait_ns, "idle, dependency wait:");
    part("other-idle", "", b.other_ns, "idle, other:");
    s += fmt::format(R"(<text x="{}" y="{}">{} of {} ({:.1f}% busy)</text>)", left + plot + 6, y + 13,
                     verdict_name(t.step->verdict), duration_text(w), 100.0 * static_cast<double>(b.busy_ns) / w);
    s += "</g>";
  }
  return s + "</svg>";
}

std::string step_time_chart(const std::string& id, const std::vector<const TimelineStrip*>& strips,
                            const std::vector<const model::VariantResult*>& vs, const std::string& outcome);

}  // namespace

// The step bars, then the idle attribution and the critical path of the same steps.
std::string step_chart(const std::string& id, const std::vector<const TimelineStrip*>& strips,
                       const std::vector<const model::VariantResult*>& vs, const std::string& outcome) {
  return step_time_chart(id, strips, vs, outcome) + idle_chart(id, strips, outcome) +
         critical_path_chart(id, strips, outcome);
}

namespace {

std::string step_time_chart(const std::string& id, const std::vector<const TimelineStrip*>& strips,
                            const std::vector<const model::VariantResult*>& vs, const std::string& outcome) {
  std::vector<const TimelineStrip*> rows;
  for (auto* t : strips)
    if (t->step) rows.push_back(t);
  if (rows.empty())
    return "<p class=\"note\">No step breakdown kept for this scenario (timelines.json from an older syncscope, or "
           "no traces).</p>";
  // The results row of a strip: the deepest run of its variant (the strip comes from it).
  auto result_of = [&](const TimelineStrip& t) -> const model::VariantResult* {
    const model::VariantResult* best = nullptr;
    for (auto* v : vs)
      if (v->fix == t.fix && v->variant == t.variant && (!best || v->layers > best->layers)) best = v;
    return best;
  };
  std::map<std::string, Ns> baseline_ns;  // per fix: the baseline's step
  for (auto* t : rows)
    if (auto* v = result_of(*t); v && v->baseline) baseline_ns[t->fix] = t->step->duration_ns;
  double max_ns = 1;
  for (auto* t : rows) max_ns = std::max(max_ns, static_cast<double>(t->step->duration_ns));
  const TimeAxis ta = time_axis(max_ns, 8);
  const int left = 190, width = 1100, plot = width - left - 110, row_h = 34, top = 24;
  const int height = top + static_cast<int>(rows.size()) * row_h + 30;
  auto X = [&](double ns) { return left + ns / ta.max_ns() * plot; };
  std::string s = legend({{"k-compute", "GPU busy: compute"},
                          {"k-copy", "GPU busy: copies only"},
                          {"k-sync-bubble", "GPU idle: sync bubbles"},
                          {"k-other-idle", "GPU idle: other"},
                          {"k-host-blocked", "host blocked in syncs (beside)"},
                          {"k-baseline-ghost", "the baseline's step (outline)"},
                          {"k-predicted-saving", "predicted saving, back from the baseline's end"}});
  s += fmt::format(
      R"(<svg class="chart step-chart" id="{}" data-outcome="{}" data-ns-per-px="{:.3f}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="where the {} step time goes">)",
      id, outcome, ta.max_ns() / plot, width, height, width, height, outcome);
  s += fmt::format(
      R"(<text class="chart-title" x="{}" y="14">where one {} step's time goes, per variant (the step of the layer strips below)</text>)",
      left, outcome);
  s += x_axis(
      ta.axis, [&](double v) { return X(v * ta.ns_per_unit); }, top, height - 26,
      [&](double v) { return ta.label(v); });
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TimelineStrip& t = *rows[i];
    const StepBreakdown& b = *t.step;
    const model::VariantResult* v = result_of(t);
    const bool baseline = v && v->baseline;
    const int y = top + static_cast<int>(i) * row_h + 4;
    s += fmt::format(R"(<g class="variant step-bar" data-variant="{}" data-step-ns="{}">)",
                     esc(t.fix + "=" + t.variant), b.duration_ns);
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}={}{}</text>)", left - 8, y + 13, esc(t.fix),
                     esc(t.variant), baseline ? " (baseline)" : "");
    // A fix's bar over the outline of its baseline's: what disappears is the saving.
    const auto base = baseline_ns.find(t.fix);
    if (!baseline && base != baseline_ns.end())
      s += fmt::format(
          R"(<rect class="baseline-ghost" x="{}" y="{}" width="{:.2f}" height="16"><title>baseline step {}</title></rect>)",
          left, y, X(static_cast<double>(base->second)) - left, duration_text(static_cast<double>(base->second)));
    double x = 0;
    auto part = [&](const char* cls, Ns ns, const char* what) {
      if (ns <= 0) return;
      s += fmt::format(
          R"(<rect class="part {}" x="{:.2f}" y="{}" width="{:.2f}" height="16"><title>{} {} ({:.1f}% of the step)</title></rect>)",
          cls, X(x), y, X(x + static_cast<double>(ns)) - X(x), what, duration_text(static_cast<double>(ns)),
          100.0 * static_cast<double>(ns) / static_cast<double>(std::max<Ns>(1, b.duration_ns)));
      x += static_cast<double>(ns);
    };
    part("compute", b.compute_ns, "GPU busy, compute:");
    part("copy", b.copy_ns, "GPU busy, copies only:");
    part("sync-bubble", b.sync_bubble_ns, "GPU idle in sync bubbles:");
    part("other-idle", b.other_idle_ns, "GPU idle, other:");
    if (b.host_blocked_ns > 0)
      s += fmt::format(
          R"(<rect class="host-blocked" x="{}" y="{}" width="{:.2f}" height="5"><title>host blocked in {} sync(s): {}</title></rect>)",
          left, y + 19, X(static_cast<double>(b.host_blocked_ns)) - left, b.syncs,
          duration_text(static_cast<double>(b.host_blocked_ns)));
    // The model's saving, drawn back from the baseline's end: where this bar should end.
    if (!baseline && v && has_estimate(v->predicted_speedup) && base != baseline_ns.end()) {
      const double bn = static_cast<double>(base->second), p = v->predicted_speedup.value;
      const double pred_ns = bn / p, lo_ns = bn / std::max(v->predicted_speedup.hi, 1e-9),
                   hi_ns = bn / std::max(v->predicted_speedup.lo, 1e-9);
      s += fmt::format(
          R"(<rect class="predicted-saving" x="{:.2f}" y="{}" width="{:.2f}" height="16"><title>predicted saving {} (step {} [{}, {}])</title></rect>)",
          X(pred_ns), y - 2, std::max(0.5, X(bn) - X(pred_ns)), duration_text(bn - pred_ns), duration_text(pred_ns),
          duration_text(lo_ns), duration_text(hi_ns));
      // Where the model says this bar ends, and its interval when it has one.
      s += fmt::format(R"(<line class="predicted-end" x1="{0:.2f}" x2="{0:.2f}" y1="{1}" y2="{2}"/>)", X(pred_ns),
                       y - 4, y + 18);
      if (hi_ns > lo_ns)
        s += fmt::format(R"(<line class="whisker" x1="{:.2f}" x2="{:.2f}" y1="{}" y2="{}"/>)", X(lo_ns), X(hi_ns),
                         y - 3, y - 3);
    }
    s += fmt::format(R"(<text x="{:.1f}" y="{}">{}</text>)",
                     std::max(X(static_cast<double>(b.duration_ns)),
                              base != baseline_ns.end() ? X(static_cast<double>(base->second)) : 0.0) +
                         5,
                     y + 13, duration_text(static_cast<double>(b.duration_ns)));
    s += "</g>";
  }
  return s + "</svg>";
}

}  // namespace

}  // namespace syncscope::html
