// The report's style sheet (reports/assets/report.css), compiled in by
// reports/cmake/embed_text.cmake so report.html needs no other file.
#pragma once

namespace syncscope::reports_detail {
extern const char kReportCss[];
}  // namespace syncscope::reports_detail
