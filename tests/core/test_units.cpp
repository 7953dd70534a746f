#include <gtest/gtest.h>

#include "syncscope/core/units.hpp"

using namespace syncscope;

TEST(Units, Conversions) {
  EXPECT_EQ(ns_from_us(5140410405693.753), 5140410405693753);
  EXPECT_EQ(ns_from_us(0.0004), 0);
  EXPECT_EQ(ns_from_us(0.0006), 1);
  EXPECT_EQ(ns_from_ms(13.7), 13'700'000);
  EXPECT_DOUBLE_EQ(ms_from_ns(205'500'000), 205.5);
  EXPECT_DOUBLE_EQ(bytes_per_s(55'700'000, 1'000'000), 55.7e9);
  EXPECT_DOUBLE_EQ(bytes_per_s(1, 0), 0.0);
  EXPECT_DOUBLE_EQ(fraction(1, 4), 0.25);
  EXPECT_DOUBLE_EQ(fraction(1, 0), 0.0);
}
