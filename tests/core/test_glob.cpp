#include <gtest/gtest.h>

#include "syncscope/core/glob.hpp"

using syncscope::glob_match;

TEST(Glob, LiteralsAndStars) {
  EXPECT_TRUE(glob_match("ProfilerStep#*", "ProfilerStep#12"));
  EXPECT_TRUE(glob_match("ProfilerStep#*", "ProfilerStep#"));
  EXPECT_FALSE(glob_match("ProfilerStep#*", "xProfilerStep#1"));
  EXPECT_TRUE(glob_match("*layer*", "model.layers.3.self_attn"));
  EXPECT_TRUE(glob_match("layer_??", "layer_07"));
  EXPECT_FALSE(glob_match("layer_??", "layer_7"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
}

TEST(Glob, Classes) {
  EXPECT_TRUE(glob_match("layer_[0-9]", "layer_5"));
  EXPECT_FALSE(glob_match("layer_[0-4]", "layer_5"));
  EXPECT_TRUE(glob_match("layer_[!0-4]", "layer_5"));
  EXPECT_TRUE(glob_match("[ab]x", "bx"));
  EXPECT_TRUE(glob_match("a[", "a["));  // unterminated class is a literal
}

TEST(Glob, BacktrackingIsNotExponential) {
  std::string name(2000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*b", name));
}
