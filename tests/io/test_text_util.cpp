#include <gtest/gtest.h>

#include <string>

#include <cstdint>
#include <limits>
#include <random>

#include "text_util.hpp"

namespace syncscope::io_detail {
namespace {

TEST(ParseUsAsNs, KinetoThreeDecimalsAreExact) {
  // 16 significant digits: a double cannot hold this to the nanosecond.
  EXPECT_EQ(parse_us_as_ns("5140410405693.753"), 5140410405693753);
  EXPECT_EQ(parse_us_as_ns("0.001"), 1);
  EXPECT_EQ(parse_us_as_ns("12"), 12000);
  EXPECT_EQ(parse_us_as_ns("-1.000"), -1000);
  EXPECT_EQ(parse_us_as_ns("0"), 0);
  EXPECT_EQ(parse_us_as_ns("-0"), 0);
}

TEST(ParseUsAsNs, EightDigitsAtOnceRejectWhatIsNotADigit) {
  // The fast path reads the first 8 integer digits as one word: every position and the
  // bytes just outside '0'..'9' ('/' and ':') must still be rejected, and digits taken exactly.
  EXPECT_EQ(parse_us_as_ns("12345678.000"), 12345678000);
  EXPECT_EQ(parse_us_as_ns("98765432109.999"), 98765432109999);
  for (std::size_t at = 0; at < 8; ++at)
    for (char bad : {'/', ':', ' ', 'a', '.', '\0', '\x80'}) {
      std::string s = "5140410405693.753";
      s[at] = bad;
      EXPECT_FALSE(parse_us_as_ns(s).has_value()) << "byte " << at << " = " << int(bad);
    }
}

TEST(ParseUsAsNs, AbsoluteMicrosecondsOfOldTracesAreExact) {
  // 19 significant digits (ns since 1970 written as us): doubles would be 256 ns off.
  EXPECT_EQ(parse_us_as_ns("1700000000123456.789"), 1700000000123456789);
  EXPECT_EQ(parse_us_as_ns("1700000000123456"), 1700000000123456000);
}

TEST(ParseUsAsNs, ExponentsAndExtraDigitsRoundToNearestNs) {
  EXPECT_EQ(parse_us_as_ns("1.5e1"), 15000);
  EXPECT_EQ(parse_us_as_ns("15E-3"), 15);
  EXPECT_EQ(parse_us_as_ns("1e-9"), 0);
  EXPECT_EQ(parse_us_as_ns("0.0015"), 2);  // 1.5 ns: half away from zero
  EXPECT_EQ(parse_us_as_ns("0.0014999"), 1);
  EXPECT_EQ(parse_us_as_ns("-0.0015"), -2);
  EXPECT_EQ(parse_us_as_ns("2.25"), 2250);
  EXPECT_EQ(parse_us_as_ns("0.00000000000000000000000000000000000000001"), 0);
}

TEST(ParseUsAsNs, RejectsMalformedTextAndOverflow) {
  for (const char* bad :
       {"", "-", "1.", ".5", "1e", "1e+", "abc", "1.0x", "+1", "1 ", " 1", "0x10", "1..2", "--1", "true"})
    EXPECT_FALSE(parse_us_as_ns(bad).has_value()) << bad;
  EXPECT_EQ(parse_us_as_ns("9223372036854775.807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(parse_us_as_ns("9223372036854775.808").has_value());
  EXPECT_EQ(parse_us_as_ns("-9223372036854775.808"), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(parse_us_as_ns("1e400").has_value());
  EXPECT_FALSE(parse_us_as_ns("99999999999999999999").has_value());
}

TEST(AppendUs, ThreeDecimalsAndRoundTrip) {
  auto us = [](std::int64_t ns) {
    std::string s;
    append_us(s, ns);
    return s;
  };
  EXPECT_EQ(us(0), "0.000");
  EXPECT_EQ(us(1), "0.001");
  EXPECT_EQ(us(1234567), "1234.567");
  EXPECT_EQ(us(-1), "-0.001");
  EXPECT_EQ(us(std::numeric_limits<std::int64_t>::min()), "-9223372036854775.808");
  std::mt19937_64 rng(42);
  for (int i = 0; i < 10000; ++i) {
    const auto v = static_cast<std::int64_t>(rng());
    EXPECT_EQ(parse_us_as_ns(us(v)), v);
  }
}

TEST(CanonicalInt, OnlyTheCanonicalSpelling) {
  EXPECT_EQ(canonical_int("7"), 7);
  EXPECT_EQ(canonical_int("-12"), -12);
  EXPECT_FALSE(canonical_int("07").has_value());
  EXPECT_FALSE(canonical_int("+7").has_value());
  EXPECT_FALSE(canonical_int("-0").has_value());
  EXPECT_FALSE(canonical_int("Spans").has_value());
  EXPECT_FALSE(canonical_int("").has_value());
}

TEST(KinetoNames, MemcpyAndMemsetNamesRoundTripEveryKind) {
  for (int k = 0; k <= 5; ++k)
    for (int s = 0; s <= 4; ++s)
      for (int d = 0; d <= 4; ++d) {
        CopyKind kind{};
        MemoryKind src{}, dst{};
        parse_memcpy_name(memcpy_name(CopyKind(k), MemoryKind(s), MemoryKind(d)), kind, src, dst);
        EXPECT_EQ(int(kind), k);
        EXPECT_EQ(int(src), s);
        EXPECT_EQ(int(dst), d);
      }
  for (int m = 0; m <= 4; ++m) EXPECT_EQ(int(parse_memset_name(memset_name(MemoryKind(m)))), m);
  for (int t = 0; t <= 4; ++t) EXPECT_EQ(int(parse_kineto_sync_kind(kineto_sync_kind(SyncType(t)))), t);
  // Kineto's real spellings.
  CopyKind kind{};
  MemoryKind src{}, dst{};
  parse_memcpy_name("Memcpy DtoH (Device -> Pageable)", kind, src, dst);
  EXPECT_EQ(kind, CopyKind::DtoH);
  EXPECT_EQ(src, MemoryKind::Device);
  EXPECT_EQ(dst, MemoryKind::Pageable);
  parse_memcpy_name("Memcpy HtoA (Pinned -> Array)", kind, src, dst);
  EXPECT_EQ(kind, CopyKind::Unknown);
  EXPECT_EQ(src, MemoryKind::Pinned);
  EXPECT_EQ(dst, MemoryKind::Unknown);
  EXPECT_EQ(parse_memset_name("Memset (Device)"), MemoryKind::Device);
  EXPECT_EQ(parse_memset_name("garbage"), MemoryKind::Unknown);
}

}  // namespace
}  // namespace syncscope::io_detail
