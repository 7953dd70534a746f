// The pieces `syncscope view` is built from (view.hpp): cutting a window into lanes with
// level of detail (view_lanes.cpp) and the page's sections (view_html.cpp, view_tables.cpp).
#pragma once

#include <string>
#include <string_view>

#include "syncscope/reports/view.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::view_detail {

// `s` cut to at most `max` bytes with "..." when longer, never inside a UTF-8 sequence
// (kernel and thread names may hold any text).
inline std::string clip(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t n = max > 3 ? max - 3 : 0;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n)) + "...";
}

// Fills v.lanes, v.events_in_window, v.bars_drawn and v.sampling_notes over
// [v.window_start, v.window_end), first extending the window's end to the end of the GPU
// work launched inside it.
void cut_lanes(const Trace& trace, ViewTrace& v, const ViewOptions& o);

// view_timeline.cpp: the window's lanes, sync markers and critical path as one SVG, on a
// time axis of `axis_ns` (shared by the ranks of a page so their lengths compare).
std::string timeline_svg(const std::string& id, const ViewTrace& v, double axis_ns);

// view_tables.cpp
std::string idle_section(const std::string& id, const ViewTrace& v);
std::string critical_path_section(const ViewTrace& v);
std::string syncs_table(const ViewTrace& v);
std::string causes_table(const ViewTrace& v);
std::string kernels_table(const ViewTrace& v);
std::string launch_delay_table(const ViewTrace& v);
std::string ranks_table(const ViewPage& page);

}  // namespace syncscope::view_detail
