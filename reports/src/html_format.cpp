#include "html_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "syncscope/reports/html_report.hpp"

namespace syncscope::html {

std::string esc(std::string_view text) { return html_escape(text); }

std::string slug(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

std::string num(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }
bool has_estimate(const model::Estimate& e) { return e.value > 0; }

std::string estimate_text(const model::Estimate& e, int digits) {
  if (!has_estimate(e)) return "&ndash;";
  if (e.lo == e.hi && e.lo == e.value) return num(e.value, digits);
  return fmt::format("{} <span class=\"ci\">[{}, {}]</span>", num(e.value, digits), num(e.lo, digits),
                     num(e.hi, digits));
}

std::string outcome_word(const model::RunResults& r) { return r.mode == "simulated" ? "simulated" : "measured"; }

Axis nice_axis(double lo, double hi, int target_ticks) {
  Axis a;
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo <= 0) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
  const double raw = (hi - lo) / std::max(1, target_ticks);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  a.step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
  // Whole multiples of the step, computed from integers so they print exactly.
  const auto first = static_cast<long long>(std::floor(lo / a.step + 1e-9));
  const auto last = static_cast<long long>(std::ceil(hi / a.step - 1e-9));
  a.lo = static_cast<double>(first) * a.step;
  a.hi = static_cast<double>(last) * a.step;
  for (long long k = first; k <= last; ++k) a.ticks.push_back(static_cast<double>(k) * a.step);
  a.decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(a.step) - 1e-9)));
  return a;
}

TimeAxis time_axis(double max_ns, int target_ticks) {
  TimeAxis t;
  max_ns = std::max(max_ns, 1.0);
  if (max_ns >= 1e6) {
    t.ns_per_unit = 1e6;
    t.unit = "ms";
  } else if (max_ns >= 1e3) {
    t.ns_per_unit = 1e3;
    t.unit = "µs";
  } else {
    t.ns_per_unit = 1;
    t.unit = "ns";
  }
  t.axis = nice_axis(0, max_ns / t.ns_per_unit, target_ticks);
  return t;
}

std::string TimeAxis::label(double tick) const { return fmt::format("{:.{}f} {}", tick, axis.decimals, unit); }

std::string in_unit(double value, double per_unit) {
  const double v = value / per_unit, a = std::fabs(v);
  return num(v, a >= 100 ? 1 : a >= 10 ? 2 : 3);
}

std::string duration_text(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e6) return in_unit(ns, 1e6) + " ms";
  if (a >= 1e3) return in_unit(ns, 1e3) + " µs";
  return fmt::format("{:.0f} ns", ns);
}

}  // namespace syncscope::html
