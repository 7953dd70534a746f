// The analysis printers: JSON carries the contract's field names with the analysis's
// values, CSV parses back, the table names the worst offender on one screen.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sample_traces.hpp"
#include "syncscope/core/csv.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope {
namespace {

AnalysisResult sample_result() {
  AnalysisOptions o;
  o.layer_glob = "layer_*";
  auto r = analyze(test::windows_trace(), o);
  r.source = "windows.json";
  return r;
}

TEST(AnalysisJson, RequiredFieldsCarryTheAnalysisValues) {
  const auto r = sample_result();
  const auto j = nlohmann::json::parse(analysis_to_json(r));
  EXPECT_EQ(j.at("schema_version").get<int>(), kAnalysisSchemaVersion);
  EXPECT_EQ(j.at("source").get<std::string>(), "windows.json");
  for (const char* key : {"meta", "totals", "steps", "layers", "step_summary", "worst", "warnings", "sync_points"})
    EXPECT_TRUE(j.contains(key)) << key;
  // values worked out in sample_traces.hpp
  const auto& t = j.at("totals");
  EXPECT_EQ(t.at("duration_ns").get<Ns>(), 3110);
  EXPECT_EQ(t.at("gpu_busy_ns").get<Ns>(), 600);
  EXPECT_EQ(t.at("syncs").at("total").get<int>(), 4);
  EXPECT_EQ(t.at("syncs").at("by_cause").at("aten::nonzero").get<int>(), 1);
  EXPECT_EQ(t.at("syncs").at("by_cause").at("cudaStreamSynchronize").get<int>(), 3);
  EXPECT_EQ(t.at("sync_blocked_ns").get<Ns>(), 150);
  EXPECT_EQ(t.at("sync_bubble_ns").get<Ns>(), 1400);
  for (const char* dir : {"h2d", "d2h"}) {
    const auto& o = t.at("overlap").at(dir);
    EXPECT_EQ(o.at("copy_ns").get<Ns>(), 0) << dir;
    EXPECT_EQ(o.at("overlapped_ns").get<Ns>(), 0) << dir;
    EXPECT_DOUBLE_EQ(o.at("fraction").get<double>(), 0.0) << dir;
  }
  ASSERT_EQ(j.at("steps").size(), 3u);
  const auto& s1 = j.at("steps")[1];
  EXPECT_EQ(s1.at("name").get<std::string>(), "ProfilerStep#1");
  EXPECT_EQ(s1.at("duration_ns").get<Ns>(), 1500);
  EXPECT_EQ(s1.at("gpu_busy_ns").get<Ns>(), 200);
  EXPECT_EQ(s1.at("syncs").at("total").get<int>(), 2);
  EXPECT_EQ(s1.at("sync_blocked_ns").get<Ns>(), 40);
  EXPECT_EQ(s1.at("sync_bubble_ns").get<Ns>(), 1400);
  EXPECT_TRUE(s1.at("overlap").at("d2h").contains("fraction"));
  EXPECT_EQ(j.at("layers").size(), 2u);
  EXPECT_DOUBLE_EQ(j.at("step_summary").at("duration_ns").at("p10").get<double>(), 600);
  EXPECT_EQ(j.at("worst")[0].at("cause").get<std::string>(), "aten::nonzero");
  EXPECT_EQ(j.at("sync_points").size(), 4u);
  EXPECT_FALSE(j.at("sync_points_truncated").get<bool>());
  EXPECT_EQ(j.at("sync_points")[2].at("bubble_ns").get<Ns>(), 1300);
}

TEST(AnalysisJson, SyncPointsAreCappedAndSaySo) {
  const auto r = sample_result();
  AnalysisJsonOptions o;
  o.max_sync_points = 1;
  const auto j = nlohmann::json::parse(analysis_to_json(r, o));
  EXPECT_EQ(j.at("sync_points").size(), 1u);
  EXPECT_TRUE(j.at("sync_points_truncated").get<bool>());
  EXPECT_EQ(j.at("sync_points_total").get<int>(), 4);
}

TEST(AnalysisCsv, ParsesBackTidyWithSchemaVersion) {
  const auto r = sample_result();
  const auto rows = csv_parse(analysis_to_csv(r), "analysis.csv");
  ASSERT_GT(rows.size(), 10u);
  const std::vector<std::string> header = {"window_kind", "window_name", "window_index",
                                           "metric",      "value",       "schema_version"};
  EXPECT_EQ(rows[0], header);
  auto value = [&](const std::string& kind, const std::string& name, const std::string& metric) -> std::string {
    for (const auto& row : rows)
      if (row.size() == 6 && row[0] == kind && row[1] == name && row[3] == metric) return row[4];
    return "<missing>";
  };
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 6u) << "row " << i;
    EXPECT_EQ(rows[i][5], std::to_string(kAnalysisSchemaVersion)) << "row " << i;
  }
  EXPECT_EQ(value("total", "trace", "syncs.total"), "4");
  EXPECT_EQ(value("total", "trace", "syncs.by_cause.aten::nonzero"), "1");
  EXPECT_EQ(value("total", "trace", "sync_bubble_ns"), "1400");
  EXPECT_EQ(value("step", "ProfilerStep#1", "sync_blocked_ns"), "40");
  EXPECT_EQ(value("step", "ProfilerStep#2", "duration_ns"), "500");
  EXPECT_EQ(value("layer", "layer_b", "syncs.total"), "2");
  EXPECT_EQ(std::stod(value("step_summary", "p90", "duration_ns")), 1400.0);
  EXPECT_EQ(value("total", "trace", "overlap.d2h.fraction"), "0");
}

TEST(AnalysisTable, OneScreenNamingTheWorstOffender) {
  auto r = sample_result();
  r.warnings.push_back("3 records were dropped by the tracer: counts are lower bounds");
  std::ostringstream out;
  print_analysis_table(r, out);
  const std::string s = out.str();
  EXPECT_NE(s.find("windows.json"), std::string::npos);
  EXPECT_NE(s.find("aten::nonzero"), std::string::npos);
  EXPECT_LT(s.find("aten::nonzero"), s.find("cudaStreamSynchronize"));  // ranked first
  EXPECT_NE(s.find("records were dropped"), std::string::npos);
  EXPECT_NE(s.find("ProfilerStep#*"), std::string::npos);
  EXPECT_NE(s.find("1.4 us"), std::string::npos);  // total bubble 1400 ns, in readable units
  EXPECT_LE(std::count(s.begin(), s.end(), '\n'), 40);
}

TEST(FormatDuration, PicksTheUnit) {
  EXPECT_EQ(format_duration(890), "890 ns");
  EXPECT_EQ(format_duration(56'700), "56.7 us");
  EXPECT_EQ(format_duration(1'234'000), "1.234 ms");
  EXPECT_EQ(format_duration(2'500'000'000), "2.500 s");
}

// The idle attribution and the GPU analyses under the names our own checks read:
// in totals and every step, "idle" with the six fields summing exactly to the window, and a
// verdict; per device and stream; the analyses under "gpu"; the same in CSV and the table.
TEST(AnalysisJson, IdleAndGpuAnalysesCarryTheContractNames) {
  const auto r = sample_result();
  const auto j = nlohmann::json::parse(analysis_to_json(r));
  std::vector<const nlohmann::json*> windows = {&j.at("totals")};
  for (const auto& s : j.at("steps")) windows.push_back(&s);
  for (const auto* w : windows) {
    const auto& i = w->at("idle");
    const Ns sum = i.at("busy_ns").get<Ns>() + i.at("sync_bubble_ns").get<Ns>() + i.at("host_wait_ns").get<Ns>() +
                   i.at("dependency_wait_ns").get<Ns>() + i.at("other_ns").get<Ns>();
    EXPECT_EQ(sum, i.at("window_ns").get<Ns>()) << w->at("name");
    EXPECT_EQ(i.at("span_ns").get<Ns>(), w->at("duration_ns").get<Ns>());
    const std::string v = w->at("verdict");
    EXPECT_TRUE(v == "gpu-bound" || v == "host-bound" || v == "sync-bound" || v == "dependency-bound" ||
                v == "other-idle" || v == "no-gpu-activity")
        << v;
  }
  EXPECT_EQ(j.at("totals").at("idle").at("busy_ns").get<Ns>(), 600);  // GPU busy, as above
  EXPECT_EQ(j.at("idle_by_device").size(), r.idle_by_device.size());
  EXPECT_EQ(j.at("idle_by_stream").size(), r.idle_by_stream.size());
  for (const char* key : {"kernels_by_class", "kernels_by_name", "kernel_names", "launch_delay", "queue_length",
                          "annotations", "copy_bandwidth", "findings"})
    EXPECT_TRUE(j.at("gpu").contains(key)) << key;

  const auto rows = csv_parse(analysis_to_csv(r));
  std::size_t windows_with_idle = 0, verdicts = 0;
  for (const auto& row : rows) {
    windows_with_idle += row.at(3) == "idle.window_ns" && (row.at(0) == "total" || row.at(0) == "step");
    verdicts += row.at(3) == "verdict" && (row.at(0) == "total" || row.at(0) == "step");
  }
  EXPECT_EQ(windows_with_idle, 1 + r.steps.size());
  EXPECT_EQ(verdicts, 1 + r.steps.size());

  std::ostringstream table;
  print_analysis_table(r, table);
  EXPECT_NE(table.str().find("GPU window"), std::string::npos);
  EXPECT_NE(table.str().find("of GPU window"), std::string::npos);
}

}  // namespace
}  // namespace syncscope
