// model -> Chrome JSON -> model must give back every field.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "full_trace.hpp"
#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

using test::make_full_trace;

TEST(RoundTrip, EveryFieldOfEveryRecordSurvives) {
  const Trace t = make_full_trace();
  const std::string json = chrome_json_string(t);
  const Trace back = parse_chrome_json(json, "roundtrip.json");
  EXPECT_EQ(test::diff_traces(t, back), "");
  // Stable: writing the read-back trace gives the same bytes.
  EXPECT_EQ(chrome_json_string(back), json);
  // And it reads the same in tiny chunks.
  ReadOptions o;
  o.chunk_bytes = 5;
  EXPECT_EQ(test::diff_traces(t, parse_chrome_json(json, "roundtrip.json", o)), "");
}

TEST(RoundTrip, ThroughFilesPlainAndGzip) {
  const Trace t = make_full_trace();
  test::TempDir dir;
  write_trace(t, dir / "t.json");
  write_trace(t, dir / "t.json.gz");
  EXPECT_EQ(test::diff_traces(t, read_trace(dir / "t.json")), "");
  EXPECT_EQ(test::diff_traces(t, read_trace(dir / "t.json.gz")), "");
  EXPECT_EQ(test::gunzip(dir / "t.json.gz"), test::slurp(dir / "t.json"));
}

TEST(RoundTrip, EmptyTrace) {
  Trace t;
  t.finalize();
  const Trace back = parse_chrome_json(chrome_json_string(t), "empty.json");
  EXPECT_EQ(test::diff_traces(t, back), "");
}

TEST(RoundTrip, UnfinalizedInputReadsBackAsFinalized) {
  Trace t = make_full_trace();
  std::reverse(t.kernels.begin(), t.kernels.end());
  std::reverse(t.ranges.begin(), t.ranges.end());
  std::reverse(t.others.begin(), t.others.end());
  std::reverse(t.cuda_events.begin(), t.cuda_events.end());
  const Trace back = parse_chrome_json(chrome_json_string(t), "unsorted.json");
  t.finalize();
  EXPECT_EQ(test::diff_traces(t, back), "");
}

TEST(RoundTrip, TorchProfilerTraceThroughOurFormat) {
  const Trace torch = read_trace(test::torch_fixture());
  test::TempDir dir;
  write_trace(torch, dir / "ours.json.gz");
  const Trace back = read_trace(dir / "ours.json.gz");
  EXPECT_EQ(test::diff_traces(torch, back), "");
  EXPECT_EQ(back.kernels.size(), 120u);
  EXPECT_EQ(back.kernels.front().start, torch.kernels.front().start);
  EXPECT_EQ(back.meta.source_tool, "torch.profiler");
  EXPECT_EQ(back.meta.base_time_ns, 1790857026000000000);
  // The same again through the synthetic all-categories trace.
  const Trace all = read_trace(test::trace_fixture("kineto_all_categories.json"));
  EXPECT_EQ(test::diff_traces(all, parse_chrome_json(chrome_json_string(all), "all.json")), "");
}

TEST(RoundTrip, InvalidUtf8NamesAreReplacedNotPropagated) {
  Trace t;
  Kernel k;
  k.name = t.intern("bad\xff\xfe name \xC3");
  k.start = 10;
  k.end = 20;
  t.kernels.push_back(k);
  t.finalize();
  const std::string json = chrome_json_string(t);
  EXPECT_TRUE(nlohmann::json::accept(json));
  const Trace back = parse_chrome_json(json, "utf8.json");
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.str(back.kernels[0].name), "bad\xEF\xBF\xBD\xEF\xBF\xBD name \xEF\xBF\xBD");
}

}  // namespace
}  // namespace syncscope
