// Renders the HTML report from loaded runs (model/run_directory.hpp): the page, its header
// and banners, and per run and scenario the charts, timelines and tables of html_parts.hpp.
// Every label that names a number's origin says "simulated" or "measured" from the run's
// mode (html::outcome_word).
#include "syncscope/reports/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "html_format.hpp"
#include "html_parts.hpp"
#include "report_css.hpp"

namespace syncscope {

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

using namespace html;

std::string scenario_section(const model::ReportRun& run, std::size_t ri, const std::string& scen,
                             std::vector<const model::VariantResult*> vs) {
  const std::string outcome = outcome_word(run.results);
  // Baselines first within each fix, fixes in the order they appear, then layers.
  std::map<std::string, int> fix_rank;
  for (auto* v : vs) fix_rank.emplace(v->fix, static_cast<int>(fix_rank.size()));
  std::stable_sort(vs.begin(), vs.end(), [&](const model::VariantResult* a, const model::VariantResult* b) {
    return std::make_tuple(fix_rank[a->fix], a->layers, !a->baseline) <
           std::make_tuple(fix_rank[b->fix], b->layers, !b->baseline);
  });
  std::set<int> layer_counts;
  for (auto* v : vs) layer_counts.insert(v->layers);
  const bool show_layers = layer_counts.size() > 1;
  const std::string sid = slug(fmt::format("{}-{}-{}", ri, run.results.env.gpu, scen));
  std::string h =
      fmt::format("<section class=\"scenario\" id=\"scenario-{}\" data-mode=\"{}\">\n", sid, esc(run.results.mode));
  // The model trained, beside the scenario (a --hf-config model is not the scenario's own).
  std::string model;
  for (auto* v : vs)
    if (v->network && !v->network->model.empty()) model = v->network->model;
  h += fmt::format("<h2>{}{} on {} <span class=\"meta\">({})</span></h2>\n", esc(scen),
                   model.empty() ? "" : " &#8212; " + esc(model), esc(run.results.env.gpu), esc(run.results.mode));
  h += "<p class=\"meta\">" + esc(provenance_line(run.results)) + "; from " + esc(run.source) + "</p>\n";
  h += "<h3>Predicted vs " + outcome + " speedup</h3>\n" + speedup_chart("speedup-" + sid, vs, show_layers, outcome) +
       "\n";

  // The strips of this scenario, baselines first within each fix as above.
  std::vector<const TimelineStrip*> strips;
  for (const auto& t : run.timelines)
    if (t.scenario == scen) strips.push_back(&t);
  auto strip_rank = [&](const TimelineStrip* t) {
    bool baseline = false;
    for (auto* v : vs) baseline |= v->fix == t->fix && v->variant == t->variant && v->baseline;
    const auto r = fix_rank.find(t->fix);
    return std::make_tuple(r == fix_rank.end() ? 1 << 20 : r->second, !baseline);
  };
  std::stable_sort(strips.begin(), strips.end(),
                   [&](const TimelineStrip* a, const TimelineStrip* b) { return strip_rank(a) < strip_rank(b); });
  h += "<h3>Where the " + outcome + " step time goes</h3>\n" + step_chart("steps-" + sid, strips, vs, outcome) + "\n";
  h += "<h3>Sync points per step (" + outcome + ")</h3>\n" + syncs_chart("syncs-" + sid, vs, show_layers, outcome) +
       "\n";
  h += "<h3>One layer, baseline and fix, on one time axis (" + outcome + ")</h3>\n";
  h += timeline_strips("timeline-" + sid, strips, outcome);

  h += "<h3>Per variant (" + outcome + ")</h3>\n" + variants_table(vs, outcome);
  h += removals_table(vs, outcome);
  // The analytical model's inputs ("Model parameters" read like the network's size).
  h += "<h3>Analytical model inputs</h3>\n" + parameters_details(vs);
  std::vector<const model::ReportRun::SimCheckRow*> checks;
  for (const auto& c : run.sim_checks)
    if (c.scenario == scen) checks.push_back(&c);
  h += sim_check_table(checks);
  return h + "</section>\n";
}

}  // namespace

std::string render_html_report(const std::vector<model::ReportRun>& runs, const HtmlReportOptions& opt) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += fmt::format("<meta name=\"generator\" content=\"syncscope report schema {}\">\n", kHtmlReportSchemaVersion);
  h += "<title>" + esc(opt.title) + "</title>\n<style>" + std::string(reports_detail::kReportCss) +
       "</style>\n</head>\n<body>\n";
  h += "<header><h1>" + esc(opt.title) + "</h1>\n";
  if (!opt.generated_utc.empty()) h += "<p class=\"meta\">Generated " + esc(opt.generated_utc) + " UTC.</p>\n";
  for (const auto& r : runs) {
    const bool sim = r.results.mode == "simulated";
    h += fmt::format("<div class=\"banner mode-{}\" data-mode=\"{}\">mode: {} &#8212; {}{}</div>\n",
                     slug(r.results.mode), esc(r.results.mode), esc(r.results.mode), esc(provenance_line(r.results)),
                     sim ? ". Simulated: every number of this run comes from the discrete-event simulator with the "
                           "named GPU profile, not from a GPU."
                         : ". Measured on the GPU named.");
  }
  h += "</header>\n";
  h += provenance_section(runs);
  h += validation_section(runs);
  h += published_section(runs);
  h += cross_run_tables(runs);
  for (std::size_t ri = 0; ri < runs.size(); ++ri) {
    const auto& run = runs[ri];
    std::vector<std::string> order;
    std::map<std::string, std::vector<const model::VariantResult*>> by_scenario;
    for (const auto& v : run.results.variants) {
      if (!by_scenario.count(v.scenario)) order.push_back(v.scenario);
      by_scenario[v.scenario].push_back(&v);
    }
    for (const auto& scen : order) h += scenario_section(run, ri, scen, by_scenario[scen]);
  }
  h += "<footer><p class=\"meta\">Every number comes from the results.json of the run named in its section "
       "(provenance table above). Simulated runs are labelled as such wherever they appear.</p></footer>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace syncscope
