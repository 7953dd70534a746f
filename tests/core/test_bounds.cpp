// core/bounds.hpp and core/text.hpp: checked arithmetic, the memory check, names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"

using namespace syncscope;

TEST(Bounds, CheckedArithmetic) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(bounds::checked_add(1, 2), 3);
  EXPECT_FALSE(bounds::checked_add(kMax, 1));
  EXPECT_FALSE(bounds::checked_mul(std::int64_t{1} << 40, std::int64_t{1} << 30));
  EXPECT_EQ(bounds::checked_mul(std::uint64_t{3}, std::uint64_t{5}), 15u);
  EXPECT_FALSE(bounds::checked_mul(std::uint64_t{1} << 40, std::uint64_t{1} << 30));
}

TEST(Bounds, NsChecked) {
  struct Row {
    double in;
    bool ok;
  } rows[] = {{0, true},
              {1.4, true},
              {1e18, true},
              {4.7e18, false},
              {1e300, false},
              {-1, false},
              {std::numeric_limits<double>::quiet_NaN(), false},
              {std::numeric_limits<double>::infinity(), false}};
  for (const auto& r : rows) EXPECT_EQ(bounds::ns_checked(r.in).has_value(), r.ok) << r.in;
  EXPECT_EQ(*bounds::ns_checked(1.4), 1);
}

TEST(Bounds, RangesSayTheirReason) {
  EXPECT_TRUE(bounds::kLayers.contains(28));
  EXPECT_FALSE(bounds::kLayers.contains(1000000000));
  EXPECT_FALSE(bounds::kFlopsPerS.contains(1e-300));
  EXPECT_FALSE(bounds::kFlopsPerS.contains(1e17));
  EXPECT_FALSE(bounds::kLatencyNs.contains(1e300));
  EXPECT_FALSE(bounds::kLatencyNs.contains(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_NE(bounds::describe_int(bounds::kLayers).find("1..1024"), std::string::npos);
  EXPECT_NE(bounds::describe_number(bounds::kFlopsPerS, "FLOP/s").find("[1e+09, 1e+16] FLOP/s"), std::string::npos);
}

TEST(Bounds, MemoryCheckNamesTheEstimate) {
  ::setenv("SYNCSCOPE_MEM_AVAILABLE_BYTES", "1073741824", 1);
  EXPECT_EQ(bounds::mem_available_bytes(), 1073741824u);
  EXPECT_NO_THROW(bounds::check_memory(1e9, "x", ""));
  try {
    bounds::check_memory(17e9, "simulating 3 steps", "use fewer steps");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("simulating 3 steps needs an estimated 15.8 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("1.0 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("use fewer steps"), std::string::npos) << m;
  }
  ::unsetenv("SYNCSCOPE_MEM_AVAILABLE_BYTES");
  const auto avail = bounds::mem_available_bytes();
  ASSERT_TRUE(avail.has_value()) << "/proc/meminfo has MemAvailable on Linux";
  EXPECT_GT(*avail, 0u);
}

TEST(Names, Table) {
  struct Row {
    std::string name;
    const char* problem;  // substring; nullptr: fine
  } rows[] = {
      {"qwen3-0.6b", nullptr},
      {"Qwen3 0.6B (bf16), 2048 tokens", nullptr},
      {"Modèle µ-日本語", nullptr},
      {std::string(128, 'a'), nullptr},
      {std::string(64, 'a') + "\xC3\xA9", nullptr},
      {"", "empty"},
      {std::string(129, 'a'), "129 characters"},
      {std::string(1 << 20, 'n'), "characters"},
      {"bad\xFF", "not valid UTF-8"},
      {"trunc\xC3", "not valid UTF-8"},
      {"overlong\xC0\xAF", "not valid UTF-8"},
      {"surrogate\xED\xA0\x80", "not valid UTF-8"},
      {"line\nbreak", "control character (U+000A"},
      {std::string("nul\0x", 5), "control character (U+0000"},
      {"tab\there", "control character"},
      {"del\x7F", "control character"},
      {"c1\xC2\x85", "control character (U+0085"},
      {"esc\x1B[31m", "control character"},
  };
  for (const auto& r : rows) {
    const auto p = name_problem(r.name);
    if (r.problem == nullptr) {
      EXPECT_FALSE(p) << r.name << ": " << *p;
    } else {
      ASSERT_TRUE(p) << r.name;
      EXPECT_NE(p->find(r.problem), std::string::npos) << *p;
    }
  }
}

TEST(Names, Printable) {
  EXPECT_EQ(printable("plain é"), "plain é");
  EXPECT_EQ(printable("a\nb"), "a\\x0Ab");
  EXPECT_EQ(printable(std::string("n\0l", 3)), "n\\x00l");
  EXPECT_EQ(printable("bad\xFF"), "bad\\xFF");
  EXPECT_EQ(printable("c1\xC2\x85"), "c1\\xC2\\x85");
  EXPECT_EQ(utf8_length("日本"), 2u);
}
