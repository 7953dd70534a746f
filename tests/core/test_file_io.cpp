#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

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

// ---- one open, no re-read: pipes, FIFOs, process substitution, stdin ----

namespace {

std::string gzip_of(const std::string& content) {
  test::TempDir dir;
  write_file_atomic(dir / "c.gz", content);
  std::ifstream in(dir / "c.gz", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Feeds `bytes` into a pipe from a thread, a few bytes at a time at first (as a slow
// producer would), and returns the /dev/fd path of its read end.
struct PipeFeed {
  int fds[2] = {-1, -1};
  std::thread writer;
  explicit PipeFeed(std::string bytes) {
    EXPECT_EQ(::pipe(fds), 0);
    writer = std::thread([this, b = std::move(bytes)] {
      std::size_t off = 0;
      for (std::size_t step : {std::size_t{1}, std::size_t{1}, std::size_t{7}, std::size_t{8192}}) {
        const std::size_t n = std::min(step, b.size() - off);
        if (n > 0) (void)!::write(fds[1], b.data() + off, n);
        off += n;
      }
      while (off < b.size()) {
        const ssize_t w = ::write(fds[1], b.data() + off, b.size() - off);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
      }
      ::close(fds[1]);
    });
  }
  fs::path path() const { return "/dev/fd/" + std::to_string(fds[0]); }
  ~PipeFeed() {
    writer.join();
    ::close(fds[0]);
  }
};

}  // namespace

TEST(FileIo, ReadsPipesPlainAndGzipWithOneOpen) {
  std::string content(3 << 20, 'x');  // several read chunks
  for (std::size_t i = 0; i < content.size(); i += 13) content[i] = char('a' + i % 26);
  struct Row {
    const char* name;
    std::string bytes;
  } rows[] = {{"plain", content},
              {"gzip", gzip_of(content)},
              {"two gzip members", gzip_of(content.substr(0, 1000)) + gzip_of(content.substr(1000))}};
  for (const auto& r : rows) {
    PipeFeed feed(r.bytes);
    EXPECT_EQ(read_file(feed.path()), content) << r.name;
  }
}

TEST(FileIo, ReadsAFifo) {
  test::TempDir dir;
  const fs::path fifo = dir / "scenario.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string content = gzip_of("name: from-a-fifo\n");
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << content; });
  EXPECT_EQ(read_file(fifo), "name: from-a-fifo\n");
  writer.join();
}

TEST(FileIo, ReadsStandardInputAsDash) {
  const int saved = ::dup(0);
  {
    PipeFeed feed(gzip_of("from stdin"));
    ASSERT_GE(::dup2(feed.fds[0], 0), 0);
    EXPECT_EQ(read_file("-"), "from stdin");
    ::dup2(saved, 0);
  }
  ::close(saved);
}

TEST(FileIo, TruncatedGzipFromAPipeNamesIt) {
  const std::string gz = gzip_of(std::string(100000, 'q'));
  PipeFeed feed(gz.substr(0, gz.size() / 2));
  try {
    read_file(feed.path());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated gzip"), std::string::npos) << e.what();
  }
}

TEST(FileIo, SizeBoundBeforeAllocating) {
  test::TempDir dir;
  write_file_atomic(dir / "big.txt", std::string(5000, 'b'));
  write_file_atomic(dir / "bomb.gz", std::string(1 << 20, '\0'));  // ~1 KB that inflates to 1 MiB
  EXPECT_EQ(read_file(dir / "big.txt", 5000).size(), 5000u);
  struct Row {
    fs::path path;
    std::uint64_t max;
    const char* says;
  } rows[] = {{dir / "big.txt", 4999, "holds more than"}, {dir / "bomb.gz", 100000, "gunzips to more than"}};
  for (const auto& r : rows) {
    try {
      read_file(r.path, r.max);
      FAIL() << r.path;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(r.says), std::string::npos) << e.what();
    }
  }
  PipeFeed feed(std::string(10000, 'p'));
  EXPECT_THROW(read_file(feed.path(), 1000), InputError);
}

TEST(FileIo, EmptyAndTinyFiles) {
  test::TempDir dir;
  write_file_atomic(dir / "empty", "");
  write_file_atomic(dir / "one", "1");
  EXPECT_EQ(read_file(dir / "empty"), "");
  EXPECT_EQ(read_file(dir / "one"), "1");
}
