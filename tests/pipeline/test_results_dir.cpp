// The results directory: written next to its destination, published by rename, never
// replacing a directory without --force nor one we did not write; a stopped run keeps its
// complete files. (core's output policy has its own tests: tests/core.)
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
  const OutputDir plan = plan_results_dir(out, false);
  const fs::path partial = make_partial_dir(plan);
  EXPECT_EQ(fs::weakly_canonical(partial.parent_path()), fs::weakly_canonical(out.parent_path()));
  EXPECT_EQ(partial.filename().string().rfind("res.partial-", 0), 0u) << partial;
  EXPECT_TRUE(fs::is_directory(partial / "traces"));
  struct stat st {};
  ASSERT_EQ(::stat(partial.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0777 & ~mask);  // like any new directory, not mkdtemp's 0700
}

TEST(PipelineResultsDir, NeverReplacesADirectoryWeDidNotWrite) {
  test::TempDir dir;
  const fs::path out = dir / "res";
  fs::create_directories(out);
  std::ofstream(out / "old.txt") << "old";
  EXPECT_THROW(plan_results_dir(out, false), InputError);
  EXPECT_THROW(plan_results_dir(out, true), InputError);  // not ours: --force does not help
  EXPECT_TRUE(fs::exists(out / "old.txt"));
}

TEST(PipelineResultsDir, PublishRefusesADirectoryCreatedMeanwhile) {
  test::TempDir dir;
  const fs::path out = dir / "res";
  const OutputDir plan = plan_results_dir(out, false);
  const fs::path partial = make_partial_dir(plan);
  std::ofstream(partial / "new.txt") << "new";
  fs::create_directories(out);
  std::ofstream(out / "old.txt") << "old";
  EXPECT_THROW(publish(partial, plan, false), InputError);
  EXPECT_THROW(publish(partial, plan, true), InputError);
  EXPECT_TRUE(fs::exists(out / "old.txt"));
  EXPECT_TRUE(fs::exists(partial / "new.txt"));
}

TEST(PipelineResultsDir, GuardRemovesAnEmptyPartialAndKeepsCompleteFiles) {
  test::TempDir dir;
  fs::path empty, kept;
  {
    PartialDirGuard g{make_partial_dir(plan_results_dir(dir / "a", false))};
    empty = g.dir;
  }
  EXPECT_FALSE(fs::exists(empty));
  {
    PartialDirGuard g{make_partial_dir(plan_results_dir(dir / "b", false))};
    kept = g.dir;
    std::ofstream(kept / "traces/t.json") << "{}";
  }
  EXPECT_TRUE(fs::exists(kept / "traces/t.json"));
  {
    const OutputDir plan = plan_results_dir(dir / "c", false);
    PartialDirGuard g{make_partial_dir(plan)};
    publish(g.dir, plan, false);
    g.published = true;
  }
  EXPECT_TRUE(fs::is_directory(dir / "c/traces"));
}

}  // namespace
}  // namespace syncscope::pipeline
