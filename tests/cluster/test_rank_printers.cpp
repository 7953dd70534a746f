// reports/rank_printers: golden outputs (table, JSON, CSV) of a hand-made three-rank
// summary, and rank rows that survive JSON (what the job array's merge relies on).
// SYNCSCOPE_UPDATE_GOLDEN=1 rewrites the golden files; review the diff before committing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/reports/rank_printers.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

RankAnalysis sample() {
  std::vector<RankRow> rows(3);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& r = rows[i];
    r.rank = static_cast<std::int64_t>(i);
    r.rank_from = i == 2 ? "file name" : "distributedInfo";
    r.source = "traces/rank" + std::to_string(i) + ".json";
    r.steps = 3;
    r.step_ns = 1e6;
    r.busy_ns = 850000;
    r.compute_ns = 500000;
    r.comm_ns = 550000;
    r.span_ns = 3000000;
    r.gpu_busy_ns = 2550000;
    r.compute_kernel_ns = 1500000;
    r.comm_kernel_ns = 1650000;
    r.comm_kernels = 3;
    r.comm_overlapped_ns = 600000;
    r.comm_overlap_fraction = 600000.0 / 1650000.0;
    r.devices = 1;
    r.world_size = 4;
  }
  rows[0].syncs = 1;
  rows[0].blocked_ns = 26000;
  rows[0].bubble_ns = 128000;
  rows[0].sync_points = 3;
  rows[0].top_cause = "aten::item";
  rows[1].compute_ns = 800000;
  rows[1].comm_ns = 300000;
  rows[2].steps = 0;
  rows[2].warnings = {"no step ranges: this rank's per-step figures are over the whole trace"};
  return summarize_ranks(rows, "traces", "ProfilerStep#*", "");
}

void check_golden(const std::string& name, const std::string& actual) {
  const auto path = test::source_dir() / "tests" / "cluster" / "golden" / name;
  if (const char* u = std::getenv("SYNCSCOPE_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    write_file_atomic(path, actual, true);
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(actual, read_file(path)) << "golden " << path << " (SYNCSCOPE_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(RankPrinters, TableGolden) {
  std::ostringstream out;
  print_rank_table(sample(), out);
  check_golden("rank_table.txt", out.str());
}

TEST(RankPrinters, JsonGolden) { check_golden("rank_analysis.json", rank_analysis_to_json(sample())); }

TEST(RankPrinters, CsvGolden) { check_golden("rank_analysis.csv", rank_analysis_to_csv(sample())); }

TEST(RankPrinters, JsonCarriesTheSummaryValues) {
  const auto j = nlohmann::json::parse(rank_analysis_to_json(sample()));
  EXPECT_EQ(j.at("schema_version").get<int>(), kRankAnalysisSchemaVersion);
  EXPECT_EQ(j.at("kind").get<std::string>(), "syncscope.rank_analysis");
  EXPECT_EQ(j.at("ranks").size(), 3u);
  EXPECT_EQ(j.at("across_ranks").at("compute_ns").at("max_rank").get<int>(), 1);
  EXPECT_DOUBLE_EQ(j.at("across_ranks").at("compute_ns").at("median").get<double>(), 500000);
  EXPECT_EQ(j.at("standout").at("rank").get<int>(), 1);
  EXPECT_EQ(j.at("standout").at("metric").get<std::string>(), "compute_ns");
  EXPECT_DOUBLE_EQ(j.at("standout").at("deviation").get<double>(), 0.3);
}

TEST(RankPrinters, CsvParsesBackTidy) {
  const auto rows = csv_parse(rank_analysis_to_csv(sample()), "ranks.csv");
  const std::vector<std::string> header = {"kind", "rank", "metric", "value", "schema_version", "world_size"};
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], header);
  for (const auto& r : rows) EXPECT_EQ(r.size(), 6u);
  bool standout = false;
  for (const auto& r : rows)
    if (r[0] == "standout") {
      standout = true;
      EXPECT_EQ(r[1], "1");
      EXPECT_EQ(r[2], "compute_ns.deviation");
    }
  EXPECT_TRUE(standout);
}

TEST(RankRowJson, RoundTripsEveryField) {
  const auto a = sample();
  for (const auto& r : a.ranks) {
    const auto j = nlohmann::json::parse(rank_row_json(r).dump());
    const RankRow back = rank_row_from_json(j, "part.json");
    EXPECT_EQ(rank_row_json(back).dump(), rank_row_json(r).dump());
    EXPECT_EQ(back.comm_overlap_fraction, r.comm_overlap_fraction);  // exact, not near
  }
}

TEST(RankRowJson, MissingOrMistypedFieldsNameTheFileAndField) {
  auto j = nlohmann::json::parse(rank_row_json(sample().ranks[0]).dump());
  j["per_step"].erase("bubble_ns");
  try {
    rank_row_from_json(j, "parts/part-00001.json");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("parts/part-00001.json"), std::string::npos) << m;
    EXPECT_NE(m.find("bubble_ns"), std::string::npos) << m;
  }
  j = nlohmann::json::parse(rank_row_json(sample().ranks[0]).dump());
  j["steps"] = "three";
  EXPECT_THROW(rank_row_from_json(j, "p"), InputError);
}

}  // namespace
}  // namespace syncscope
