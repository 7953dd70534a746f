// The report's "If removed" table: per variant, its trace's worst sync causes and the step
// time replaying that trace without each cause's syncs saves (results.json "sync_removals",
// replay/replay.hpp removal_savings; analyze prints the same per trace).
#include <string>

#include <fmt/format.h>

#include "html_format.hpp"
#include "html_parts.hpp"

namespace syncscope::html {

std::string removals_table(const std::vector<const model::VariantResult*>& vs, const std::string& outcome) {
  bool any = false;
  for (auto* v : vs) any |= !v->sync_removals.empty();
  if (!any) return "";
  std::string h = fmt::format(
      "<h3>If removed ({0} traces replayed without each cause's syncs)</h3>\n"
      "<p class=\"meta\">Per variant, its worst sync causes by blocked + bubble time; the step time saved is the "
      "median over the steps the replay built fully (a dash: no saving claimed). The replay is a dependency graph of "
      "the trace (model/README.md, \"Replay\").</p>\n"
      "<table class=\"removals\"><thead><tr><th class=\"l\">fix</th><th class=\"l\">variant</th><th>L</th><th "
      "class=\"l\">cause</th><th>syncs / step</th><th>step time saved if removed</th></tr></thead><tbody>\n",
      esc(outcome));
  for (auto* v : vs)
    for (const auto& c : v->sync_removals)
      h += fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}{}</td><td>{}</td><td class=\"l\">{}</td><td>{:g}</td><td "
          "data-ns=\"{}\">{}</td></tr>\n",
          esc(v->fix), esc(v->variant), v->baseline ? " (baseline)" : "", v->layers, esc(c.cause), c.syncs_per_step,
          c.saving_ns ? std::to_string(*c.saving_ns) : "",
          c.saving_ns ? duration_text(static_cast<double>(*c.saving_ns)) : "&ndash;");
  return h + "</tbody></table>\n";
}

}  // namespace syncscope::html
