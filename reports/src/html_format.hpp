// Helpers shared by the HTML report's renderers: escaping and ids, numbers with intervals,
// times with units, axes with round ticks, and the word that says what a run's numbers are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "syncscope/model/results.hpp"

namespace syncscope::html {

std::string esc(std::string_view text);   // html_escape
std::string slug(std::string_view text);  // ids: lower-case letters, digits and '-'
std::string num(double v, int digits = 3);
bool has_estimate(const model::Estimate& e);
// "1.259 [1.250, 1.270]" (interval in a muted span), "&ndash;" when there is none.
std::string estimate_text(const model::Estimate& e, int digits = 3);

// What a run's step times and speedups are, from its mode: "simulated" or "measured".
std::string outcome_word(const model::RunResults& r);

// An axis with ticks at 1, 2 or 5 times a power of ten, covering [lo, hi].
struct Axis {
  double lo = 0, hi = 1;  // the range drawn: tick multiples around the data
  double step = 1;
  int decimals = 0;  // enough to tell the ticks apart
  std::vector<double> ticks;
};
Axis nice_axis(double lo, double hi, int target_ticks = 6);

// A time axis over [0, max_ns] labelled in ms or µs (ns below 1 µs), whichever reads best.
struct TimeAxis {
  Axis axis;  // in the unit below
  double ns_per_unit = 1e6;
  std::string unit = "ms";
  double max_ns() const { return axis.hi * ns_per_unit; }
  std::string label(double tick) const;  // "0.5 ms"
};
TimeAxis time_axis(double max_ns, int target_ticks = 6);

// A duration with a unit that suits its size: "40.46 ms", "512 µs", "85 ns".
std::string duration_text(double ns);

// A value in a fixed unit with three or four significant digits: 511842 ns in µs -> "511.8".
std::string in_unit(double value, double per_unit);

}  // namespace syncscope::html
