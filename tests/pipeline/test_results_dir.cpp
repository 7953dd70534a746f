// The results directory: written next to its destination, published by rename, never
// replacing a directory without --force; a stopped run keeps its complete files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "syncscope/core/error.hpp"
#include "syncscope/pipeline/results_dir.hpp"
#include "test_paths.hpp"

namespace syncscope::pipeline {
namespace {

namespace fs = std::filesystem;

TEST(PipelineResultsDir, PartialDirIsNextToItsDestinationAndNotPrivate) {
  test::TempDir dir;
  const fs::path out = dir / "sub/res";
  const fs::path partial = make_partial_dir(out);
  EXPECT_EQ(partial.parent_path(), out.parent_path());
  EXPECT_EQ(partial.filename().string().rfind("res.partial-", 0), 0u) << partial;
  EXPECT_TRUE(fs::is_directory(partial / "traces"));
  struct stat st {};
  ASSERT_EQ(::stat(partial.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0777 & ~mask);  // like any new directory, not mkdtemp's 0700
}

TEST(PipelineResultsDir, PublishRefusesAnExistingDirectoryWithoutForce) {
  test::TempDir dir;
  const fs::path out = dir / "res";
  fs::create_directories(out);
  std::ofstream(out / "old.txt") << "old";
  const fs::path partial = make_partial_dir(out);
  std::ofstream(partial / "new.txt") << "new";
  EXPECT_THROW(publish(partial, out, false), InputError);
  EXPECT_TRUE(fs::exists(out / "old.txt"));
  EXPECT_TRUE(fs::exists(partial / "new.txt"));
  publish(partial, out, true);
  EXPECT_TRUE(fs::exists(out / "new.txt"));
  EXPECT_FALSE(fs::exists(out / "old.txt"));
  EXPECT_FALSE(fs::exists(partial));
  for (const auto& e : fs::directory_iterator(dir.path()))  // the old one moved aside is gone
    EXPECT_EQ(e.path().filename(), "res") << e.path();
}

TEST(PipelineResultsDir, GuardRemovesAnEmptyPartialAndKeepsCompleteFiles) {
  test::TempDir dir;
  fs::path empty, kept;
  {
    PartialDirGuard g{make_partial_dir(dir / "a")};
    empty = g.dir;
  }
  EXPECT_FALSE(fs::exists(empty));
  {
    PartialDirGuard g{make_partial_dir(dir / "b")};
    kept = g.dir;
    std::ofstream(kept / "traces/t.json") << "{}";
  }
  EXPECT_TRUE(fs::exists(kept / "traces/t.json"));
  fs::path published_dir;
  {
    PartialDirGuard g{make_partial_dir(dir / "c")};
    publish(g.dir, dir / "c", false);
    g.published = true;
  }
  EXPECT_TRUE(fs::is_directory(dir / "c/traces"));
}

}  // namespace
}  // namespace syncscope::pipeline
