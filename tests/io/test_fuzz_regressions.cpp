// Inputs found by the libFuzzer target (fuzz/fuzz_chrome_json.cpp). Each once crashed or
// broke one of the fuzzer's properties; they must now load, or fail with InputError, the
// same way whatever the read size, and a loaded trace must write and read back equal.
#include <gtest/gtest.h>

#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

// The fuzzer's properties, through files (so gzip input goes through the inflater too).
void check_file(const std::filesystem::path& p) {
  bool ok_whole = false, ok_chunked = false;
  Trace whole, chunked;
  try {
    whole = read_trace(p);
    ok_whole = true;
  } catch (const InputError&) {
  }
  ReadOptions small;
  small.chunk_bytes = 3;
  try {
    chunked = read_trace(p, small);
    ok_chunked = true;
  } catch (const InputError&) {
  }
  ASSERT_EQ(ok_whole, ok_chunked) << p;
  if (!ok_whole) return;
  EXPECT_EQ(test::diff_traces(whole, chunked), "") << p;
  EXPECT_EQ(test::diff_traces(whole, parse_chrome_json(chrome_json_string(whole), "roundtrip.json")), "") << p;
}

TEST(FuzzRegressions, SavedInputs) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("traces/fuzz"))) {
    check_file(e.path());
    ++n;
  }
  EXPECT_GE(n, 1u);
}

// corrupt-gzip-crc.json.gz (the H200 fixture with bytes flipped): read whole, the gzip CRC
// check failed first; read in 3-byte steps, the JSON it inflates to failed first. Both are
// InputError naming the file.
TEST(FuzzRegressions, CorruptGzipFailsWhicheverCheckComesFirst) {
  const auto p = test::fixture("traces/fuzz/corrupt-gzip-crc.json.gz");
  for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{3}}) {
    ReadOptions o;
    o.chunk_bytes = chunk;
    try {
      read_trace(p, o);
      ADD_FAILURE() << "no error with chunk " << chunk;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
  }
}

// The interning hash read 8-byte words past the end of names 8..15 bytes long (ASan found
// it on "ProfilerStep#0"). Every short length must intern and round-trip.
TEST(FuzzRegressions, NamesOfEveryShortLength) {
  std::string events;
  for (int len = 0; len <= 40; ++len) {
    if (!events.empty()) events += ",";
    events += R"({"ph":"X","cat":"cpu_op","pid":1,"tid":1,"ts":)" + std::to_string(len) + R"(,"dur":0.5,"name":")" +
              std::string(static_cast<std::size_t>(len), static_cast<char>('a' + len % 26)) + "\"}";
  }
  const Trace t = parse_chrome_json("[" + events + "]", "lengths.json");
  ASSERT_EQ(t.ranges.size(), 41u);
  for (std::size_t i = 0; i < t.ranges.size(); ++i) EXPECT_EQ(t.str(t.ranges[i].name).size(), i);
  EXPECT_EQ(test::diff_traces(t, parse_chrome_json(chrome_json_string(t), "lengths2.json")), "");
}

// fuzz_nsys_sqlite (CI, 2026-12-02): a database byte zeroed inside EXPORT_PRODUCT_VERSION
// gave meta.extra["nsys.EXPORT_PRODUCT_VERSION"] = "2024\0" "6.2.225". nlohmann's accept()
// stops at the NUL, so the writer wrote the value raw (2024<NUL>6.2.225) and our own output
// failed to read back. A value with a NUL is written as a string and reads back equal.
TEST(FuzzRegressions, ProvenanceValueWithNulIsWrittenAsAString) {
  Trace t;
  t.meta.extra["nsys.EXPORT_PRODUCT_VERSION"] = std::string("2024") + '\0' + "6.2.225";
  t.meta.extra["trace_id"] = "42";  // a plain number still goes out raw, as Kineto wrote it
  const std::string json = chrome_json_string(t);
  EXPECT_NE(json.find("\"trace_id\":42"), std::string::npos) << json;
  const Trace back = parse_chrome_json(json, "nul.json");
  ASSERT_EQ(back.meta.extra.count("nsys.EXPORT_PRODUCT_VERSION"), 1u);
  EXPECT_EQ(back.meta.extra.at("nsys.EXPORT_PRODUCT_VERSION"), t.meta.extra.at("nsys.EXPORT_PRODUCT_VERSION"));
}

}  // namespace
}  // namespace syncscope
