// The HTML report of one or more `syncscope run` results directories: one self-contained
// file (inline SVG and CSS, no scripts, no network) that prints well. Per GPU and
// scenario: predicted vs measured speedup with interval whiskers, sync points per step per
// variant, a timeline strip of one layer for the baseline and each fix, fitted parameters,
// validation verdicts, and the provenance of every number (measured or simulated, GPU,
// date, commit). Rendering only: the numbers come from ReportRun (model/run_directory.hpp:
// RunResults and the timeline strips of analysis/timeline.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "syncscope/model/run_directory.hpp"

namespace syncscope {

inline constexpr int kHtmlReportSchemaVersion = 1;

struct HtmlReportOptions {
  std::string title = "syncscope report";
  std::string generated_utc;  // shown in the header; "" leaves it out (tests)
};

std::string html_escape(std::string_view text);
std::string render_html_report(const std::vector<ReportRun>& runs, const HtmlReportOptions& options = {});

}  // namespace syncscope
