#include "syncscope/model/interval.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

void check_interval(const Interval& x, const std::string& what) {
  SYNCSCOPE_INPUT_ERROR_IF(!std::isfinite(x.value) || !std::isfinite(x.lo) || !std::isfinite(x.hi),
                           fmt::format("{}: value and interval must be finite numbers", what));
  SYNCSCOPE_INPUT_ERROR_IF(!(x.lo <= x.value && x.value <= x.hi),
                           fmt::format("{}: interval [{}, {}] must contain the value {} (need lo <= value <= hi)", what,
                                       x.lo, x.hi, x.value));
}

double Rng::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = 0;
  do {
    u1 = uniform();
  } while (u1 <= 0.0);
  double u2 = uniform();
  double r = std::sqrt(-2.0 * std::log(u1));
  double t = 2.0 * std::numbers::pi * u2;
  spare_ = r * std::sin(t);
  has_spare_ = true;
  return r * std::cos(t);
}

std::size_t Rng::index(std::size_t n) { return static_cast<std::size_t>(engine_() % n); }

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  auto i = static_cast<std::size_t>(std::floor(pos));
  if (i + 1 >= values.size()) return values.back();
  double frac = pos - static_cast<double>(i);
  return values[i] + frac * (values[i + 1] - values[i]);
}

namespace {

// z such that P(|Z| <= z) = level for a standard normal, by bisection on erf.
double two_sided_z(double level) {
  double lo = 0, hi = 10;
  for (int it = 0; it < 200; ++it) {
    double mid = 0.5 * (lo + hi);
    if (std::erf(mid / std::sqrt(2.0)) < level) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

Interval propagate(const std::vector<Interval>& inputs, const Formula& f, const PropagationOptions& options) {
  std::vector<double> point(inputs.size());
  bool all_exact = true;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    point[i] = inputs[i].value;
    all_exact = all_exact && inputs[i].is_exact();
  }
  double centre = f(point);
  if (all_exact || options.samples <= 1) return Interval::exact(centre);

  double z = two_sided_z(options.level);
  Rng rng(options.seed);
  std::vector<double> draws;
  draws.reserve(static_cast<std::size_t>(options.samples));
  std::vector<double> x(inputs.size());
  for (int s = 0; s < options.samples; ++s) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Interval& in = inputs[i];
      double n = rng.normal();
      double half = n >= 0 ? (in.hi - in.value) : (in.value - in.lo);
      x[i] = std::max(0.0, in.value + n * half / z);
    }
    double y = f(x);
    if (std::isfinite(y)) draws.push_back(y);
  }
  if (draws.empty()) return Interval::exact(centre);
  double tail = (1.0 - options.level) / 2.0;
  Interval out{centre, quantile(draws, tail), quantile(draws, 1.0 - tail)};
  // The point value uses the inputs' values; keep it inside its own interval even when the
  // formula is strongly non-linear (min/max) and the draws sit on one side of it.
  out.lo = std::min(out.lo, centre);
  out.hi = std::max(out.hi, centre);
  return out;
}

}  // namespace syncscope::model
