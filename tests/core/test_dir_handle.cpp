// core/dir_handle.hpp, dir_manifest.hpp and temp_files.hpp: nothing under a
// directory we write is reached through a link, a FIFO never blocks, a run's manifest is the
// only authority for --force, and temporary files go on signals and after a killed process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/dir_handle.hpp"
#include "syncscope/core/dir_manifest.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/temp_files.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void put(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Both resolutions: openat2 (RESOLVE_BENEATH) and the component walk of older kernels.
class DirHandleTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { dir_handle_force_component_walk(GetParam()); }
  void TearDown() override { dir_handle_force_component_walk(false); }
  test::TempDir t;
};

TEST_P(DirHandleTest, WritesReadsAndCreatesBeneath) {
  fs::create_directories(t / "d");
  const auto h = DirHandle::open(t / "d");
  h.write("a/b/c.json", "{}");
  EXPECT_EQ(slurp(t / "d" / "a" / "b" / "c.json"), "{}");
  EXPECT_EQ(h.read("a/b/c.json"), "{}");
  h.write("a/b/c.json", "{\"x\":1}");  // replaced
  EXPECT_EQ(h.read("a/b/c.json"), "{\"x\":1}");
  EXPECT_TRUE(h.is_directory("a/b"));
  h.remove("a");
  EXPECT_FALSE(fs::exists(t / "d" / "a"));
}

TEST_P(DirHandleTest, NeverFollowsALinkOut) {
  fs::create_directories(t / "d");
  fs::create_directories(t / "outside");
  put(t / "victim", "keep");
  const auto h = DirHandle::open(t / "d");
  fs::create_symlink(t / "victim", t / "d" / "file");
  fs::create_symlink(t / "nothing-yet", t / "d" / "dangling");
  fs::create_directory_symlink(t / "outside", t / "d" / "sub");
  EXPECT_NE(input_error([&] { h.write("file", "x"); }).find("is a symbolic link"), std::string::npos);
  EXPECT_NE(input_error([&] { h.write("dangling", "x"); }).find("is a symbolic link"), std::string::npos);
  EXPECT_NE(input_error([&] { h.write("sub/f", "x"); }).find("is a symbolic link"), std::string::npos);
  EXPECT_NE(input_error([&] { (void)h.read("file"); }).find("symbolic link"), std::string::npos);
  EXPECT_NE(input_error([&] { (void)h.open_append("sub/log"); }).find("symbolic link"), std::string::npos);
  EXPECT_NE(input_error([&] { (void)h.read("../victim"); }).find("leads outside"), std::string::npos);
  h.remove("sub");  // the link goes, not what it points to
  EXPECT_EQ(slurp(t / "victim"), "keep");
  EXPECT_FALSE(fs::exists(t / "nothing-yet"));
  EXPECT_TRUE(fs::exists(t / "outside"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t / "d" / "sub")));
}

TEST_P(DirHandleTest, AFifoIsRefusedNotWaitedFor) {
  fs::create_directories(t / "d");
  ASSERT_EQ(::mkfifo((t / "d" / "p.json").c_str(), 0600), 0);
  const auto h = DirHandle::open(t / "d");
  EXPECT_NE(input_error([&] { (void)h.read("p.json"); }).find("is a FIFO"), std::string::npos);
  EXPECT_NE(input_error([&] { h.write("p.json", "x"); }).find("p.json: "), std::string::npos);
  EXPECT_NE(input_error([&] { (void)h.open_append("p.json"); }).find("p.json: "), std::string::npos);
}

std::string resolution_name(const ::testing::TestParamInfo<bool>& p) { return p.param ? "ComponentWalk" : "Openat2"; }
INSTANTIATE_TEST_SUITE_P(Resolve, DirHandleTest, ::testing::Values(false, true), resolution_name);

TEST(DirManifest, ListsWhatWasWrittenAndNothingElse) {
  test::TempDir t;
  fs::create_directories(t / "r" / "traces");
  put(t / "r" / "results.json", "{}");
  put(t / "r" / "traces" / "a.json.gz", "gz");
  write_dir_manifest(t / "r");
  EXPECT_TRUE(dir_manifest_mismatches(t / "r").empty());
  put(t / "r" / "traces" / "mine.json.gz", "user");
  put(t / "r" / "results.json", "{ }");  // same size? no: one byte more, and other content
  const auto bad = dir_manifest_mismatches(t / "r");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0], "results.json (not the content the run wrote)");
  EXPECT_EQ(bad[1], "traces/mine.json.gz");
  fs::remove(t / "r" / kRunManifest);
  EXPECT_NE(dir_manifest_mismatches(t / "r").at(0).find("without it --force cannot tell"), std::string::npos);
}

TEST(DirManifest, SameSizeOtherContentIsNotOurs) {
  test::TempDir t;
  fs::create_directories(t / "r");
  put(t / "r" / "results.csv", "abc");
  write_dir_manifest(t / "r");
  put(t / "r" / "results.csv", "abd");
  EXPECT_EQ(dir_manifest_mismatches(t / "r").at(0), "results.csv (not the content the run wrote)");
}

TEST(TempFiles, ASignalRemovesThem) {
  test::TempDir t;
  const fs::path f = t / "spool";
  const pid_t child = ::fork();
  if (child == 0) {
    put(f, "partial");
    TempFileGuard g(f);
    ::raise(SIGTERM);
    ::_exit(0);  // not reached: the handler ends the process by SIGTERM
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_FALSE(fs::exists(f));
}

TEST(TempFiles, StaleOnesOfDeadProcessesGo) {
  test::TempDir t;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int st = 0;
  ::waitpid(child, &st, 0);
  put(t / ("syncscope-input-" + std::to_string(child) + "-abc"), "dead");
  put(t / ("syncscope-input-" + std::to_string(::getppid()) + "-abc"), "alive");  // our parent lives
  put(t / "syncscope-input-notapid-abc", "not ours");
  const auto removed = remove_stale_temp_files(t.path(), "syncscope-input-");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_FALSE(fs::exists(t / ("syncscope-input-" + std::to_string(child) + "-abc")));
  EXPECT_TRUE(fs::exists(t / ("syncscope-input-" + std::to_string(::getppid()) + "-abc")));
  EXPECT_TRUE(fs::exists(t / "syncscope-input-notapid-abc"));
}

TEST(CsvFormula, FormulaCellsAreTextNumbersStayNumbers) {
  EXPECT_EQ(csv_escape("=1+1"), "\"'=1+1\"");
  EXPECT_EQ(csv_escape("@SUM(A1)"), "\"'@SUM(A1)\"");
  EXPECT_EQ(csv_escape("+cmd|' /C calc'!A0"), "\"'+cmd|' /C calc'!A0\"");
  EXPECT_EQ(csv_escape("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(csv_escape("-1.5"), "-1.5");
  EXPECT_EQ(csv_escape("+3e9"), "+3e9");
  EXPECT_EQ(csv_escape("-2.5e-07"), "-2.5e-07");
  EXPECT_EQ(csv_escape("-inf"), "-inf");
  EXPECT_EQ(csv_escape("-"), "-");
  EXPECT_EQ(csv_parse(csv_escape("=x,y")).at(0).at(0), "'=x,y");
}

}  // namespace
}  // namespace syncscope
