// The report's labels, axes and step bars: every label naming a number's origin
// follows the run's mode, the strips of a scenario share one time axis, ticks are round,
// the step bars add up, and the model parameters are folded per fix with units.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "html_format.hpp"
#include "report_fixture.hpp"

namespace syncscope {
namespace {

using namespace reporttest;

// The texts a reader takes for labels: table headers, captions, headings, chart texts and
// tooltips, legend entries and the folded table's summary.
std::vector<std::string> labels(const std::string& html) {
  std::vector<std::string> out;
  static const std::regex tag(R"re(<(th|text|h2|h3|caption|summary|title)\b[^>]*>([\s\S]*?)</\1>)re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[2]);
  static const std::regex legend(R"re(</i>([^<]*)</span>)re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), legend); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

std::size_t labels_with(const std::string& html, const std::string& word) {
  std::size_t n = 0;
  for (const auto& l : labels(html)) n += l.find(word) != std::string::npos;
  return n;
}

// Sections of the page per run and scenario.
std::vector<std::string> sections(const std::string& html) {
  std::vector<std::string> out;
  for (auto p = html.find("<section"); p != std::string::npos;) {
    const auto e = html.find("</section>", p);
    out.push_back(html.substr(p, e - p));
    p = html.find("<section", e);
  }
  return out;
}

model::ReportRun run_of(const std::string& mode, const std::string& gpu) {
  model::RunResults r = synthetic_results(gpu);
  r.mode = mode;
  return model::ReportRun{r, "out/" + mode, {synthetic_strip("rebuild", true), synthetic_strip("cached", false)}, {}};
}

TEST(ReportLabels, SimulatedRunSaysSimulatedEverywhere) {
  const std::string html = render_html_report({run_of("simulated", "H200")});
  EXPECT_EQ(labels_with(html, "measured"), 0u);
  EXPECT_EQ(labels_with(html, "Measured"), 0u);
  EXPECT_GE(labels_with(html, "simulated speedup"), 2u);  // validation and per-variant headers
  EXPECT_NE(html.find("<span><i class=\"k-simulated\"></i>simulated</span>"), std::string::npos);  // legend
  EXPECT_NE(html.find("class=\"bar simulated\""), std::string::npos);
  EXPECT_EQ(html.find("class=\"bar measured\""), std::string::npos);
  for (const char* chart : {"speedup-chart", "syncs-chart", "step-chart"}) {
    const auto p = html.find(std::string("class=\"chart ") + chart + "\" id=\"");
    ASSERT_NE(p, std::string::npos) << chart;
    const std::string tag = html.substr(p, html.find('>', p) - p);
    EXPECT_NE(tag.find("data-outcome=\"simulated\""), std::string::npos) << tag;
  }
}

// The forward pass's speedup beside the step's, under the run's mode; a dash where
// a variant has none.
TEST(ReportLabels, ForwardSpeedupColumn) {
  model::ReportRun run = run_of("simulated", "H200");
  ASSERT_GE(run.results.variants.size(), 2u);
  for (auto& v : run.results.variants) v.forward_speedup = model::Estimate{};
  run.results.variants[1].forward_speedup = model::Estimate{1.433, 1.40, 1.45, 3};
  const std::string html = render_html_report({run});
  EXPECT_EQ(labels_with(html, "simulated forward speedup"), 1u);
  EXPECT_NE(html.find("<td>1.433 <span class=\"ci\">[1.400, 1.450]</span></td>"), std::string::npos);
  EXPECT_NE(html.find("<td>&ndash;</td>"), std::string::npos);
}

// A run with a profile fitted from traces shows where the profile came from.
TEST(ReportLabels, FittedProfileProvenanceIsShown) {
  model::ReportRun run = run_of("simulated", "H200");
  run.results.env.gpu_profile = "fitted.yaml";
  run.results.env.extra["gpu_profile_traces"] = "item_loop_l8_h200.json.gz";
  run.results.env.extra["gpu_profile_trace_sha256"] = "ab12";
  run.results.env.extra["gpu_profile_calibrated"] = "false";
  const std::string html = render_html_report({run});
  EXPECT_NE(html.find("GPU profile fitted.yaml fitted from traces (trace_sha256: ab12; traces: "
                      "item_loop_l8_h200.json.gz)"),
            std::string::npos);
  EXPECT_EQ(html.find("calibrated: false"), std::string::npos);
  // Without a fitted profile there is no such line.
  EXPECT_EQ(render_html_report({run_of("simulated", "H200")}).find("fitted from traces"), std::string::npos);
}

TEST(ReportLabels, MeasuredRunSaysMeasuredEverywhere) {
  const std::string html = render_html_report({run_of("measured", "H200")});
  EXPECT_EQ(labels_with(html, "simulated"), 0u);
  EXPECT_EQ(labels_with(html, "Simulated"), 0u);
  EXPECT_GE(labels_with(html, "measured speedup"), 2u);
  EXPECT_NE(html.find("class=\"bar measured\""), std::string::npos);
}

TEST(ReportLabels, MergedReportLabelsEachRowAndSection) {
  const std::string html = render_html_report({run_of("measured", "GPU-A"), run_of("simulated", "GPU-B")});
  // Validation: the header says it varies, each row says which it is.
  EXPECT_EQ(labels_with(html, "measured or simulated speedup (per row)"), 1u);
  std::size_t measured_rows = 0, simulated_rows = 0;
  static const std::regex row(R"re(<tr data-outcome="(\w+)">[\s\S]*?</tr>)re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator(); ++it) {
    const std::string r = (*it)[0], mode = (*it)[1];
    EXPECT_NE(r.find("<span class=\"mode-tag\">" + mode + "</span>"), std::string::npos) << r;
    (mode == "measured" ? measured_rows : simulated_rows)++;
  }
  EXPECT_EQ(measured_rows, 2u);
  EXPECT_EQ(simulated_rows, 2u);
  // The cross-run table names the mode per column.
  EXPECT_NE(html.find("<th>GPU-A (measured speedup)</th>"), std::string::npos);
  EXPECT_NE(html.find("<th>GPU-B (simulated speedup)</th>"), std::string::npos);
  // Each run's section speaks of its own mode only.
  const auto secs = sections(html);
  ASSERT_EQ(secs.size(), 2u);
  EXPECT_EQ(labels_with(secs[0], "simulated"), 0u);
  EXPECT_GE(labels_with(secs[0], "measured"), 4u);
  EXPECT_EQ(labels_with(secs[1], "measured"), 0u);
  EXPECT_GE(labels_with(secs[1], "simulated"), 4u);
}

// Attribute `name` of every tag of class `cls`.
std::vector<std::string> attrs(const std::string& html, const std::string& cls, const std::string& name) {
  std::vector<std::string> out;
  const std::regex re("<[a-z]+ class=\"" + cls + "\"[^>]*? " + name + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// Ticks are whole multiples of 1, 2 or 5 times a power of ten, evenly spaced.
void expect_round_ticks(const std::vector<double>& ticks, const std::string& what) {
  ASSERT_GE(ticks.size(), 3u) << what;
  const double step = ticks[1] - ticks[0];
  ASSERT_GT(step, 0) << what;
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 || std::fabs(mantissa - 5) < 1e-6)
      << what << ": step " << step;
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_NEAR(ticks[i] - ticks[i - 1], step, step * 1e-6) << what;
    EXPECT_NEAR(std::round(ticks[i] / step), ticks[i] / step, 1e-6) << what;
  }
}

// The tick labels of the first element of class `cls` (an svg), as numbers and units.
std::vector<std::pair<double, std::string>> tick_labels(const std::string& html, const std::string& cls,
                                                        std::size_t nth = 0) {
  std::size_t p = 0;
  for (std::size_t i = 0; i <= nth; ++i) {
    p = html.find("class=\"" + cls + "\"", i ? p + 1 : 0);
    if (p == std::string::npos) return {};
  }
  const auto e = html.find("</svg>", p);
  const std::string svg = html.substr(p, e - p);
  std::vector<std::pair<double, std::string>> out;
  static const std::regex tick(R"re(<text class="tick"[^>]*>([-0-9.]+) ?([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
    out.emplace_back(std::stod((*it)[1]), (*it)[2]);
  return out;
}

TEST(ReportAxes, TimelinesShareOneTimeAxisWithRoundTicks) {
  model::RunResults r = synthetic_results();
  TimelineStrip longer = synthetic_strip("cached", false);
  longer.duration_ns = 4'000'000;  // four times the baseline's window
  longer.segments.back().end = 4'000'000;
  const std::string html =
      render_html_report({model::ReportRun{r, "out", {synthetic_strip("rebuild", true), longer}, {}}});
  const auto per_px = attrs(html, "timeline-strip", "data-ns-per-px");
  ASSERT_EQ(per_px.size(), 2u);
  EXPECT_EQ(per_px[0], per_px[1]);  // the same ms per pixel
  // Each window ends where its duration falls on that axis: 1 ms and 4 ms from the left.
  const auto ends = attrs(html, "window-end", "x1");
  ASSERT_EQ(ends.size(), 2u);
  const double left = 170, scale = std::stod(per_px[0]);
  EXPECT_NEAR((std::stod(ends[0]) - left) * scale, 1e6, scale);
  EXPECT_NEAR((std::stod(ends[1]) - left) * scale, 4e6, scale);
  // The same round ticks under both strips, in ms.
  const auto a = tick_labels(html, "timeline-strip", 0), b = tick_labels(html, "timeline-strip", 1);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  std::vector<double> values;
  for (const auto& [v, unit] : a) {
    EXPECT_EQ(unit, "ms");
    values.push_back(v);
  }
  expect_round_ticks(values, "timeline");
  EXPECT_GE(values.back(), 4.0);
}

TEST(ReportAxes, SpeedupAxisHasRoundTicks) {
  const std::string html = render_html_report({run_of("simulated", "H200")});
  std::vector<double> values;
  for (const auto& [v, unit] : tick_labels(html, "chart speedup-chart")) values.push_back(v);
  expect_round_ticks(values, "speedup");
  EXPECT_LT(values.front(), 1.0);        // the baseline line is inside the axis
  EXPECT_GE(values.back(), 1.5 * 1.05);  // device's prediction and its interval
}

TEST(ReportAxes, NiceAxisAndTimeUnits) {
  const html::Axis a = html::nice_axis(0.9, 1.4, 6);
  EXPECT_DOUBLE_EQ(a.step, 0.1);
  EXPECT_EQ(a.ticks.size(), 6u);
  EXPECT_EQ(a.decimals, 1);
  const html::TimeAxis us = html::time_axis(630'000, 6);  // 0.63 ms: in µs
  EXPECT_EQ(us.unit, "µs");
  EXPECT_DOUBLE_EQ(us.axis.step, 200);
  EXPECT_EQ(us.label(400), "400 µs");
  const html::TimeAxis ms = html::time_axis(40.46e6, 8);
  EXPECT_EQ(ms.unit, "ms");
  EXPECT_DOUBLE_EQ(ms.axis.step, 10);
  EXPECT_GE(ms.max_ns(), 40.46e6);
  EXPECT_EQ(html::duration_text(40.46e6), "40.46 ms");
  EXPECT_EQ(html::duration_text(511'842), "511.8 µs");
  EXPECT_EQ(html::duration_text(85), "85 ns");
}

TEST(ReportStepBars, PartsAddUpAndTheSavingIsOnTheBar) {
  model::RunResults r = synthetic_results();
  std::vector<TimelineStrip> strips = {synthetic_strip("rebuild", true), synthetic_strip("cached", false),
                                       synthetic_strip("device", false)};
  strips[2].step.reset();  // as from an older timelines.json: no bar
  const std::string html = render_html_report({model::ReportRun{r, "out", strips, {}}});
  const auto p = html.find("class=\"chart step-chart\"");
  ASSERT_NE(p, std::string::npos);
  const std::string svg = html.substr(p, html.find("</svg>", p) - p);
  // One bar per variant with a breakdown (device has none: not drawn).
  static const std::regex bar(
      R"re(<g class="variant step-bar" data-variant="([^"]+)" data-step-ns="(\d+)">([\s\S]*?)</g>)re");
  static const std::regex part(R"re(<rect class="part [a-z-]+" x="([0-9.]+)" y="\d+" width="([0-9.]+)")re");
  const double left = 190, scale = std::stod(attrs(html, "chart step-chart", "data-ns-per-px").at(0));
  int bars = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator(); ++it, ++bars) {
    const std::string body = (*it)[3];
    double x = left, total = 0;
    for (auto pt = std::sregex_iterator(body.begin(), body.end(), part); pt != std::sregex_iterator(); ++pt) {
      EXPECT_NEAR(std::stod((*pt)[1]), x, 0.02);  // stacked end to end
      x += std::stod((*pt)[2]);
      total += std::stod((*pt)[2]);
    }
    EXPECT_NEAR(total * scale, std::stod((*it)[2]), 2 * scale) << (*it)[1];
    const bool baseline = (*it)[1] == "packing=rebuild";
    EXPECT_EQ(body.find("class=\"host-blocked\"") != std::string::npos, true);
    EXPECT_EQ(body.find("class=\"predicted-saving\"") != std::string::npos, !baseline) << (*it)[1];
    EXPECT_EQ(body.find("class=\"baseline-ghost\"") != std::string::npos, !baseline) << (*it)[1];
    if (!baseline) {
      // cached: predicted 1.12 over a 100 ms baseline: the saving runs from 89.29 ms to 100 ms.
      static const std::regex saving(R"re(<rect class="predicted-saving" x="([0-9.]+)" y="\d+" width="([0-9.]+)")re");
      std::smatch m;
      ASSERT_TRUE(std::regex_search(body, m, saving));
      EXPECT_NEAR((std::stod(m[1]) - left) * scale, 100e6 / 1.12, 2 * scale);
      EXPECT_NEAR((std::stod(m[1]) + std::stod(m[2]) - left) * scale, 100e6, 2 * scale);
      EXPECT_NE(body.find("predicted saving 10.71 ms"), std::string::npos);
    }
  }
  EXPECT_EQ(bars, 2);
  std::vector<double> values;
  for (const auto& [v, unit] : tick_labels(html, "chart step-chart")) {
    EXPECT_EQ(unit, "ms");
    values.push_back(v);
  }
  expect_round_ticks(values, "step bars");
}

// The idle attribution of each variant's step (analysis/idle.hpp) as a stacked bar over the
// step's GPU window: the parts are stacked end to end, fill the plot width exactly (busy +
// classes == window), and the verdict is named; a step without the attribution (an older
// timelines.json) draws no bar.
TEST(ReportIdleBars, OneStackedBarPerStepOverItsGpuWindow) {
  model::RunResults r = synthetic_results();
  std::vector<TimelineStrip> strips = {synthetic_strip("rebuild", true), synthetic_strip("cached", false)};
  // rebuild: window 80 ms = busy 50 + sync bubble 20 + host wait 6 + dependency 3 + other 1.
  IdleBreakdown& i = strips[0].step->idle;
  i = {80'000'000, 50'000'000, 20'000'000, 6'000'000, 3'000'000, 1'000'000, {}};
  strips[0].step->verdict = verdict_of(i);
  const std::string html = render_html_report({model::ReportRun{r, "out", strips, {}}});
  const auto p = html.find("class=\"chart idle-chart\"");
  ASSERT_NE(p, std::string::npos);
  const std::string svg = html.substr(p, html.find("</svg>", p) - p);
  static const std::regex bar(
      R"re(<g class="variant idle-bar" data-variant="([^"]+)" data-window-ns="(\d+)" data-verdict="([a-z-]+)">([\s\S]*?)</g>)re");
  static const std::regex part(
      R"re(<rect class="part [a-z-]+"(?: style="[^"]*")? x="([0-9.]+)" y="\d+" width="([0-9.]+)")re");
  int bars = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator(); ++it, ++bars) {
    EXPECT_EQ((*it)[1], "packing=rebuild");
    EXPECT_EQ((*it)[2], "80000000");
    EXPECT_EQ((*it)[3], "sync-bound");  // busy 62.5% < 90%; the sync bubble is the largest idle class
    const std::string body = (*it)[4];
    double x = 190, total = 0;
    int parts = 0;
    for (auto pt = std::sregex_iterator(body.begin(), body.end(), part); pt != std::sregex_iterator(); ++pt, ++parts) {
      EXPECT_NEAR(std::stod((*pt)[1]), x, 0.02);
      x += std::stod((*pt)[2]);
      total += std::stod((*pt)[2]);
    }
    EXPECT_EQ(parts, 5);
    EXPECT_NEAR(total, 1100 - 190 - 260, 0.05);  // the whole plot: the window
    EXPECT_NE(body.find("idle, host wait: 6"), std::string::npos);
  }
  EXPECT_EQ(bars, 1);
}

TEST(ReportParameters, FoldedPerFixWithUnitsAndIntervals) {
  model::RunResults r = synthetic_results();
  r.variants[1].model_parameters = {{"gpu_ns_per_layer", 511'842},
                                    {"gpu_ns_per_layer_lo", 500'000},
                                    {"gpu_ns_per_layer_hi", 520'000},
                                    {"L", 28},
                                    {"s_ns", 13.7e6}};
  const std::string html = render_html_report({model::ReportRun{r, "out", {}, {}}});
  const auto p = html.find("<details class=\"parameters\">");
  ASSERT_NE(p, std::string::npos);  // folded: no "open" attribute
  const std::string details = html.substr(p, html.find("</details>", p) - p);
  EXPECT_NE(details.find("<table class=\"parameters\" data-fix=\"packing\">"), std::string::npos);
  // One row per parameter, one column per variant; times in a unit that suits them.
  EXPECT_NE(details.find("<code>gpu_per_layer</code></td><td class=\"l\">GPU time per layer</td><td class=\"l\">µs</td>"
                         "<td>511.8 <span class=\"ci\">[500.0, 520.0]</span></td><td>&ndash;</td>"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("<code>s</code></td><td class=\"l\">per-layer cost of the metadata rebuild (published form)"
                         "</td><td class=\"l\">ms</td><td>13.70</td><td>1.500</td>"),
            std::string::npos)
      << details;
  EXPECT_NE(
      details.find(
          "<code>L</code></td><td class=\"l\">the count the formula multiplies (see the note below), not always the "
          "depth</td><td class=\"l\">&ndash;</td><td>28</td>"),
      std::string::npos)
      << details;
  EXPECT_EQ(details.find("_lo"), std::string::npos);
  EXPECT_EQ(details.find("_ns"), std::string::npos);
}

}  // namespace
}  // namespace syncscope
