// Renders the HTML report from loaded runs (run_directory.hpp): page, charts, tables.
#include "syncscope/reports/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report_css.hpp"

namespace syncscope {

// ---- HTML ---------------------------------------------------------------------------------

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

std::string esc(std::string_view s) { return html_escape(s); }

// Ids: letters, digits and '-' only.
std::string slug(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

std::string ms(double ns) { return fmt::format("{:.2f}", ns / 1e6); }
std::string num(double v, int digits = 3) { return fmt::format("{:.{}f}", v, digits); }
bool has_estimate(const Estimate& e) { return e.value > 0; }

std::string estimate_text(const Estimate& e, int digits = 3) {
  if (!has_estimate(e)) return "&ndash;";
  if (e.lo == e.hi && e.lo == e.value) return num(e.value, digits);
  return fmt::format("{} <span class=\"ci\">[{}, {}]</span>", num(e.value, digits), num(e.lo, digits), num(e.hi, digits));
}

std::string variant_label(const VariantResult& v, bool show_layers) {
  std::string s = v.fix + "=" + v.variant;
  if (show_layers) s += fmt::format(" L={}", v.layers);
  return s;
}

struct Verdict {
  bool applicable = false;
  bool within = true;
  double error = 0;
};

// The validate command's rule (model/validate.hpp): error = (predicted - measured) /
// measured speedup; a non-baseline variant with a prediction fails beyond its tolerance.
Verdict verdict(const VariantResult& v) {
  Verdict out;
  if (v.baseline || !has_estimate(v.predicted_speedup) || !has_estimate(v.measured_speedup)) return out;
  out.applicable = true;
  out.error = (v.predicted_speedup.value - v.measured_speedup.value) / v.measured_speedup.value;
  out.within = std::fabs(out.error) <= v.tolerance;
  return out;
}


const char* legend_html() {
  return R"HTML(<div class="legend"><span><i style="background:var(--measured)"></i>measured</span>)HTML"
         R"HTML(<span><i style="background:var(--predicted)"></i>predicted</span>)HTML"
         R"HTML(<span><i style="background:#e3ecf7;border:1px solid #9fb6d3"></i>the layer's host range</span>)HTML"
         R"HTML(<span><i style="background:var(--kernel)"></i>kernel launched from it</span>)HTML"
         R"HTML(<span><i style="background:#b9c9de"></i>GPU work launched elsewhere (queued)</span>)HTML"
         R"HTML(<span><i style="background:var(--h2d)"></i>H2D copy</span>)HTML"
         R"HTML(<span><i style="background:var(--d2h)"></i>D2H copy</span>)HTML"
         R"HTML(<span><i style="background:var(--sync)"></i>host blocked in a sync</span>)HTML"
         R"HTML(<span><i style="background:var(--bubble)"></i>GPU idle (bubble)</span></div>)HTML";
}

// Horizontal bars with whiskers: predicted vs measured speedup per non-baseline variant.
std::string speedup_chart(const std::string& id, const std::vector<const VariantResult*>& vs, bool show_layers) {
  std::vector<const VariantResult*> rows;
  for (auto* v : vs)
    if (!v->baseline) rows.push_back(v);
  if (rows.empty()) return "<p class=\"note\">No fix variants besides the baselines.</p>";
  double hi = 1.05, lo = 1.0;
  for (auto* v : rows) {
    for (const Estimate* e : {&v->measured_speedup, &v->predicted_speedup}) {
      if (!has_estimate(*e)) continue;
      hi = std::max(hi, std::max(e->hi, e->value));
      lo = std::min(lo, std::min(e->lo, e->value));
    }
  }
  const double x0 = std::min(0.9, std::floor(lo * 20) / 20), x1 = std::ceil(hi * 1.05 * 20) / 20;
  const int left = 190, width = 860, plot = width - left - 30, row_h = 40, top = 24;
  const int height = top + static_cast<int>(rows.size()) * row_h + 34;
  auto X = [&](double v) { return left + (v - x0) / (x1 - x0) * plot; };
  std::string s = fmt::format(
      R"(<svg class="chart speedup-chart" id="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="predicted and measured speedup">)",
      id, width, height, width, height);
  s += fmt::format(R"(<text x="{}" y="14">speedup over the baseline (x); whiskers: interval</text>)", left);
  // Grid and axis.
  const int ticks = 6;
  s += "<g class=\"axis\">";
  for (int t = 0; t <= ticks; ++t) {
    const double v = x0 + (x1 - x0) * t / ticks;
    s += fmt::format(R"(<line class="grid" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(v), top, height - 28);
    s += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{:.2f}</text>)", X(v), height - 14, v);
  }
  s += "</g>";
  s += fmt::format(R"(<line class="baseline-line" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(1.0), top - 4,
                   height - 28);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const VariantResult& v = *rows[i];
    const int y = top + static_cast<int>(i) * row_h;
    s += fmt::format(R"(<g class="variant" data-variant="{}">)", esc(v.fix + "=" + v.variant));
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", left - 8, y + 22, esc(variant_label(v, show_layers)));
    auto bar = [&](const Estimate& e, const char* cls, int dy, const char* what) {
      if (!has_estimate(e)) {
        s += fmt::format(R"(<text class="{}-missing" x="{}" y="{}">no {}</text>)", cls, left + 4, y + dy + 11, what);
        return;
      }
      const double bx = X(std::max(x0, std::min(1.0, e.value))), ex = X(std::max(1.0, e.value));
      s += fmt::format(R"(<rect class="bar {}" x="{:.1f}" y="{}" width="{:.1f}" height="14"><title>{} {:.4f} [{:.4f}, {:.4f}]</title></rect>)",
                       cls, std::min(bx, X(e.value)), y + dy, std::max(1.0, std::fabs(ex - bx)), what, e.value, e.lo, e.hi);
      s += fmt::format(R"(<line class="whisker" x1="{:.1f}" x2="{:.1f}" y1="{}" y2="{}"/>)", X(e.lo), X(e.hi), y + dy + 7, y + dy + 7);
      s += fmt::format(R"(<line class="whisker" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(e.lo), y + dy + 2, y + dy + 12);
      s += fmt::format(R"(<line class="whisker" x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}"/>)", X(e.hi), y + dy + 2, y + dy + 12);
      // The label goes right of everything drawn on this row (bar end at 1.0 or beyond).
      s += fmt::format(R"(<text x="{:.1f}" y="{}">{:.3f}</text>)", std::max(X(1.0), X(std::max(e.hi, e.value))) + 4,
                       y + dy + 11, e.value);
    };
    bar(v.predicted_speedup, "predicted", 2, "prediction");
    bar(v.measured_speedup, "measured", 19, "measurement");
    s += "</g>";
  }
  s += "</svg>";
  return s;
}

std::string syncs_chart(const std::string& id, const std::vector<const VariantResult*>& vs, bool show_layers) {
  if (vs.empty()) return "";
  double hi = 1;
  for (auto* v : vs) hi = std::max(hi, v->syncs_per_step);
  const int left = 190, width = 860, plot = width - left - 60, row_h = 22, top = 22;
  const int height = top + static_cast<int>(vs.size()) * row_h + 10;
  std::string s = fmt::format(
      R"(<svg class="chart syncs-chart" id="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="sync points per step">)",
      id, width, height, width, height);
  s += fmt::format(R"(<text x="{}" y="14">host sync points per step (baseline first in each fix)</text>)", left);
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const VariantResult& v = *vs[i];
    const int y = top + static_cast<int>(i) * row_h;
    const double w = v.syncs_per_step / hi * plot;
    s += fmt::format(R"(<g class="variant" data-variant="{}">)", esc(v.fix + "=" + v.variant));
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}{}</text>)", left - 8, y + 13,
                     esc(variant_label(v, show_layers)), v.baseline ? " (baseline)" : "");
    s += fmt::format(R"(<rect class="bar syncs" x="{}" y="{}" width="{:.1f}" height="14"><title>{:.1f} syncs per step</title></rect>)",
                     left, y + 2, std::max(0.5, w), v.syncs_per_step);
    s += fmt::format(R"(<text x="{:.1f}" y="{}">{:g}</text></g>)", left + w + 5, y + 13, v.syncs_per_step);
  }
  s += "</svg>";
  return s;
}

std::string timeline_svg(const std::string& id, const TimelineStrip& t) {
  const int left = 170, width = 1100, plot = width - left - 10, lane_h = 18, top = 20;
  std::vector<std::string> lanes = t.lanes;
  if (lanes.empty()) lanes.push_back("host");
  const int height = top + static_cast<int>(lanes.size()) * lane_h + 24;
  const double dur = static_cast<double>(std::max<Ns>(1, t.duration_ns));
  auto X = [&](Ns v) { return left + static_cast<double>(v) / dur * plot; };
  std::map<std::string, int> lane_index;
  for (std::size_t i = 0; i < lanes.size(); ++i) lane_index[lanes[i]] = static_cast<int>(i);
  std::string s = fmt::format(
      R"(<svg class="timeline-strip" id="{}" data-variant="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="timeline of {}">)",
      id, esc(t.fix + "=" + t.variant), width, height, width, height, esc(t.window));
  // Where the range's own work sits: without syncs the GPU runs behind the host, so the
  // window is mostly queued work and the range's kernels come at its end.
  std::string own;
  {
    Ns host = -1, first = -1, last = -1;
    for (const auto& g : t.segments) {
      if (g.kind == "range") host = g.end - g.start;
      const bool gpu_own = g.kind == "kernel" || g.kind == "h2d" || g.kind == "d2h" || g.kind == "copy";
      if (!gpu_own || g.lane == "host") continue;
      first = first < 0 ? g.start : std::min(first, g.start);
      last = std::max(last, g.end);
    }
    if (host >= 0) own += fmt::format("; host range {} ms", ms(static_cast<double>(host)));
    if (first >= 0)
      own += fmt::format(", its GPU work {}&#8211;{} ms", ms(static_cast<double>(first)), ms(static_cast<double>(last)));
  }
  s += fmt::format(R"(<text x="0" y="13">{}={}: {} &#8212; {} ms, {} sync point(s), {} ms GPU idle{}</text>)",
                   esc(t.fix), esc(t.variant), esc(t.window), ms(static_cast<double>(t.duration_ns)), t.syncs,
                   ms(static_cast<double>(t.bubble_ns)), own);
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const int y = top + static_cast<int>(i) * lane_h;
    s += fmt::format(R"(<rect class="lane-bg" x="{}" y="{}" width="{}" height="{}"/>)", left, y, plot, lane_h - 2);
    s += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", left - 6, y + 12, esc(lanes[i]));
  }
  const int gpu_top = top + lane_h, gpu_h = std::max(lane_h - 2, (static_cast<int>(lanes.size()) - 1) * lane_h - 2);
  // The host range under everything on its lane.
  for (const auto& g : t.segments) {
    if (g.kind != "range") continue;
    auto it = lane_index.find(g.lane);
    if (it == lane_index.end()) continue;
    s += fmt::format(R"(<rect class="seg kind-range" x="{:.2f}" y="{}" width="{:.2f}" height="{}"><title>{} {} us</title></rect>)",
                     X(g.start), top + it->second * lane_h + 1, std::max(0.5, X(g.end) - X(g.start)), lane_h - 4,
                     esc(g.label), num(static_cast<double>(g.end - g.start) / 1e3, 1));
  }
  // Bubbles first (under the bars).
  for (const auto& g : t.segments) {
    if (g.kind != "bubble") continue;
    s += fmt::format(R"(<rect class="seg kind-bubble" x="{:.2f}" y="{}" width="{:.2f}" height="{}"><title>{} {} us</title></rect>)",
                     X(g.start), gpu_top, std::max(0.5, X(g.end) - X(g.start)), gpu_h, esc(g.label),
                     num(static_cast<double>(g.end - g.start) / 1e3, 1));
  }
  for (const auto& g : t.segments) {
    if (g.kind == "bubble" || g.kind == "range") continue;
    auto it = lane_index.find(g.lane);
    if (it == lane_index.end()) continue;
    const int y = top + it->second * lane_h + (g.kind == "api" ? 6 : 1);
    const int h = g.kind == "api" ? 4 : lane_h - 4;
    s += fmt::format(R"(<rect class="seg kind-{}" x="{:.2f}" y="{}" width="{:.2f}" height="{}"><title>{} {} us</title></rect>)",
                     slug(g.kind), X(g.start), y, std::max(0.5, X(g.end) - X(g.start)), h, esc(g.label),
                     num(static_cast<double>(g.end - g.start) / 1e3, 1));
  }
  // Time axis in ms.
  const int ay = top + static_cast<int>(lanes.size()) * lane_h + 14;
  for (int k = 0; k <= 5; ++k) {
    const Ns v = t.duration_ns * k / 5;
    s += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="{}">{} ms</text>)", X(v), ay, k == 5 ? "end" : "middle",
                     ms(static_cast<double>(v)));
  }
  s += "</svg>";
  return s;
}

std::string provenance_line(const RunResults& r) {
  return fmt::format("{} on {} (profile {}), {} UTC, commit {}", r.mode, r.env.gpu.empty() ? "unknown GPU" : r.env.gpu,
                     r.env.gpu_profile.empty() ? "none" : r.env.gpu_profile, r.env.date_utc, r.env.commit);
}

}  // namespace

std::string render_html_report(const std::vector<ReportRun>& runs, const HtmlReportOptions& opt) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<meta name=\"generator\" content=\"syncscope report schema {}\">\n", kHtmlReportSchemaVersion);
  h += "<title>" + esc(opt.title) + "</title>\n<style>" + std::string(reports_detail::kReportCss) + "</style>\n</head>\n<body>\n";
  h += "<header><h1>" + esc(opt.title) + "</h1>\n";
  if (!opt.generated_utc.empty()) h += "<p class=\"meta\">Generated " + esc(opt.generated_utc) + " UTC.</p>\n";
  bool any_sim = false, any_measured = false;
  for (const auto& r : runs) (r.results.mode == "simulated" ? any_sim : any_measured) = true;
  for (const auto& r : runs) {
    const bool sim = r.results.mode == "simulated";
    h += fmt::format("<div class=\"banner mode-{}\" data-mode=\"{}\">mode: {} &#8212; {}{}</div>\n", slug(r.results.mode),
                     esc(r.results.mode), esc(r.results.mode), esc(provenance_line(r.results)),
                     sim ? ". Simulated: every number of this run comes from the discrete-event simulator with the "
                           "named GPU profile, not from a GPU."
                         : ". Measured on the GPU named.");
  }
  h += "</header>\n";

  // Provenance table.
  h += "<h2 id=\"provenance\">Provenance</h2>\n<table class=\"provenance\"><thead><tr>"
       "<th class=\"l\">run</th><th class=\"l\">mode</th><th class=\"l\">GPU</th><th class=\"l\">GPU profile</th>"
       "<th class=\"l\">driver</th><th class=\"l\">CUDA</th><th class=\"l\">LibTorch</th><th class=\"l\">host</th>"
       "<th class=\"l\">date (UTC)</th><th class=\"l\">commit</th><th>schema</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i].results;
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td></tr>\n",
        esc(runs[i].source), esc(r.mode), esc(r.env.gpu), esc(r.env.gpu_profile), esc(r.env.driver), esc(r.env.cuda),
        esc(r.env.libtorch), esc(r.env.host), esc(r.env.date_utc), esc(r.env.commit), r.schema_version);
  }
  h += "</tbody></table>\n";
  for (const auto& run : runs)
    for (const auto& n : run.results.notes) h += "<p class=\"note\">" + esc(run.source) + ": " + esc(n) + "</p>\n";
  if (any_sim && any_measured)
    h += "<p class=\"note\">This report mixes measured and simulated runs: each section says which it shows.</p>\n";

  // Validation verdicts over everything.
  h += "<h2 id=\"validation\">Validation: predicted vs measured speedup</h2>\n";
  h += "<table class=\"verdicts\"><thead><tr><th class=\"l\">mode</th><th class=\"l\">GPU</th><th "
       "class=\"l\">scenario</th><th class=\"l\">fix</th><th class=\"l\">variant</th><th>L</th><th>predicted</th>"
       "<th>measured</th><th>error</th><th>tolerance</th><th class=\"l\">verdict</th></tr></thead><tbody>\n";
  int compared = 0, failures = 0;
  double sum_abs = 0, max_abs = 0;
  for (const auto& run : runs) {
    for (const auto& v : run.results.variants) {
      if (v.baseline) continue;
      const Verdict vd = verdict(v);
      std::string verdict_html = "<span class=\"na\">no prediction</span>";
      if (vd.applicable) {
        ++compared;
        sum_abs += std::fabs(vd.error);
        max_abs = std::max(max_abs, std::fabs(vd.error));
        failures += !vd.within;
        verdict_html = vd.within ? "<span class=\"pass\">PASS</span>" : "<span class=\"fail\">FAIL</span>";
      }
      h += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td "
          "class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
          esc(run.results.mode), esc(run.results.env.gpu), esc(v.scenario), esc(v.fix), esc(v.variant), v.layers,
          estimate_text(v.predicted_speedup), estimate_text(v.measured_speedup),
          vd.applicable ? fmt::format("{:+.1f}%", 100 * vd.error) : "&ndash;", fmt::format("{:.0f}%", 100 * v.tolerance),
          verdict_html);
    }
  }
  h += "</tbody></table>\n";
  h += fmt::format(
      "<p class=\"summary\" data-failures=\"{}\">{} variant(s) compared; mean absolute error {:.1f}%, max {:.1f}%; "
      "{} outside tolerance.</p>\n",
      failures, compared, compared ? 100 * sum_abs / compared : 0.0, 100 * max_abs, failures);

  // Cross-GPU table per scenario when several runs share it.
  std::map<std::string, std::vector<std::size_t>> runs_by_scenario;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::set<std::string> names;
    for (const auto& v : runs[i].results.variants) names.insert(v.scenario);
    for (const auto& n : names) runs_by_scenario[n].push_back(i);
  }
  for (const auto& [scen, idx] : runs_by_scenario) {
    if (idx.size() < 2) continue;
    h += "<h3>" + esc(scen) + " across runs (measured speedup)</h3>\n<table class=\"cross-gpu\"><thead><tr><th "
         "class=\"l\">fix=variant</th>";
    for (auto i : idx) h += "<th>" + esc(runs[i].results.env.gpu + " (" + runs[i].results.mode + ")") + "</th>";
    h += "</tr></thead><tbody>\n";
    std::set<std::string> keys;
    for (auto i : idx)
      for (const auto& v : runs[i].results.variants)
        if (v.scenario == scen) keys.insert(v.fix + "=" + v.variant);
    for (const auto& k : keys) {
      h += "<tr><td class=\"l\">" + esc(k) + "</td>";
      for (auto i : idx) {
        std::string cell = "&ndash;";
        for (const auto& v : runs[i].results.variants)
          if (v.scenario == scen && v.fix + "=" + v.variant == k) cell = estimate_text(v.measured_speedup);
        h += "<td>" + cell + "</td>";
      }
      h += "</tr>\n";
    }
    h += "</tbody></table>\n";
  }

  // Per run x scenario sections.
  for (std::size_t ri = 0; ri < runs.size(); ++ri) {
    const auto& run = runs[ri];
    std::vector<std::string> order;
    std::map<std::string, std::vector<const VariantResult*>> by_scenario;
    for (const auto& v : run.results.variants) {
      if (!by_scenario.count(v.scenario)) order.push_back(v.scenario);
      by_scenario[v.scenario].push_back(&v);
    }
    for (const auto& scen : order) {
      auto vs = by_scenario[scen];
      // Baselines first within each fix, fixes in the order they appear, then layers.
      std::map<std::string, int> fix_rank;
      for (auto* v : vs) fix_rank.emplace(v->fix, static_cast<int>(fix_rank.size()));
      std::stable_sort(vs.begin(), vs.end(), [&](const VariantResult* a, const VariantResult* b) {
        return std::make_tuple(fix_rank[a->fix], a->layers, !a->baseline) <
               std::make_tuple(fix_rank[b->fix], b->layers, !b->baseline);
      });
      std::set<int> layer_counts;
      for (auto* v : vs) layer_counts.insert(v->layers);
      const bool show_layers = layer_counts.size() > 1;
      const std::string sid = slug(fmt::format("{}-{}-{}", ri, run.results.env.gpu, scen));
      h += fmt::format("<section class=\"scenario\" id=\"scenario-{}\" data-mode=\"{}\">\n", sid, esc(run.results.mode));
      h += fmt::format("<h2>{} on {} <span class=\"meta\">({})</span></h2>\n", esc(scen), esc(run.results.env.gpu),
                       esc(run.results.mode));
      h += "<p class=\"meta\">" + esc(provenance_line(run.results)) + "; from " + esc(run.source) + "</p>\n";
      h += "<h3>Predicted vs measured speedup</h3>\n" + speedup_chart("speedup-" + sid, vs, show_layers) + "\n";
      h += "<h3>Sync points per step</h3>\n" + syncs_chart("syncs-" + sid, vs, show_layers) + "\n";

      // Timeline strips of this scenario.
      std::vector<const TimelineStrip*> strips;
      for (const auto& t : run.timelines)
        if (t.scenario == scen) strips.push_back(&t);
      h += "<h3>One layer, baseline and fix</h3>\n";
      if (strips.empty()) {
        h += "<p class=\"note\">No timeline kept for this scenario (no traces in the run).</p>\n";
      } else {
        h += legend_html();
        for (auto* t : strips)
          h += timeline_svg(slug("timeline-" + sid + "-" + t->fix + "-" + t->variant), *t) + "\n";
      }

      // The numbers.
      h += "<h3>Per variant</h3>\n<table class=\"variants\"><thead><tr><th class=\"l\">fix</th><th "
           "class=\"l\">variant</th><th>L</th><th>step time (ms)</th><th>syncs / step</th><th>bubble (ms/step)</th>"
           "<th>host blocked (ms/step)</th><th>H2D overlap</th><th>D2H overlap</th><th>measured speedup</th>"
           "<th>predicted speedup</th><th class=\"l\">verdict</th><th class=\"l\">trace</th></tr></thead><tbody>\n";
      for (auto* v : vs) {
        const Verdict vd = verdict(*v);
        Estimate st = v->step_time_ns;
        st.value /= 1e6;
        st.lo /= 1e6;
        st.hi /= 1e6;
        h += fmt::format(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}{}</td><td>{}</td><td>{}</td><td>{:g}</td><td>{}</td>"
            "<td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td "
            "class=\"l\">{}</td></tr>\n",
            esc(v->fix), esc(v->variant), v->baseline ? " (baseline)" : "", v->layers, estimate_text(st, 2),
            v->syncs_per_step, ms(v->sync_bubble_ns_per_step), ms(v->sync_blocked_ns_per_step),
            v->h2d_overlap_fraction, v->d2h_overlap_fraction, estimate_text(v->measured_speedup),
            estimate_text(v->predicted_speedup),
            !vd.applicable ? "<span class=\"na\">&ndash;</span>"
                           : (vd.within ? "<span class=\"pass\">PASS</span>" : "<span class=\"fail\">FAIL</span>"),
            esc(v->trace_file));
      }
      h += "</tbody></table>\n";

      // Fitted and derived model parameters.
      h += "<h3>Model parameters</h3>\n";
      bool any_params = false;
      for (auto* v : vs) any_params |= !v->model_parameters.empty();
      if (!any_params) {
        h += "<p class=\"note\">No model parameters recorded.</p>\n";
      } else {
        h += "<table class=\"parameters\"><thead><tr><th class=\"l\">fix=variant</th><th>L</th><th "
             "class=\"l\">parameter</th><th>value</th></tr></thead><tbody>\n";
        for (auto* v : vs)
          for (const auto& [k, val] : v->model_parameters)
            h += fmt::format("<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td>{:.6g}</td></tr>\n",
                             esc(v->fix + "=" + v->variant), v->layers, esc(k), val);
        h += "</tbody></table>\n<p class=\"note\">Times in ns (suffix _ns); intervals where given as _lo/_hi.</p>\n";
      }

      // Simulator against measurement, when the run checked it.
      std::vector<const ReportRun::SimCheckRow*> checks;
      for (const auto& c : run.sim_checks)
        if (c.scenario == scen) checks.push_back(&c);
      if (!checks.empty()) {
        h += "<h3>Simulator vs measurement</h3>\n<table class=\"sim-check\"><thead><tr><th "
             "class=\"l\">fix=variant</th><th class=\"l\">metric</th><th>simulated</th><th>measured</th>"
             "<th>difference</th></tr></thead><tbody>\n";
        for (auto* c : checks)
          h += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.6g}</td><td>{:.6g}</td><td>{:+.1f}%</td></tr>\n",
                           esc(c->fix + "=" + c->variant), esc(c->metric), c->simulated, c->measured, 100 * c->relative);
        h += "</tbody></table>\n";
      }
      h += "</section>\n";
    }
  }
  h += "<footer><p class=\"meta\">Every number comes from the results.json of the run named in its section "
       "(provenance table above). Simulated runs are labelled as such wherever they appear.</p></footer>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace syncscope
