// Opens a rendered report in headless Chromium (Debian's `chromium`): the DOM must hold the
// charts and tables, and a screenshot must come out as a non-empty PNG. Skips with a clear
// message when chromium is not installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "report_fixture.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

using namespace reporttest;

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const char* path = std::getenv("PATH");
    std::stringstream ss(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      auto p = std::filesystem::path(dir) / name;
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  return "";
}

std::string chromium_command(const std::string& chromium, const test::TempDir& profile_dir) {
  return chromium +
         " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
         "--disable-sync --no-first-run --user-data-dir=" +
         (profile_dir / "profile").string();
}

class ReportInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty()) GTEST_SKIP() << "skipped: chromium not installed (apt-get install chromium)";
    model::ReportRun run{synthetic_results(),
                         "out/tiny-simulated",
                         {synthetic_strip("rebuild", true), synthetic_strip("cached", false)},
                         {}};
    html_ = dir_ / "report.html";
    write_file_atomic(html_, render_html_report({run}));
  }
  std::string chromium_;
  test::TempDir dir_;
  std::filesystem::path html_;
};

TEST_F(ReportInChromium, DomHoldsChartsAndTables) {
  const auto dom = dir_ / "dom.html";
  const std::string cmd = chromium_command(chromium_, dir_) + " --dump-dom file://" + html_.string() + " > " +
                          dom.string() + " 2> " + (dir_ / "err.txt").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string text = read_file(dom);
  ASSERT_FALSE(text.empty());
  // The browser parsed our SVG and tables into the DOM (ids and classes we define).
  for (const char* needle :
       {"<svg class=\"chart speedup-chart\" id=\"speedup-", "<svg class=\"chart syncs-chart\" id=\"syncs-",
        "<svg class=\"timeline-strip\" id=\"timeline-", "<table class=\"verdicts\"", "<table class=\"provenance\"",
        "<table class=\"variants\"", "<table class=\"parameters\"", "class=\"banner mode-simulated\"",
        "class=\"bar predicted\"", "class=\"bar simulated\"", "class=\"seg kind-bubble\"",
        // The step bars with the predicted saving on them, the strips on one axis,
        // the parameters folded, labels naming the run's mode.
        "<svg class=\"chart step-chart\" id=\"steps-", "class=\"part compute\"", "class=\"part sync-bubble\"",
        "class=\"host-blocked\"", "class=\"predicted-saving\"", "class=\"baseline-ghost\"", "data-ns-per-px=\"",
        "<details class=\"parameters\"><summary>", "<th>simulated speedup</th>",
        "<i class=\"k-simulated\"></i>simulated</span>"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
  EXPECT_EQ(text.find("<details class=\"parameters\" open"), std::string::npos);  // folded by default
  EXPECT_NE(text.find("tiny&lt;&amp;&gt;"), std::string::npos);                   // still escaped after parsing
}

TEST_F(ReportInChromium, ScreenshotIsANonEmptyPng) {
  const auto png = dir_ / "shot.png";
  const std::string cmd = chromium_command(chromium_, dir_) + " --window-size=1280,2000 --screenshot=" + png.string() +
                          " file://" + html_.string() + " > " + (dir_ / "out.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_GT(std::filesystem::file_size(png), 10'000u);  // a 1280x2000 page with charts
  std::ifstream in(png, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  EXPECT_EQ(std::string(sig, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

// Printing (what a reader does to share it): Chromium lays the report out for paper and
// writes a PDF of several pages.
TEST_F(ReportInChromium, PrintsToPdf) {
  const auto pdf = dir_ / "report.pdf";
  const std::string cmd = chromium_command(chromium_, dir_) + " --no-pdf-header-footer --print-to-pdf=" + pdf.string() +
                          " file://" + html_.string() + " > " + (dir_ / "pdf.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_TRUE(std::filesystem::exists(pdf));
  const std::string text = read_file(pdf);
  EXPECT_EQ(text.rfind("%PDF-", 0), 0u);
  std::size_t pages = 0;
  for (auto p = text.find("/Type /Page"); p != std::string::npos; p = text.find("/Type /Page", p + 1))
    pages += text.compare(p, 12, "/Type /Pages") != 0;
  EXPECT_GE(pages, 2u) << "the report fits on one page?";
}

}  // namespace
}  // namespace syncscope
