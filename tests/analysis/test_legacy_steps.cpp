// Steps in a CPU-only trace of torch.profiler without Kineto (profiler/analysis/
// legacy_ranges.hpp): the layout Debian 12's torch 1.13 writes (export_chrome_trace of the
// legacy profiler, checked on this machine 2026-12-03): a bare array of "X" events without
// "cat", pid "CPU functions", ProfilerStep#N among them.
#include <gtest/gtest.h>

#include <string>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

const char* kLegacy = R"([
{"name": "ProfilerStep#1", "ph": "X", "ts": 100, "dur": 50, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "aten::mm", "ph": "X", "ts": 110, "dur": 20, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "ProfilerStep#2", "ph": "X", "ts": 200, "dur": 60, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "aten::mm", "ph": "X", "ts": 210, "dur": 20, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "ProfilerStep#3", "ph": "X", "ts": 300, "dur": 70, "tid": 1, "pid": "CPU functions", "args": {}}
])";

TEST(LegacySteps, ProfilerStepsOfALegacyCpuOnlyTraceAreSteps) {
  const Trace t = parse_chrome_json(kLegacy, "legacy.json");
  ASSERT_TRUE(t.ranges.empty()) << "the reader keeps uncategorized events as other events";
  const auto r = analyze(t);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].name, "ProfilerStep#1");
  EXPECT_EQ(r.steps[2].name, "ProfilerStep#3");
  EXPECT_EQ(r.steps[0].end - r.steps[0].start, 50'000);
  EXPECT_EQ(r.steps[1].end - r.steps[1].start, 60'000);
  EXPECT_EQ(r.steps[2].end - r.steps[2].start, 70'000);
  for (const auto& w : r.warnings) EXPECT_EQ(w.find("--step-range"), std::string::npos) << w;
  AnalysisOptions layers;
  layers.layer_glob = "aten::mm";
  EXPECT_EQ(analyze(t, layers).layers.size(), 2u);
  AnalysisOptions other_pid;
  other_pid.pid = 7;  // "CPU functions" is no integer pid: nothing of pid 7
  EXPECT_TRUE(analyze(t, other_pid).steps.empty());
}

TEST(LegacySteps, CategorizedRangesStillWinOverUncategorizedOnes) {
  // A Kineto trace with ProfilerStep#1 as a user annotation and a stray uncategorized event of
  // the same pattern: only the user annotation is a step.
  const char* text = R"({"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
{"ph": "X", "name": "ProfilerStep#9", "pid": 1, "tid": 1, "ts": 300, "dur": 50}
]})";
  const auto r = analyze(parse_chrome_json(text, "mixed.json"));
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].name, "ProfilerStep#1");
}

}  // namespace
}  // namespace syncscope
