// What syncscope wrote into a sweep's or rank analysis's directory, file by file, so that
// `--force` replaces only files whose content is still what we wrote (issue 39: an edited
// results.csv was lost). DIR/syncscope-written.txt holds one line per file,
//
//   SIZE FNV1A64 REL
//
// rewritten in place under an flock of the record itself (the tasks of a sweep write their
// status files at the same time, on one node or many). FNV-1a tells our file from one
// edited or put in its place, not from one crafted to collide (core/dir_manifest.hpp).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

#include "common.hpp"
#include "syncscope/core/dir_handle.hpp"
#include "syncscope/core/dir_lock.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::cluster::detail {

namespace fs = std::filesystem;

namespace {

struct Entry {
  std::uint64_t size = 0;
  std::string hash;
};

std::map<std::string, Entry> parse(const std::string& text) {
  std::map<std::string, Entry> m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Entry e;
    std::string rel;
    if (!(ls >> e.size >> e.hash)) continue;
    std::getline(ls >> std::ws, rel);
    if (!rel.empty()) m[rel] = e;
  }
  return m;
}

std::string read_fd(int fd) {
  std::string s;
  char buf[65536];
  off_t at = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    s.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  return s;
}

// The record, opened beneath DIR (never through a link) and locked; closed (unlocked) by
// the caller.
int open_record(const DirHandle& h, int op) {
  int fd = -1;
  do {
    fd = ::openat(h.fd(), kWrittenRecord, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  } while (fd < 0 && errno == EINTR);
  SYNCSCOPE_INPUT_ERROR_IF(fd < 0, (h.path() / kWrittenRecord).string() + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError((h.path() / kWrittenRecord).string() + ": is not a regular file");
  }
  while (::flock(fd, op) != 0 && errno == EINTR) {
  }
  return fd;
}

}  // namespace

void record_written(const DirHandle& h, const std::string& rel, std::string_view content) {
  const int fd = open_record(h, LOCK_EX);
  auto m = parse(read_fd(fd));
  m[rel] = {content.size(), fnv1a_hex(content)};
  std::string out;
  for (const auto& [r, e] : m) out += std::to_string(e.size) + " " + e.hash + " " + r + "\n";
  const bool ok =
      ::ftruncate(fd, 0) == 0 && ::pwrite(fd, out.data(), out.size(), 0) == static_cast<ssize_t>(out.size());
  const int err = errno;
  ::close(fd);
  SYNCSCOPE_THROW_IF(!ok, (h.path() / kWrittenRecord).string() + ": cannot write: " + std::strerror(err));
}

std::vector<std::string> changed_since_written(const fs::path& dir, const std::vector<std::string>& rels,
                                               std::size_t limit) {
  std::vector<std::string> bad;
  const DirHandle h = DirHandle::open(dir);
  std::map<std::string, Entry> m;
  if (h.exists(kWrittenRecord)) {
    const int fd = open_record(h, LOCK_SH);
    m = parse(read_fd(fd));
    ::close(fd);
  }
  for (const auto& rel : rels) {
    if (bad.size() >= limit) break;
    struct stat st {};
    if (!h.stat(rel, st)) continue;  // absent: nothing to lose
    if (!S_ISREG(st.st_mode)) {
      bad.push_back(rel + " (" + (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file") +
                    ", not written by syncscope)");
      continue;
    }
    const auto it = m.find(rel);
    if (it == m.end()) {
      bad.push_back(rel + " (not written by syncscope)");
      continue;
    }
    if (static_cast<std::uint64_t>(st.st_size) != it->second.size ||
        fnv1a_hex(h.read(rel, it->second.size + 1)) != it->second.hash)
      bad.push_back(rel + " (changed since syncscope wrote it)");
  }
  return bad;
}

std::vector<std::string> files_under(const fs::path& dir, const std::string& rel) {
  std::vector<std::string> out;
  if (!has_directory(dir, rel)) return out;
  const DirHandle h = DirHandle::open(dir);
  std::vector<std::string> todo = {rel};
  while (!todo.empty() && out.size() < 100000) {
    const std::string d = todo.back();
    todo.pop_back();
    for (const auto& n : h.list(d)) {
      const std::string r = d + "/" + n;
      struct stat st {};
      if (!h.stat(r, st)) continue;
      if (S_ISDIR(st.st_mode)) todo.push_back(r);
      else out.push_back(r);
    }
  }
  return out;
}

std::vector<std::string> files_outside_slurm_logs(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto& f : files_under(dir, "slurm"))
    if (f.rfind("slurm/logs/", 0) != 0) out.push_back(std::move(f));
  return out;
}

}  // namespace syncscope::cluster::detail
