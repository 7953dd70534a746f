#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

using namespace syncscope;
namespace fs = std::filesystem;

TEST(FileIo, PlainAndGzipRoundTrip) {
  test::TempDir dir;
  std::string content(100000, 'x');
  for (std::size_t i = 0; i < content.size(); i += 7) content[i] = char('a' + i % 26);
  write_file_atomic(dir / "a.json", content);
  write_file_atomic(dir / "a.json.gz", content);
  EXPECT_FALSE(is_gzip_file(dir / "a.json"));
  EXPECT_TRUE(is_gzip_file(dir / "a.json.gz"));
  EXPECT_LT(fs::file_size(dir / "a.json.gz"), content.size());
  EXPECT_EQ(read_file(dir / "a.json"), content);
  EXPECT_EQ(read_file(dir / "a.json.gz"), content);
}

TEST(FileIo, RefusesToOverwriteUnlessAsked) {
  test::TempDir dir;
  write_file_atomic(dir / "r.csv", "first");
  EXPECT_THROW(write_file_atomic(dir / "r.csv", "second"), InputError);
  EXPECT_EQ(read_file(dir / "r.csv"), "first");
  write_file_atomic(dir / "r.csv", "second", /*overwrite=*/true);
  EXPECT_EQ(read_file(dir / "r.csv"), "second");
}

TEST(FileIo, FailedWriteLeavesNothing) {
  test::TempDir dir;
  EXPECT_THROW(write_file_atomic(dir / "x.json",
                                 [](const Sink& sink) {
                                   sink("{\"partial\":");
                                   throw Error("writer failed half-way");
                                 }),
               Error);
  EXPECT_FALSE(fs::exists(dir / "x.json"));
  EXPECT_TRUE(fs::is_empty(dir.path())) << "temporary file left behind";
}

TEST(FileIo, FailedGzipWriteLeavesNothing) {
  test::TempDir dir;
  EXPECT_THROW(write_file_atomic(dir / "x.json.gz",
                                 [](const Sink& sink) {
                                   sink(std::string(100000, 'z'));
                                   throw Error("writer failed half-way");
                                 }),
               Error);
  EXPECT_TRUE(fs::is_empty(dir.path())) << "temporary file left behind";
}

TEST(FileIo, TruncatedGzipIsAnInputErrorNamingTheFile) {
  test::TempDir dir;
  std::string content(50000, 'q');
  write_file_atomic(dir / "t.json.gz", content);
  auto size = fs::file_size(dir / "t.json.gz");
  fs::resize_file(dir / "t.json.gz", size / 2);
  try {
    read_file(dir / "t.json.gz");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json.gz"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
}

TEST(FileIo, MissingFileAndDirectory) {
  test::TempDir dir;
  EXPECT_THROW(read_file(dir / "nope.json"), InputError);
  EXPECT_THROW(read_file(dir.path()), InputError);
  EXPECT_THROW(write_file_atomic(dir / "no" / "such" / "dir.json", "x"), InputError);
}
