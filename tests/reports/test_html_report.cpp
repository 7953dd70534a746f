#include <gtest/gtest.h>

#include <regex>

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
  ReportRun run{synthetic_results(), "dir<1>", {}, {}};
  std::string html = render_html_report({run});
  EXPECT_EQ(html.find("<script>"), std::string::npos);  // the host name above
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("tiny<&>"), std::string::npos);
  EXPECT_NE(html.find("tiny&lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(html.find("dir&lt;1&gt;"), std::string::npos);
}

TEST(HtmlReport, SelfContainedWithChartsTablesAndPrintStyles) {
  ReportRun run{synthetic_results(), "out/tiny-simulated",
                {synthetic_strip("rebuild", true), synthetic_strip("cached", false)}, {}};
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
  EXPECT_EQ(count(html, "class=\"bar measured\""), 2u);
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

TEST(HtmlReport, MergesRunsFromSeveralGpus) {
  RunResults measured = synthetic_results("GPU-A");
  measured.mode = "measured";
  ReportRun a{measured, "a", {}, {}};
  ReportRun b{synthetic_results("GPU-B"), "b", {}, {}};
  std::string html = render_html_report({a, b});
  EXPECT_EQ(count(html, "class=\"chart speedup-chart\""), 2u);
  EXPECT_NE(html.find("class=\"cross-gpu\""), std::string::npos);
  EXPECT_NE(html.find("class=\"banner mode-measured\""), std::string::npos);
  EXPECT_NE(html.find("class=\"banner mode-simulated\""), std::string::npos);
  EXPECT_NE(html.find("mixes measured and simulated"), std::string::npos);
}

TEST(HtmlReport, TimelinesRoundTripThroughJson) {
  std::vector<TimelineStrip> strips = {synthetic_strip("rebuild", true), synthetic_strip("cached", false)};
  auto back = timelines_from_json(timelines_to_json(strips), "t.json");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].segments.size(), strips[0].segments.size());
  for (std::size_t i = 0; i < strips[0].segments.size(); ++i) {
    EXPECT_EQ(back[0].segments[i].lane, strips[0].segments[i].lane);
    EXPECT_EQ(back[0].segments[i].kind, strips[0].segments[i].kind);
    EXPECT_EQ(back[0].segments[i].end, strips[0].segments[i].end);
  }
  EXPECT_EQ(back[0].bubble_ns, 50'000);
  EXPECT_EQ(back[1].variant, "cached");
  try {
    timelines_from_json(R"({"schema_version": 1, "strips": [{"scenario": 3}]})", "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /strips/0/scenario: expected a string"), std::string::npos) << e.what();
  }
  EXPECT_THROW(timelines_from_json(R"({"schema_version": 99, "strips": []})", "t.json"), InputError);
  EXPECT_THROW(timelines_from_json("{", "t.json"), InputError);
}

}  // namespace
}  // namespace syncscope
