// `syncscope view`'s page of the H200 fixture (tests/fixtures/torch/item_loop_l8_h200.json.gz)
// opened in headless Chromium (Debian's `chromium`), as report.html's test does: the DOM holds
// the sync markers, lanes and critical path after parsing, the page's script logs nothing to
// the console (a control page with a script error shows the check can fail), and the
// screenshot is a PNG far larger than a blank page's. The same for a rank directory
// (tests/fixtures/ranks/nccl4, built as `syncscope view DIR` builds it): a section and lanes
// per rank, the ranks table, rank 0's sync marker, the standout and straggler notes. Skips, said as
// skipped, without chromium. SYNCSCOPE_VIEW_SCREENSHOT_DIR=DIR keeps the screenshots there
// (docs/view-ranks.png was made so).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "syncscope/core/file_io.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/reports/view.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

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

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

// Chromium on a page written by a test: the DOM after parsing, its console log, screenshots.
class ChromiumPage : public ::testing::Test {
 protected:
  bool start() {
    chromium_ = find_chromium();
    return !chromium_.empty();
  }
  // Runs chromium on `page` with `args`; stdout to `out`, stderr (its log) returned.
  std::string chromium(const std::string& args, const std::filesystem::path& page, const std::filesystem::path& out) {
    const auto err = dir_ / "err.txt";
    const std::string cmd = chromium_ +
                            " --headless --no-sandbox --disable-gpu --disable-background-networking "
                            "--disable-component-update --disable-sync --no-first-run --enable-logging=stderr --v=0 "
                            "--user-data-dir=" +
                            (dir_ / "profile").string() + " " + args + " file://" + page.string() + " > " +
                            out.string() + " 2> " + err.string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return read_file(err);
  }
  // The page's screenshot is a PNG more than 10 times a blank page's; kept under
  // $SYNCSCOPE_VIEW_SCREENSHOT_DIR/<name> when that is set.
  void expect_screenshot_not_blank(const std::string& name, const std::string& size = "1280,1400") {
    const auto png = dir_ / "shot.png", blank_png = dir_ / "blank.png";
    (void)chromium("--window-size=" + size + " --screenshot=" + png.string(), html_, dir_ / "out.txt");
    const auto blank = dir_ / "blank.html";
    write_file_atomic(blank, "<!DOCTYPE html><html><body></body></html>");
    (void)chromium("--window-size=" + size + " --screenshot=" + blank_png.string(), blank, dir_ / "out2.txt");
    ASSERT_TRUE(std::filesystem::exists(png));
    ASSERT_TRUE(std::filesystem::exists(blank_png));
    std::ifstream in(png, std::ios::binary);
    char sig[8] = {};
    in.read(sig, 8);
    EXPECT_EQ(std::string(sig, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    // A blank page compresses to almost nothing; text, lanes and bars do not.
    EXPECT_GT(std::filesystem::file_size(png), 10 * std::filesystem::file_size(blank_png))
        << std::filesystem::file_size(png) << " vs blank " << std::filesystem::file_size(blank_png);
    if (const char* keep = std::getenv("SYNCSCOPE_VIEW_SCREENSHOT_DIR"))
      std::filesystem::copy_file(png, std::filesystem::path(keep) / name,
                                 std::filesystem::copy_options::overwrite_existing);
  }
  // The check sees a script error when there is one.
  void expect_control_page_error_seen() {
    const auto bad = dir_ / "bad.html";
    write_file_atomic(bad, "<!DOCTYPE html><html><body><script>noSuchFunction();</script></body></html>");
    EXPECT_NE(chromium("--dump-dom", bad, dir_ / "bad-dom.html").find(":CONSOLE"), std::string::npos);
  }
  std::string chromium_;
  test::TempDir dir_;
  std::filesystem::path html_;
};

class ViewInChromium : public ChromiumPage {
 protected:
  void SetUp() override {
    if (!start()) GTEST_SKIP() << "skipped: chromium not installed (apt-get install chromium)";
    ViewOptions o;
    o.step_glob = "train_step#*";
    const auto fixture = test::fixture("torch/item_loop_l8_h200.json.gz");
    ViewPage page;
    page.traces.push_back(build_view_trace(read_trace(fixture), fixture.string(), o));
    syncs_ = page.traces.front().syncs.size();
    html_ = dir_ / "view.html";
    write_file_atomic(html_, render_view_html(page));
  }
  std::size_t syncs_ = 0;
};

TEST_F(ViewInChromium, DomHoldsSyncMarkersAndNoConsoleErrors) {
  ASSERT_EQ(syncs_, 8u);  // the fixture's median step: one .item() per layer, 8 layers
  const auto dom = dir_ / "dom.html";
  const std::string log = chromium("--dump-dom", html_, dom);
  const std::string text = read_file(dom);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(count(text, "<g class=\"sync-marker\" data-cause=\"aten::item\""), 8u);
  for (const char* needle :
       {"<svg class=\"view-timeline\"", "class=\"lane lane-host\"", "class=\"lane lane-stream\"",
        "class=\"lane lane-copy\"", "<g class=\"critical-path\">", "class=\"cp-run kind-",
        "<svg class=\"chart idle-chart\"", "<table class=\"causes\">", "<table class=\"kernels\">"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
  expect_control_page_error_seen();
}

TEST_F(ViewInChromium, ScreenshotIsNotBlank) { expect_screenshot_not_blank("view-h200.png"); }

// A rank directory's page, built as `syncscope view tests/fixtures/ranks/nccl4` builds it
// (cli/cmd_view.cpp: the files in name order, then by rank, and the set's notes).
class ViewRanksInChromium : public ChromiumPage {
 protected:
  void SetUp() override {
    if (!start()) GTEST_SKIP() << "skipped: chromium not installed (apt-get install chromium)";
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(test::fixture("ranks/nccl4")))
      if (e.path().string().find(".json") != std::string::npos) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ViewPage page;
    for (const auto& f : files) page.traces.push_back(build_view_trace(read_trace(f), f.string(), ViewOptions{}));
    std::stable_sort(page.traces.begin(), page.traces.end(), [](const ViewTrace& x, const ViewTrace& y) {
      return x.rank.has_value() != y.rank.has_value() ? x.rank.has_value() : x.rank && *x.rank < *y.rank;
    });
    page.notes = view_set_notes(page.traces);
    html_ = dir_ / "ranks.html";
    write_file_atomic(html_, render_view_html(page));
  }
};

TEST_F(ViewRanksInChromium, DomHoldsEveryRanksLanesAndSyncMarkerAndNoConsoleErrors) {
  const auto dom = dir_ / "dom.html";
  const std::string log = chromium("--dump-dom", html_, dom);
  const std::string text = read_file(dom);
  ASSERT_FALSE(text.empty());
  // make_nccl4.py: four ranks, each a host thread, a compute stream (7) and NCCL's stream (20);
  // only rank 0 syncs (loss.item() in every step; the median step's one is marked).
  EXPECT_EQ(count(text, "<section class=\"trace\""), 4u);
  EXPECT_EQ(count(text, "class=\"lane lane-host\""), 4u);
  EXPECT_EQ(count(text, "class=\"lane lane-stream\""), 8u);
  EXPECT_EQ(count(text, "class=\"bar kind-comm\""), 4u);
  EXPECT_EQ(count(text, "<g class=\"sync-marker\" data-cause=\"aten::item\""), 1u);
  for (const char* needle : {"<h2>Ranks side by side</h2>", "<table class=\"ranks\">", "<h2>rank 0 of 4 (",
                             "<h2>rank 2 of 4 (", "<h2>rank 3 (rank3.pt.trace.json.gz)</h2>", "Rank 2 stands out",
                             "Potential straggler(s), reaching their collectives last"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
  expect_control_page_error_seen();
}

TEST_F(ViewRanksInChromium, ScreenshotIsNotBlank) { expect_screenshot_not_blank("view-ranks.png", "1280,1600"); }

}  // namespace
}  // namespace syncscope
