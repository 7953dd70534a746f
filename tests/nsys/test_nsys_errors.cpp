// Bad input: every failure is an InputError (exit 2 in the CLI) that names the file and what
// is wrong; a pipe is read through a temporary copy.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "nsys_fixture.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/nsys_sqlite.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

// The InputError message of reading `path`, or "" when it read.
std::string error_of(const fs::path& path) {
  try {
    (void)read_trace(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(NsysErrors, NotAnNsysExport) {
  test::TempDir dir;
  const auto path = test::build_export(dir, "not_nsys");
  const std::string e = error_of(path);
  EXPECT_NE(e.find(path.string()), std::string::npos) << e;
  EXPECT_NE(e.find("no CUPTI_ACTIVITY_KIND_RUNTIME or StringIds table: not an Nsight Systems export"),
            std::string::npos)
      << e;
}

TEST(NsysErrors, CuptiTablesWithoutStringIds) {
  test::TempDir dir;
  const auto path = test::build_export(dir, "nsys_2024_6", "DROP TABLE StringIds;");
  const std::string e = error_of(path);
  EXPECT_NE(e.find("no StringIds table"), std::string::npos) << e;
  EXPECT_NE(e.find("incomplete"), std::string::npos) << e;
}

TEST(NsysErrors, ATableWithoutAColumnTheReaderNeeds) {
  test::TempDir dir;
  const auto path = test::build_export(dir, "nsys_2024_6", "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN start;");
  const std::string e = error_of(path);
  EXPECT_NE(e.find("CUPTI_ACTIVITY_KIND_KERNEL has no column \"start\""), std::string::npos) << e;
}

TEST(NsysErrors, TruncatedFile) {
  test::TempDir dir;
  const auto path = test::build_export(dir, "nsys_2024_6");
  const std::string bytes = test::slurp_file(path);
  ASSERT_GT(bytes.size(), 4096u);
  const auto cut = dir / "cut.sqlite";
  spit(cut, bytes.substr(0, bytes.size() / 2));
  const std::string e = error_of(cut);
  EXPECT_NE(e.find(cut.string() + ": truncated SQLite database"), std::string::npos) << e;
  EXPECT_NE(e.find("the copy is incomplete"), std::string::npos) << e;
  spit(cut, bytes.substr(0, 60));  // not even the header
  EXPECT_NE(error_of(cut).find("shorter than the 100-byte SQLite header"), std::string::npos) << error_of(cut);
}

TEST(NsysErrors, CorruptPages) {
  test::TempDir dir;
  const auto path = test::build_export(dir, "nsys_2024_6");
  std::string bytes = test::slurp_file(path);
  const std::size_t page = 4096;  // SQLite's default page size
  ASSERT_GT(bytes.size(), 2 * page);
  for (std::size_t i = page; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5 ^ (i * 131));
  const auto bad = dir / "corrupt.sqlite";
  spit(bad, bytes);
  const std::string e = error_of(bad);
  EXPECT_NE(e.find(bad.string() + ": corrupt database"), std::string::npos) << e;
  EXPECT_NE(e.find("nsys export --type sqlite"), std::string::npos) << e;
  // The same from memory.
  EXPECT_THROW((void)read_nsys_sqlite_memory(bytes, "image"), InputError);
}

TEST(NsysErrors, CorruptHeader) {
  test::TempDir dir;
  std::string bytes = test::slurp_file(test::build_export(dir, "nsys_2024_6"));
  bytes[16] = 0x03;  // page size 0x03xx: not a power of two
  bytes[17] = 0x01;
  const auto bad = dir / "header.sqlite";
  spit(bad, bytes);
  EXPECT_NE(error_of(bad).find("page size 769 is not a power of two"), std::string::npos) << error_of(bad);
}

TEST(NsysErrors, LockedByAWriter) {
  test::TempDir dir;
  const auto path = test::build_export(dir, "nsys_2024_6");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // What SQLite does to write (os_unix.c): a POSIX write lock on the reserved byte at
    // 1 GiB + 1. Another process must hold it: locks never conflict within one process.
    const int fd = ::open(path.c_str(), O_RDWR);
    struct flock l {};
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    l.l_start = 0x40000001;
    l.l_len = 1;
    const char ok = (fd >= 0 && ::fcntl(fd, F_SETLK, &l) == 0) ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  const std::string e = error_of(path);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_EQ(ok, 'y') << "the helper process could not lock the file";
  EXPECT_NE(e.find(path.string() + ": database is locked: process " + std::to_string(child)), std::string::npos) << e;
  EXPECT_NE(e.find("wait until it has finished"), std::string::npos) << e;
  EXPECT_EQ(error_of(path), "");  // and reads once the writer is gone
}

TEST(NsysErrors, MissingOrADirectory) {
  test::TempDir dir;
  EXPECT_NE(error_of(dir / "missing.sqlite").find("no such file"), std::string::npos);
  EXPECT_NE(error_of(dir.path()).find("is a directory"), std::string::npos);
  EXPECT_NE(error_of(dir / "missing.sqlite").find((dir / "missing.sqlite").string()), std::string::npos);
}

TEST(NsysErrors, Unreadable) {
  test::TempDir dir;
  const auto path = test::build_export(dir, "nsys_2024_6");
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: a file without read permission is still readable";
  ::chmod(path.c_str(), 0);
  const std::string e = error_of(path);
  ::chmod(path.c_str(), 0644);
  EXPECT_NE(e.find("Permission denied"), std::string::npos) << e;
}

TEST(NsysErrors, ReaderOnItsOwnChecksTheHeader) {
  test::TempDir dir;
  spit(dir / "text.sqlite", "{\"traceEvents\": []}");
  try {
    (void)read_nsys_sqlite(dir / "text.sqlite");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a SQLite database"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)read_nsys_sqlite_memory("SQLite format 3", "short"), InputError);
  EXPECT_THROW((void)read_nsys_sqlite_memory(std::string("SQLite format 3\0", 16), "short"), InputError);
}

TEST(NsysErrors, APipeIsReadThroughATemporaryCopy) {
  test::TempDir dir;
  const std::string bytes = test::slurp_file(test::build_export(dir, "nsys_2024_6"));
  const auto fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << bytes;
  });
  const Trace t = read_trace(fifo);
  writer.join();
  EXPECT_EQ(t.api_calls.size(), 16u);
  EXPECT_EQ(t.meta.trace_name, "pipe");  // named as the user named it
  // The copy is gone afterwards; nothing but the pipe and the export remain.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 2u);
}

TEST(NsysErrors, JsonThroughAPipeStillReads) {
  test::TempDir dir;
  const auto fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"pid":0,"tid":7}]})";
  });
  const Trace t = read_trace(fifo);
  writer.join();
  EXPECT_EQ(t.kernels.size(), 1u);
}

}  // namespace
}  // namespace syncscope
