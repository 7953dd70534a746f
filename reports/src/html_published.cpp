// The report's "Published figures" section: each published figure (Unsloth's blog)
// beside the runs of scenarios/published/ in this report, with the gain ratio and the
// assumptions (model/published.hpp). Only reports holding such runs get the section.
#include <fmt/format.h>

#include <algorithm>

#include "html_format.hpp"
#include "html_parts.hpp"
#include "syncscope/model/published.hpp"

namespace syncscope::html {

std::string published_section(const std::vector<model::ReportRun>& runs) {
  std::vector<model::RunResults> results;
  bool simulated = false;
  for (const auto& r : runs) {
    results.push_back(r.results);
    simulated |= r.results.mode == "simulated";
  }
  const auto rows = model::published_figure_rows(results);
  if (std::none_of(rows.begin(), rows.end(), [](const auto& r) { return r.found; })) return {};
  std::string h = "<h2 id=\"published\">Published figures</h2>\n";
  h += fmt::format(
      "<p class=\"note\">Unsloth's published measurements beside the {} runs of scenarios/published/: gain = speedup "
      "&#8722; 1, ratio = {} gain / published gain (goal {:.2f}&#8211;{:.2f}). {}</p>\n",
      simulated ? "simulated" : "measured", simulated ? "simulated" : "measured", model::kPublishedGoalLo,
      model::kPublishedGoalHi,
      simulated ? "Simulated: our simulator on the assumptions listed, not a measurement on a GPU." : "");
  h += "<table class=\"verdicts\"><thead><tr><th class=\"l\">figure</th><th>published</th><th>" +
       std::string(simulated ? "simulated" : "measured") +
       "</th><th>ratio</th><th class=\"l\">goal</th><th class=\"l\">assumptions</th><th "
       "class=\"l\">source</th></tr></thead><tbody>\n";
  for (const auto& r : rows) {
    auto value = [&](double x) {
      return r.what == "rebuild_ms" ? fmt::format("{:.2f} ms", x) : fmt::format("{:+.1f}%", 100 * x);
    };
    const std::string pub = r.published_lo != r.published_hi
                                ? fmt::format("{:.0f}&#8211;{:.0f}%", 100 * r.published_lo, 100 * r.published_hi)
                                : value(r.published);
    std::string goal = !r.found                                                                   ? "not run"
                       : r.ratio >= model::kPublishedGoalLo && r.ratio <= model::kPublishedGoalHi ? "within"
                                                                                                  : "miss";
    if (r.found && !r.independent) goal += " (not independent)";
    h += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td "
        "class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
        esc(r.figure), pub, r.found ? value(r.simulated) : "&#8211;",
        r.found ? fmt::format("{:.2f}", r.ratio) : "&#8211;", esc(goal), esc(r.assumptions), esc(r.source));
  }
  return h + "</tbody></table>\n";
}

}  // namespace syncscope::html
