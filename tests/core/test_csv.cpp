#include <gtest/gtest.h>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"

using namespace syncscope;

TEST(Csv, EscapesPerRfc4180) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("two\nlines"), "\"two\nlines\"");
}

TEST(Csv, RoundTrip) {
  CsvWriter w;
  w.row({"scenario", "metric", "value"});
  w.row({"qwen3, 0.6b", "name with \"quotes\"", "1.5"});
  w.row({"multi\r\nline", "", "x"});
  auto rows = csv_parse(w.str());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], "qwen3, 0.6b");
  EXPECT_EQ(rows[1][1], "name with \"quotes\"");
  EXPECT_EQ(rows[2][0], "multi\r\nline");
  EXPECT_EQ(rows[2][1], "");
  EXPECT_EQ(w.str().substr(0, 23), "scenario,metric,value\r\n");
}

TEST(Csv, UnterminatedQuoteNamesTheLine) {
  try {
    csv_parse("a,b\n\"c,d\n", "results.csv");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("results.csv:2"), std::string::npos) << e.what();
  }
}
