#include <gtest/gtest.h>

#include <cmath>

#include "syncscope/core/error.hpp"
#include "syncscope/model/interval.hpp"

namespace m = syncscope::model;

TEST(Interval, QuantileInterpolates) {
  EXPECT_DOUBLE_EQ(m::quantile({3, 1, 2, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(m::quantile({3, 1, 2, 4}, 0.0), 1);
  EXPECT_DOUBLE_EQ(m::quantile({3, 1, 2, 4}, 1.0), 4);
  EXPECT_DOUBLE_EQ(m::quantile({}, 0.3), 0);
}

TEST(Interval, ExactInputsGiveExactOutput) {
  auto y = m::propagate({m::Interval::exact(15), m::Interval::exact(13.7)},
                        [](std::span<const double> x) { return x[0] * x[1]; });
  EXPECT_TRUE(y.is_exact());
  EXPECT_DOUBLE_EQ(y.value, 15 * 13.7);
}

TEST(Interval, DeterministicForASeed) {
  m::Interval a{10, 8, 13};
  auto f = [](std::span<const double> x) { return 3 * x[0]; };
  auto y1 = m::propagate({a}, f), y2 = m::propagate({a}, f);
  EXPECT_EQ(y1.lo, y2.lo);
  EXPECT_EQ(y1.hi, y2.hi);
  m::PropagationOptions other;
  other.seed = 99;
  auto y3 = m::propagate({a}, f, other);
  EXPECT_NE(y1.lo, y3.lo);
}

TEST(Interval, LinearMapKeepsTheQuantiles) {
  // One input with a 90% interval [8, 13] around 10: 3x has (about) [24, 39] around 30,
  // asymmetric as the input.
  m::PropagationOptions o;
  o.samples = 20000;
  auto y = m::propagate(
      {{10, 8, 13}}, [](std::span<const double> x) { return 3 * x[0]; }, o);
  EXPECT_DOUBLE_EQ(y.value, 30);
  EXPECT_NEAR(y.lo, 24, 0.4);
  EXPECT_NEAR(y.hi, 39, 0.4);
}

TEST(Interval, SumOfIndependentNarrowsRelativeWidth) {
  // Two independent symmetric inputs 10 +- 2 (90%): the sum's 90% half-width is
  // 2 * sqrt(2) ~ 2.83, not the worst case 4.
  m::PropagationOptions o;
  o.samples = 20000;
  auto y = m::propagate(
      {{10, 8, 12}, {10, 8, 12}}, [](std::span<const double> x) { return x[0] + x[1]; }, o);
  EXPECT_NEAR((y.hi - y.lo) / 2, 2 * std::sqrt(2.0), 0.1);
}

TEST(Interval, CheckRejectsBadIntervals) {
  EXPECT_THROW(m::check_interval({5, 6, 7}, "x"), syncscope::InputError);
  EXPECT_THROW(m::check_interval({NAN, 0, 1}, "x"), syncscope::InputError);
  EXPECT_NO_THROW(m::check_interval({5, 4, 7}, "x"));
}

TEST(Rng, UniformAndNormalMoments) {
  m::Rng r(7);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double z = r.normal();
    s += z;
    s2 += z * z;
  }
  EXPECT_NEAR(s / n, 0, 0.01);
  EXPECT_NEAR(s2 / n, 1, 0.02);
  for (int i = 0; i < 1000; ++i) {
    double u = r.uniform();
    ASSERT_GE(u, 0);
    ASSERT_LT(u, 1);
    ASSERT_LT(r.index(5), 5u);
  }
}
