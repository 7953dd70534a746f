#pragma once
// Cells the text printers share: one definition each, so tables that show the same quantity
// show it the same way.
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <string>

#include "syncscope/core/units.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope::reports_detail {

// Cut to `width` characters, "..." marking the cut.
inline std::string shorten(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}

// A time in ns as milliseconds with three decimals ("1.234 ms").
inline std::string ms_text(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

// A time in ns, rounded to whole ns, in the unit format_duration picks.
inline std::string duration_cell(double ns) { return format_duration(static_cast<Ns>(std::llround(ns))); }

}  // namespace syncscope::reports_detail
