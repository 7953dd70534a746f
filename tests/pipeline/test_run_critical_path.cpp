// The critical path of each strip's step in a run's outputs: carried in timelines.json
// (model/run_directory.hpp), read back strictly, older files without it still read, and
// drawn in report.html (reports/src/html_critical_path.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "pipeline_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/run_directory.hpp"
#include "syncscope/pipeline/run.hpp"
#include "syncscope/pipeline/summary.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "syncscope/reports/html_report.hpp"
#include "test_paths.hpp"

namespace syncscope::pipeline {
namespace {

namespace fs = std::filesystem;

bool has_text(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A strip as a run before the critical path wrote it (schema 2, a step breakdown, no path).
constexpr const char* kOlderTimelines = R"({"schema_version": 2, "strips": [
  {"scenario": "tiny", "fix": "packing", "variant": "rebuild", "window": "layer_01 in ProfilerStep#1",
   "range": "layer_01", "duration_ns": 1000, "lanes": ["host"], "syncs": 0, "bubble_ns": 0,
   "segments": [[0, "api", 0, 10, "cudaLaunchKernel"]],
   "step": {"step": "ProfilerStep#1", "steps": 2, "device": 0, "duration_ns": 5000, "compute_ns": 1000,
            "copy_ns": 0, "sync_bubble_ns": 0, "other_idle_ns": 4000, "host_blocked_ns": 0, "syncs": 0}}]})";

TEST(TimelinesCriticalPath, OlderTimelinesWithoutItStillRead) {
  const auto strips = model::timelines_from_json(kOlderTimelines, "old.json");
  ASSERT_EQ(strips.size(), 1u);
  ASSERT_TRUE(strips[0].step.has_value());
  EXPECT_EQ(strips[0].step->step, "ProfilerStep#1");
  EXPECT_FALSE(strips[0].critical_path.has_value());
  // And written again, it stays without one (no made-up path).
  EXPECT_FALSE(has_text(model::timelines_to_json(strips), "critical_path"));
}

TimelineStrip strip_with_path() {
  auto strips = model::timelines_from_json(kOlderTimelines, "old.json");
  CriticalPath c;
  c.length_ns = 1000;
  c.host_ns = 600;
  c.gpu_ns = 200;
  c.launch_ns = 50;
  c.sync_wait_ns = 100;
  c.other_ns = 50;
  c.sync_edges = 2;
  c.top = {{CriticalKind::Host, "host tid 3", "cudaLaunchKernel .. aten::item", 0, 600, 1},
           {CriticalKind::SyncWait, "sync aten::item (cudaStreamSynchronize)", "cudaStreamSynchronize", 800, 100, 1}};
  strips[0].critical_path = c;
  return strips[0];
}

TEST(TimelinesCriticalPath, RoundTripsExactly) {
  const TimelineStrip s = strip_with_path();
  const auto back = model::timelines_from_json(model::timelines_to_json({s}), "t.json");
  ASSERT_EQ(back.size(), 1u);
  ASSERT_TRUE(back[0].critical_path.has_value());
  const CriticalPath& c = *back[0].critical_path;
  EXPECT_EQ(c.length_ns, 1000);
  EXPECT_EQ(c.host_ns, 600);
  EXPECT_EQ(c.gpu_ns, 200);
  EXPECT_EQ(c.launch_ns, 50);
  EXPECT_EQ(c.sync_wait_ns, 100);
  EXPECT_EQ(c.other_ns, 50);
  EXPECT_EQ(c.sync_edges, 2u);
  ASSERT_EQ(c.top.size(), 2u);
  EXPECT_EQ(c.top[1].kind, CriticalKind::SyncWait);
  EXPECT_EQ(c.top[1].where, "sync aten::item (cudaStreamSynchronize)");
  EXPECT_EQ(c.top[1].what, "cudaStreamSynchronize");
  EXPECT_EQ(c.top[1].start_ns, 800);
  EXPECT_EQ(c.top[1].duration_ns, 100);
}

// What the reader refuses, each named by its JSON path.
TEST(TimelinesCriticalPath, RefusesSharesThatDoNotSumAndUnknownKinds) {
  const std::string good = model::timelines_to_json({strip_with_path()});
  auto refused = [&](const std::string& from, const std::string& to, const std::string& expected) {
    std::string bad = good;
    const auto at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    try {
      model::timelines_from_json(bad, "t.json");
      ADD_FAILURE() << "read: " << to;
    } catch (const InputError& e) {
      EXPECT_TRUE(has_text(e.what(), expected)) << e.what();
    }
  };
  refused("\"host_ns\":600", "\"host_ns\":601", "t.json: /strips/0/critical_path: expected host_ns + gpu_ns");
  // Beyond physical sense (a time over a day) before the sum is checked.
  refused("\"host_ns\":600", "\"host_ns\":9223372036854775807",
          "/strips/0/critical_path/host_ns: expected a non-negative integer");
  refused("\"gpu_ns\":200", "\"gpu_ns\":-1", "/strips/0/critical_path/gpu_ns: expected a non-negative integer");
  refused("\"kind\":\"sync_wait\"", "\"kind\":\"waiting\"", "/strips/0/critical_path/top/1/kind: expected one of");
  refused("\"sync_edges\":2,", "", "/strips/0/critical_path: missing field \"sync_edges\"");
}

// The report's bar: the five shares side by side from the plot's left edge, as wide together
// as the path's length on the chart's time axis, with the figures in data attributes and the
// longest runs (escaped) in the table below.
TEST(TimelinesCriticalPath, ReportDrawsTheSharesAndTheLongestRuns) {
  TimelineStrip s = strip_with_path();
  s.critical_path->top[0].where = "host tid <3>";
  model::ReportRun run;
  run.results.mode = "simulated";
  run.results.variants.push_back({});
  run.results.variants[0].scenario = "tiny";
  run.results.variants[0].fix = "packing";
  run.results.variants[0].variant = "rebuild";
  run.results.variants[0].baseline = true;
  run.timelines = {s};
  const std::string html = render_html_report({run});
  const auto p = html.find("class=\"chart critical-path-chart\"");
  ASSERT_NE(p, std::string::npos);
  const std::string svg = html.substr(p, html.find("</svg>", p) - p);
  EXPECT_NE(svg.find("data-length-ns=\"1000\" data-host-ns=\"600\" data-gpu-ns=\"200\" data-launch-ns=\"50\" "
                     "data-sync-wait-ns=\"100\" data-other-ns=\"50\" data-sync-edges=\"2\""),
            std::string::npos);
  static const std::regex part(
      R"re(<rect class="part cp-[a-z-]+" style="[^"]*" x="([0-9.]+)" y="\d+" width="([0-9.]+)")re");
  double x = 190, total = 0;
  int parts = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), part); it != std::sregex_iterator(); ++it, ++parts) {
    EXPECT_NEAR(std::stod((*it)[1]), x, 0.02);
    x += std::stod((*it)[2]);
    total += std::stod((*it)[2]);
  }
  EXPECT_EQ(parts, 5);
  // The time axis ends at a round tick at or beyond 1000 ns: the bar is that share of the plot.
  static const std::regex last_tick(R"re(<text class="tick" x="([0-9.]+)")re");
  double right = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), last_tick); it != std::sregex_iterator(); ++it)
    right = std::max(right, std::stod((*it)[1]));
  EXPECT_GT(total, 0);
  EXPECT_LE(190 + total, right + 0.05);
  EXPECT_NE(html.find("host tid &lt;3&gt;"), std::string::npos);
  EXPECT_EQ(html.find("host tid <3>"), std::string::npos);
  EXPECT_NE(html.find("sync aten::item (cudaStreamSynchronize)"), std::string::npos);
}

// A simulated run: every strip's step carries its critical path, the one `analyze
// --critical-path` finds for that step of the same trace, and report.html draws it.
TEST(TimelinesCriticalPath, SimulatedRunCarriesItIntoTheReport) {
  test::TempDir dir;
  RunRequest r;
  r.scenarios = {test::write_scenario(dir.path(), "tiny.yaml").string()};
  r.device = "sim";
  r.gpu_profile = "H200";
  r.out = (dir / "res").string();
  const RunOutcome o = run(r);
  const auto strips = model::timelines_from_json(read_file(o.out / "timelines.json"), "timelines.json");
  ASSERT_FALSE(strips.empty());
  const std::string html = read_file(o.out / "report.html");
  EXPECT_TRUE(has_text(html, "class=\"chart critical-path-chart\"")) << "no critical path chart";
  EXPECT_TRUE(has_text(html, "<table class=\"critical-path-runs\">"));
  for (const auto& s : strips) {
    ASSERT_TRUE(s.step.has_value()) << s.fix << "=" << s.variant;
    ASSERT_TRUE(s.critical_path.has_value()) << s.fix << "=" << s.variant;
    const CriticalPath& c = *s.critical_path;
    EXPECT_GT(c.length_ns, 0);
    EXPECT_EQ(c.host_ns + c.gpu_ns + c.launch_ns + c.sync_wait_ns + c.other_ns, c.length_ns);
    EXPECT_FALSE(c.top.empty());
    // The bar of this variant, with the path's figures.
    const std::regex bar("<g class=\"variant critical-path-bar\" data-variant=\"" + s.fix + "=" + s.variant +
                         "\" data-length-ns=\"" + std::to_string(c.length_ns) + "\" data-host-ns=\"" +
                         std::to_string(c.host_ns) + "\"");
    EXPECT_TRUE(std::regex_search(html, bar)) << s.fix << "=" << s.variant;

    // The same step of the same trace, through analyze's path (replay::add_critical_paths).
    std::string trace_file;
    for (const auto& v : o.results.variants)
      if (v.fix == s.fix && v.variant == s.variant && trace_file.empty()) trace_file = v.trace_file;
    ASSERT_FALSE(trace_file.empty());
    const Trace t = read_trace(o.out / trace_file);
    AnalysisResult a = analyze(t, run_analysis_options());
    replay::add_critical_paths(t, a);
    const WindowStats& w = a.steps[a.steps.size() / 2];
    EXPECT_EQ(w.name, s.step->step);
    ASSERT_TRUE(w.critical_path.has_value());
    EXPECT_EQ(w.critical_path->length_ns, c.length_ns) << s.fix << "=" << s.variant;
    EXPECT_EQ(w.critical_path->sync_wait_ns, c.sync_wait_ns) << s.fix << "=" << s.variant;
  }
}

}  // namespace
}  // namespace syncscope::pipeline
