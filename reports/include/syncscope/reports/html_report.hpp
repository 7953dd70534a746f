// The HTML report of one or more `syncscope run` results directories: one self-contained
// file (inline SVG and CSS, no scripts, no network) that prints well. Per run and scenario:
// predicted vs measured (or simulated) speedup with interval whiskers; where one step's
// time goes per variant (GPU compute, copies, idle in sync bubbles, other idle; the host's
// blocked time beside it; the predicted saving drawn on each fix's bar); sync points per
// step; one layer of the baseline and each fix on one shared time axis; the numbers per
// variant; the model's parameters per fix (folded); validation verdicts and the provenance
// of every number. Every label naming a number's origin says "simulated" or "measured"
// from its run's mode. Rendering only: the numbers come from ReportRun
// (model/run_directory.hpp: RunResults and the strips of analysis/timeline.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "syncscope/model/run_directory.hpp"

namespace syncscope {

// 2: mode-named labels, step bars, strips on one time axis, parameters folded per fix.
inline constexpr int kHtmlReportSchemaVersion = 2;

struct HtmlReportOptions {
  std::string title = "syncscope report";
  std::string generated_utc;  // shown in the header; "" leaves it out (tests)
};

std::string html_escape(std::string_view text);
std::string render_html_report(const std::vector<model::ReportRun>& runs, const HtmlReportOptions& options = {});

}  // namespace syncscope
