// Values with intervals, and how intervals travel through the model's formulas.
//
// Every parameter and every prediction carries a central interval at kIntervalLevel (90%).
// Propagation is by seeded Monte Carlo: each input is drawn from a two-piece normal whose
// 5% and 95% quantiles are the input's lo and hi (so asymmetric intervals stay asymmetric),
// truncated at zero because every model input is a non-negative time or count; the output
// interval is the 5th..95th percentile of the formula over the draws. Inputs are treated as
// independent. The draws use our own Box-Muller over std::mt19937_64 (whose output the
// standard fixes), so a seed gives the same interval on every platform.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace syncscope::model {

inline constexpr double kIntervalLevel = 0.90;

struct Interval {
  double value = 0;
  double lo = 0;
  double hi = 0;

  static Interval exact(double v) { return {v, v, v}; }
  // value +- fraction*value
  static Interval relative(double v, double fraction) { return {v, v - v * fraction, v + v * fraction}; }
  bool is_exact() const { return lo == value && hi == value; }
  double width() const { return hi - lo; }
  bool contains(double x) const { return lo <= x && x <= hi; }
};

// lo <= value <= hi and all finite; throws InputError naming `what` otherwise.
void check_interval(const Interval& x, const std::string& what);

struct PropagationOptions {
  int samples = 4000;
  std::uint64_t seed = 0x5eed'5c09eULL;
  double level = kIntervalLevel;
};

using Formula = std::function<double(std::span<const double>)>;

// f at the inputs' values, with the Monte Carlo interval described above. Exact inputs give
// an exact result without sampling.
Interval propagate(const std::vector<Interval>& inputs, const Formula& f, const PropagationOptions& options = {});

// Deterministic random numbers: std::mt19937_64's sequence is fixed by the standard; the
// distributions are ours because the standard library's are not.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  double uniform();                  // [0, 1), 53 random bits
  double normal();                   // N(0, 1), Box-Muller
  std::size_t index(std::size_t n);  // uniform in [0, n); n > 0

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0;
};

// The q-quantile (0..1) of values by linear interpolation between order statistics.
double quantile(std::vector<double> values, double q);

}  // namespace syncscope::model
