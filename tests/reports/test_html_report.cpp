#include <gtest/gtest.h>

#include <regex>
#include <tuple>

#include "report_fixture.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope {
namespace {

using namespace reporttest;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(HtmlReport, EscapesEveryString) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  model::ReportRun run{synthetic_results(), "dir<1>", {}, {}};
  std::string html = render_html_report({run});
  EXPECT_EQ(html.find("<script>"), std::string::npos);  // the host name above
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("tiny<&>"), std::string::npos);
  EXPECT_NE(html.find("tiny&lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(html.find("dir&lt;1&gt;"), std::string::npos);
}

TEST(HtmlReport, SelfContainedWithChartsTablesAndPrintStyles) {
  model::ReportRun run{synthetic_results(),
                       "out/tiny-simulated",
                       {synthetic_strip("rebuild", true), synthetic_strip("cached", false)},
                       {}};
  std::string html = render_html_report({run});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // no scripts needed
  EXPECT_EQ(html.find("http://"), std::string::npos);  // nothing fetched
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"chart speedup-chart\""), 1u);
  EXPECT_EQ(count(html, "class=\"chart syncs-chart\""), 1u);
  EXPECT_EQ(count(html, "class=\"timeline-strip\""), 2u);
  // Two non-baseline variants: one predicted and one measured bar each.
  EXPECT_EQ(count(html, "class=\"bar predicted\""), 2u);
  EXPECT_EQ(count(html, "class=\"bar simulated\""), 2u);  // the run's mode names its bars
  EXPECT_EQ(count(html, "class=\"chart step-chart\""), 1u);
  EXPECT_EQ(count(html, "class=\"variant step-bar\""), 2u);
  EXPECT_EQ(count(html, "<details class=\"parameters\">"), 1u);
  EXPECT_EQ(count(html, "class=\"bar syncs\""), 3u);
  EXPECT_EQ(count(html, "class=\"seg kind-bubble\""), 1u);
  EXPECT_EQ(count(html, "class=\"seg kind-sync\""), 1u);
  for (const char* table : {"provenance", "verdicts", "variants", "parameters"})
    EXPECT_NE(html.find(std::string("<table class=\"") + table + "\""), std::string::npos) << table;
  // Simulated mode is labelled in the banner and per section.
  EXPECT_NE(html.find("class=\"banner mode-simulated\""), std::string::npos);
  EXPECT_NE(html.find("data-mode=\"simulated\""), std::string::npos);
  EXPECT_NE(html.find("abc123"), std::string::npos);  // commit
  // Verdicts: cached (1.12 vs 1.136: -1.4%) passes, device (1.5 vs 1.16: +29%) fails.
  EXPECT_EQ(count(html, "class=\"pass\">PASS"), 2u);  // validation table + variants table
  EXPECT_EQ(count(html, "class=\"fail\">FAIL"), 2u);
  EXPECT_NE(html.find("data-failures=\"1\""), std::string::npos);
  // Ids are unique.
  std::regex id_re("id=\"([^\"]+)\"");
  std::set<std::string> ids;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), id_re); it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(ids.insert((*it)[1]).second) << "duplicate id " << (*it)[1];
}

// The fitted L against the depth run: the fix says why when it knows (packing's registry
// entry: two rebuilds per layer), else only where the count comes from.
TEST(HtmlReport, LayerCountNoteComesFromTheFix) {
  model::RunResults r = synthetic_results();
  for (auto& v : r.variants)
    if (!v.baseline) v.model_parameters["L"] = v.variant == "cached" ? 8 : 6;  // 4 layers run
  const std::string html = render_html_report({model::ReportRun{r, "dir", {}, {}}});
  EXPECT_EQ(count(html,
                  "packing: L = 8 with 4 decoder layers run: 2 per layer (the baseline rebuilds the metadata "
                  "in each layer&#39;s forward and again in its checkpoint recompute; the count comes from the "
                  "baseline's trace)"),
            1u)
      << html;
  EXPECT_EQ(count(html,
                  "packing: L = 6 with 4 decoder layers run: 1.5 per layer (the count comes from the "
                  "baseline's trace)"),
            1u);
}

TEST(HtmlReport, MergesRunsFromSeveralGpus) {
  model::RunResults measured = synthetic_results("GPU-A");
  measured.mode = "measured";
  model::ReportRun a{measured, "a", {}, {}};
  model::ReportRun b{synthetic_results("GPU-B"), "b", {}, {}};
  std::string html = render_html_report({a, b});
  EXPECT_EQ(count(html, "class=\"chart speedup-chart\""), 2u);
  EXPECT_NE(html.find("class=\"cross-gpu\""), std::string::npos);
  EXPECT_NE(html.find("class=\"banner mode-measured\""), std::string::npos);
  EXPECT_NE(html.find("class=\"banner mode-simulated\""), std::string::npos);
  EXPECT_NE(html.find("mixes measured and simulated"), std::string::npos);
}

TEST(HtmlReport, TimelinesRoundTripThroughJson) {
  std::vector<TimelineStrip> strips = {synthetic_strip("rebuild", true), synthetic_strip("cached", false)};
  auto back = model::timelines_from_json(model::timelines_to_json(strips), "t.json");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].segments.size(), strips[0].segments.size());
  for (std::size_t i = 0; i < strips[0].segments.size(); ++i) {
    EXPECT_EQ(back[0].segments[i].lane, strips[0].segments[i].lane);
    EXPECT_EQ(back[0].segments[i].kind, strips[0].segments[i].kind);
    EXPECT_EQ(back[0].segments[i].end, strips[0].segments[i].end);
  }
  EXPECT_EQ(back[0].bubble_ns, 50'000);
  EXPECT_EQ(back[1].variant, "cached");
  // The step breakdown (schema 2) comes back field for field.
  ASSERT_TRUE(back[0].step.has_value());
  const StepBreakdown &a = *strips[0].step, &b = *back[0].step;
  EXPECT_EQ(std::tie(a.step, a.steps, a.device, a.duration_ns, a.compute_ns, a.copy_ns, a.sync_bubble_ns,
                     a.other_idle_ns, a.host_blocked_ns, a.syncs),
            std::tie(b.step, b.steps, b.device, b.duration_ns, b.compute_ns, b.copy_ns, b.sync_bubble_ns,
                     b.other_idle_ns, b.host_blocked_ns, b.syncs));
  // Schema 1 files (before the breakdown) still read, without it.
  auto v1 = model::timelines_from_json(
      R"({"schema_version": 1, "strips": [{"scenario": "s", "fix": "packing", "variant": "cached", "window": "w",
          "duration_ns": 10, "syncs": 0, "bubble_ns": 0, "lanes": ["host"], "segments": [[0, "api", 0, 5, "x"]]}]})",
      "old.json");
  ASSERT_EQ(v1.size(), 1u);
  EXPECT_FALSE(v1[0].step.has_value());
  try {
    model::timelines_from_json(
        R"({"schema_version": 2, "strips": [{"scenario": "s", "fix": "f", "variant": "v", "window":
        "w", "duration_ns": 10, "syncs": 0, "bubble_ns": 0, "lanes": [], "segments": [], "step": {"step": "p",
        "steps": 1, "device": 0, "duration_ns": 10, "compute_ns": -4, "copy_ns": 0, "sync_bubble_ns": 0,
        "other_idle_ns": 0, "host_blocked_ns": 0, "syncs": 0}}]})",
        "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /strips/0/step/compute_ns: expected a non-negative integer"),
              std::string::npos)
        << e.what();
  }
  try {
    model::timelines_from_json(R"({"schema_version": 1, "strips": [{"scenario": 3}]})", "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /strips/0/scenario: expected a string"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(model::timelines_from_json(R"({"schema_version": 99, "strips": []})", "t.json"), InputError);
  EXPECT_THROW(model::timelines_from_json("{", "t.json"), InputError);
  // A number beyond a double is nlohmann's out_of_range 406, not a parse_error: still bad input
  // (CI's fuzz_timelines found it escaping as a plain exception).
  EXPECT_THROW(model::timelines_from_json(R"({"schema_version": 1e400, "strips": []})", "t.json"), InputError);
}

}  // namespace
}  // namespace syncscope
