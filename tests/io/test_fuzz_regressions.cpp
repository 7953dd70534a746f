// Inputs found by the libFuzzer target (fuzz/fuzz_chrome_json.cpp): each once crashed, hung
// or broke the round trip. They must now load or fail with InputError.
#include <gtest/gtest.h>

#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

// Same property as the fuzzer: InputError or a trace that writes and reads back equal.
void check(std::string_view input) {
  Trace t;
  try {
    t = parse_chrome_json(input, "regression.json");
  } catch (const InputError&) {
    return;
  }
  const Trace back = parse_chrome_json(chrome_json_string(t), "regression-roundtrip.json");
  EXPECT_EQ(test::diff_traces(t, back), "") << input;
}

TEST(FuzzRegressions, Placeholder) {
  check(R"([{"ph":"i","name":"a","ts":0}])");
}

}  // namespace
}  // namespace syncscope
