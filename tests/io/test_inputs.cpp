// Traces from pipes, FIFOs, process substitution and "-" (standard input), gzip or not: the
// input is opened once and its format recognized from the bytes read from that handle, never
// by opening it again (`analyze <(zcat t.json.gz)` said "not a trace file" because
// the first 8 KiB read to sniff gzip went to a first handle and were lost).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

// Writes `data` into `fd` from another thread (a pipe holds only 64 KiB) and closes it.
class Feeder {
 public:
  Feeder(int fd, std::string data)
      : thread_([fd, d = std::move(data)] {
          std::size_t off = 0;
          while (off < d.size()) {
            const ssize_t n = ::write(fd, d.data() + off, d.size() - off);
            if (n <= 0) break;
            off += static_cast<std::size_t>(n);
          }
          ::close(fd);
        }) {}
  ~Feeder() { thread_.join(); }
  Feeder(const Feeder&) = delete;
  Feeder& operator=(const Feeder&) = delete;

 private:
  std::thread thread_;
};

std::string fixture_text() { return test::slurp(test::trace_fixture("kineto_all_categories.json")); }

std::string gz_bytes(const test::TempDir& dir, const std::string& text) {
  test::spit_gz(dir / "t.json.gz", text);
  return test::slurp(dir / "t.json.gz");
}

TEST(Inputs, ProcessSubstitutionPipesGzipOrNot) {
  test::TempDir dir;
  const std::string text = fixture_text();
  const Trace expected = read_trace(test::trace_fixture("kineto_all_categories.json"));
  for (const bool gz : {false, true}) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    Feeder feed(p[1], gz ? gz_bytes(dir, text) : text);
    // What bash's <(...) hands a program: /dev/fd/N, readable once.
    const Trace t = read_trace("/dev/fd/" + std::to_string(p[0]));
    ::close(p[0]);
    EXPECT_EQ(test::diff_traces(t, expected), "") << (gz ? "gzip" : "plain");
  }
}

TEST(Inputs, NamedPipes) {
  test::TempDir dir;
  const std::string text = fixture_text();
  for (const bool gz : {false, true}) {
    const fs::path fifo = dir / (gz ? "fifo.gz" : "fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string data = gz ? gz_bytes(dir, text) : text;
    std::thread writer([&] {
      const int fd = ::open(fifo.c_str(), O_WRONLY);
      if (fd >= 0) Feeder(fd, data);
    });
    const Trace t = read_trace(fifo);
    writer.join();
    EXPECT_EQ(test::diff_traces(t, read_trace(test::trace_fixture("kineto_all_categories.json"))), "");
  }
}

TEST(Inputs, DashIsStandardInput) {
  test::TempDir dir;
  const std::string text = fixture_text();
  for (const bool gz : {false, true}) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    const int saved = ::dup(0);
    ASSERT_GE(saved, 0);
    ASSERT_EQ(::dup2(p[0], 0), 0);
    ::close(p[0]);
    Trace t;
    {
      Feeder feed(p[1], gz ? gz_bytes(dir, text) : text);
      t = read_trace("-");
    }
    ::dup2(saved, 0);
    ::close(saved);
    EXPECT_EQ(t.kernels.size(), 2u) << (gz ? "gzip" : "plain");
  }
}

TEST(Inputs, ErrorsFromAPipeNameIt) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const std::string name = "/dev/fd/" + std::to_string(p[0]);
  {
    Feeder feed(p[1], "hello world");
    try {
      read_trace(name);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(name + ": not a trace file"), std::string::npos) << e.what();
    }
  }
  ::close(p[0]);
}

// The first bytes decide the reader: an SQLite database goes to the Nsight Systems reader,
// which names what is wrong with this one (a header and nothing else), not "not a trace file".
TEST(Inputs, SqliteDatabasesAreRecognized) {
  test::TempDir dir;
  test::spit(dir / "report.sqlite", std::string("SQLite format 3\0\x10\x00\x01\x01", 20));
  try {
    read_trace(dir / "report.sqlite");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("SQLite"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("not a trace file"), std::string::npos) << e.what();
  }
}

// The command line, as a user types it.
TEST(Inputs, AnalyzeReadsProcessSubstitutionAndStdin) {
  SYNCSCOPE_SKIP_WITHOUT_CLI();
  const fs::path exe = fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope";
  ASSERT_TRUE(fs::exists(exe)) << "build the syncscope target";
  test::TempDir dir;
  gz_bytes(dir, fixture_text());
  const std::string gz = (dir / "t.json.gz").string();
  auto run = [&](const std::string& cmd) {
    const std::string full =
        "bash -c \"" + cmd + "\" >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
    const int status = std::system(full.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const std::string sy = "'" + exe.string() + "' analyze --format json ";
  for (const std::string& cmd : {sy + "<(zcat '" + gz + "')", sy + "<(cat '" + gz + "')",
                                 "zcat '" + gz + "' | " + sy + "-", "cat '" + gz + "' | " + sy + "-"}) {
    EXPECT_EQ(run(cmd), 0) << cmd << ": " << test::slurp(dir / "err");
    EXPECT_NE(test::slurp(dir / "out").find("\"schema_version\""), std::string::npos) << cmd;
  }
}

}  // namespace
}  // namespace syncscope
