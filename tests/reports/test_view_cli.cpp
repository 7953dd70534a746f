// `syncscope view` through the built CLI: a page for the H200 fixture and for a rank
// directory, and bad input said with exit 2 naming the file (a missing trace, a broken one,
// a step past the last, an output that exists without --force), nothing written then.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "../nsys/nsys_fixture.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

Result run(const test::TempDir& dir, const std::string& args) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd =
      "'" SYNCSCOPE_CLI "' view " + args + " > '" + out.string() + "' 2> '" + err.string() + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

const std::string kH200 = test::fixture("torch/item_loop_l8_h200.json.gz").string();

TEST(ViewCli, PageOfTheH200Fixture) {
  test::TempDir dir;
  const auto page = dir / "page.html";
  const Result r = run(dir, "'" + kH200 + "' --step-range 'train_step#*' -o '" + page.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + page.string() + " (1 trace(s), 8 sync point(s) marked"), std::string::npos) << r.out;
  const std::string html = read_file(page);
  EXPECT_EQ(count(html, "<g class=\"sync-marker\""), 8u);
  EXPECT_NE(html.find("Step <b>train_step#1</b>"), std::string::npos);  // the median of 3
  // --step picks another; the page says so.
  const Result s = run(dir, "'" + kH200 + "' --step-range 'train_step#*' --step 0 --force -o '" + page.string() + "'");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(read_file(page).find("Step <b>train_step#0</b> (index 0, --step 0)"), std::string::npos);
}

// An Nsight Systems export, as analyze reads it: the same sync points marked.
TEST(ViewCli, PageOfAnNsysExport) {
  test::TempDir dir;
  const auto db = test::build_export(dir, "nsys_2026_4");
  const auto page = dir / "nsys.html";
  const Result r = run(dir, "'" + db.string() + "' -o '" + page.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read_file(page);
  EXPECT_EQ(count(html, "<g class=\"sync-marker\""), 3u);  // the export's 3 sync points (analyze counts 3)
  EXPECT_NE(html.find("recorded by nsys"), std::string::npos);
}

TEST(ViewCli, RankDirectorySideBySide) {
  test::TempDir dir;
  const auto page = dir / "ranks.html";
  const Result r = run(dir, "'" + test::fixture("ranks/nccl4").string() + "' -o '" + page.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = read_file(page);
  const std::size_t files = static_cast<std::size_t>(
      std::distance(fs::directory_iterator(test::fixture("ranks/nccl4")), fs::directory_iterator{}));
  EXPECT_EQ(count(html, "<section class=\"trace\""), files);
  EXPECT_NE(html.find("<h2>Ranks side by side</h2>"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"ranks\">"), std::string::npos);
}

TEST(ViewCli, BadInputExitsTwoNamingTheFile) {
  test::TempDir dir;
  const auto page = dir / "page.html";
  const std::string missing = (dir / "no_such_trace.json").string();
  Result r = run(dir, "'" + missing + "' -o '" + page.string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no_such_trace.json"), std::string::npos) << r.err;

  const auto broken = dir / "broken.json";
  write_file_atomic(broken, "{\"traceEvents\": [ {\"ph\": \"X\", \"ts\": ");
  r = run(dir, "'" + broken.string() + "' -o '" + page.string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("broken.json"), std::string::npos) << r.err;

  r = run(dir, "'" + kH200 + "' --step-range 'train_step#*' --step 7 -o '" + page.string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("item_loop_l8_h200.json.gz: --step 7: the trace has 3 step(s)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(page)) << "a page written after an error";

  write_file_atomic(page, "mine");
  r = run(dir, "'" + kH200 + "' -o '" + page.string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("page.html"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(page), "mine");  // not replaced without --force
}

}  // namespace
}  // namespace syncscope
