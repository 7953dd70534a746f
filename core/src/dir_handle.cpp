#include "syncscope/core/dir_handle.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#ifdef SYS_openat2
#define SYNCSCOPE_HAVE_OPENAT2 1
#endif
#endif

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "syncscope/core/error.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/temp_files.hpp"

namespace syncscope {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_component_walk{false};

// An open descriptor that closes itself.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd = o.fd;
      o.fd = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

// The components of a relative path; absolute paths and ".." never resolve beneath.
std::vector<std::string> components(const fs::path& rel, const fs::path& base) {
  std::vector<std::string> out;
  for (const auto& c : rel) {
    const std::string s = c.string();
    if (s.empty() || s == ".") continue;
    SYNCSCOPE_INPUT_ERROR_IF(s == "/" || rel.is_absolute() || s == "..",
                             (base / rel).string() + ": leads outside " + base.string() + "; not followed");
    out.push_back(s);
  }
  return out;
}

int open_component(int dirfd, const std::string& name, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::openat(dirfd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno == ENOTDIR) {
    // O_DIRECTORY on a link says ENOTDIR; say what it is.
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) errno = ELOOP;
    else errno = ENOTDIR;
  }
  return fd;
}

// openat(dirfd, rel) that never follows a link and never leaves dirfd; -1 with errno set.
int open_beneath(int dirfd, const std::vector<std::string>& parts, int flags, mode_t mode) {
  if (parts.empty()) return ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
#ifdef SYNCSCOPE_HAVE_OPENAT2
  static std::atomic<bool> no_openat2{false};
  if (!no_openat2.load() && !g_component_walk.load()) {
    std::string rel;
    for (const auto& p : parts) rel += (rel.empty() ? "" : "/") + p;
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd;
    do {
      fd = ::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how);
    } while (fd < 0 && errno == EINTR);
    if (fd >= 0) return static_cast<int>(fd);
    // ENOSYS: an older kernel; EPERM: a seccomp filter that does not know openat2 (some
    // container runtimes). Both: walk the components instead.
    if (errno != ENOSYS && errno != EPERM) return -1;
    no_openat2 = true;
  }
#endif
  Fd cur(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (cur.fd < 0) return -1;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    Fd next(open_component(cur.fd, parts[i], O_RDONLY | O_DIRECTORY, 0));
    if (next.fd < 0) return -1;
    cur = std::move(next);
  }
  return open_component(cur.fd, parts.back(), flags, mode);
}

std::string why(int err) {
  switch (err) {
    case ELOOP:
      return "is a symbolic link (or one is on the way): syncscope does not follow links inside the directories it "
             "writes; remove it";
    case EXDEV: return "leads outside the directory; not followed";
    case ENOTDIR: return "is not a directory (or one on the way is not)";
    case ENXIO: return "is a FIFO or device, not a regular file: remove it";
    default: return std::strerror(err);
  }
}

[[noreturn]] void fail_open(const fs::path& where, int err) {
  // Our directory's structure is not what we wrote: bad input, said with the reason.
  if (err == ELOOP || err == EXDEV || err == ENOTDIR || err == ENXIO || err == EISDIR || err == EACCES ||
      err == EPERM || err == EROFS || err == ENOENT)
    throw InputError(where.string() + ": " + why(err));
  throw Error(where.string() + ": " + why(err));
}

void require_regular(int fd, const fs::path& where) {
  struct stat st {};
  SYNCSCOPE_THROW_IF(::fstat(fd, &st) != 0, where.string() + ": fstat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw InputError(where.string() + ": is " +
                     describe(S_ISDIR(st.st_mode)    ? PathKind::Directory
                              : S_ISFIFO(st.st_mode) ? PathKind::Fifo
                              : S_ISCHR(st.st_mode)  ? PathKind::CharDevice
                              : S_ISBLK(st.st_mode)  ? PathKind::BlockDevice
                              : S_ISSOCK(st.st_mode) ? PathKind::Socket
                                                     : PathKind::Other) +
                     ", where syncscope expects a regular file it wrote: remove it");
}

void remove_tree_at(int dirfd, const std::string& name, const fs::path& shown) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    throw Error(shown.string() + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    Fd sub(open_component(dirfd, name, O_RDONLY | O_DIRECTORY, 0));
    if (sub.fd < 0) fail_open(shown, errno);
    DIR* d = ::fdopendir(::fcntl(sub.fd, F_DUPFD_CLOEXEC, 0));
    SYNCSCOPE_THROW_IF(d == nullptr, shown.string() + ": " + std::strerror(errno));
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    for (const auto& n : names) remove_tree_at(sub.fd, n, shown / n);
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      throw Error("cannot remove " + shown.string() + ": " + std::strerror(errno));
    return;
  }
  if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT)
    throw Error("cannot remove " + shown.string() + ": " + std::strerror(errno));
}

}  // namespace

void dir_handle_force_component_walk(bool on) { g_component_walk = on; }

DirHandle DirHandle::open(const fs::path& dir, bool create) {
  SYNCSCOPE_INPUT_ERROR_IF(dir.empty(), "directory name is empty");
  if (create) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw InputError("cannot create " + dir.string() + ": " + ec.message());
  }
  int fd;
  do {
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    throw InputError(dir.string() + ": cannot open the directory: " + std::strerror(err));
  }
  return DirHandle(fd, dir);
}

DirHandle::DirHandle(DirHandle&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }

DirHandle& DirHandle::operator=(DirHandle&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

DirHandle::~DirHandle() {
  if (fd_ >= 0) ::close(fd_);
}

DirHandle DirHandle::sub(const fs::path& rel, bool create) const {
  const auto parts = components(rel, path_);
  Fd cur(::fcntl(fd_, F_DUPFD_CLOEXEC, 0));
  SYNCSCOPE_THROW_IF(cur.fd < 0, path_.string() + ": " + std::strerror(errno));
  fs::path shown = path_;
  for (const auto& p : parts) {
    shown /= p;
    if (create && ::mkdirat(cur.fd, p.c_str(), 0777) != 0 && errno != EEXIST) fail_open(shown, errno);
    Fd next(open_component(cur.fd, p, O_RDONLY | O_DIRECTORY, 0));
    if (next.fd < 0) fail_open(shown, errno);
    cur = std::move(next);
  }
  return DirHandle(cur.release(), shown);
}

bool DirHandle::stat(const fs::path& rel, struct stat& st) const {
  auto parts = components(rel, path_);
  if (parts.empty()) return ::fstat(fd_, &st) == 0;
  const std::string last = parts.back();
  parts.pop_back();
  Fd parent(open_beneath(fd_, parts, O_RDONLY | O_DIRECTORY, 0));
  if (parent.fd < 0) {
    if (errno == ENOENT) return false;
    fail_open(path_ / rel.parent_path(), errno);
  }
  return ::fstatat(parent.fd, last.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool DirHandle::exists(const fs::path& rel) const {
  struct stat st {};
  return stat(rel, st);
}

bool DirHandle::is_directory(const fs::path& rel) const {
  struct stat st {};
  return stat(rel, st) && S_ISDIR(st.st_mode);
}

std::string DirHandle::read(const fs::path& rel, std::uint64_t max_bytes) const {
  const fs::path where = path_ / rel;
  // O_NONBLOCK: a FIFO planted here opens at once (and is refused below) instead of
  // waiting for a writer.
  Fd f(open_beneath(fd_, components(rel, path_), O_RDONLY | O_NONBLOCK, 0));
  if (f.fd < 0) {
    if (errno == ENOENT) throw InputError(where.string() + ": no such file");
    fail_open(where, errno);
  }
  require_regular(f.fd, where);
  struct stat st {};
  (void)::fstat(f.fd, &st);
  SYNCSCOPE_INPUT_ERROR_IF(static_cast<std::uint64_t>(st.st_size) > max_bytes,
                           where.string() + ": holds " + std::to_string(st.st_size) + " bytes, more than the " +
                               std::to_string(max_bytes) + " syncscope writes there; is it the file it wrote?");
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw InputError(where.string() + ": read failed: " + std::strerror(errno));
    }
    SYNCSCOPE_INPUT_ERROR_IF(out.size() + static_cast<std::size_t>(n) > max_bytes,
                             where.string() + ": grew past " + std::to_string(max_bytes) + " bytes while read");
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void DirHandle::write(const fs::path& rel, std::string_view content, bool replace, unsigned mode) const {
  const fs::path where = path_ / rel;
  const fs::path name = rel.filename();
  SYNCSCOPE_INPUT_ERROR_IF(name.empty() || name == "." || name == "..", where.string() + ": not a file name");
  const DirHandle parent = rel.has_parent_path() ? sub(rel.parent_path(), true) : sub(".", false);
  struct stat st {};
  auto check_existing = [&] {
    if (::fstatat(parent.fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (S_ISLNK(st.st_mode))
      throw InputError(where.string() +
                       ": is a symbolic link: syncscope does not write through links inside the "
                       "directories it writes (nor replace what it did not write); remove it");
    if (!S_ISREG(st.st_mode)) {
      Fd probe(open_component(parent.fd_, name.string(), O_RDONLY | O_NONBLOCK, 0));
      if (probe.fd >= 0) require_regular(probe.fd, where);
      throw InputError(where.string() + ": is not a regular file; remove it");
    }
    SYNCSCOPE_INPUT_ERROR_IF(!replace, where.string() + ": already exists");
  };
  check_existing();
  std::random_device rd;
  const std::string tmp = "." + name.string() + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  Fd f(open_component(parent.fd_, tmp, O_WRONLY | O_CREAT | O_EXCL, static_cast<mode_t>(mode)));
  if (f.fd < 0) fail_open(parent.path_ / tmp, errno);
  TempFileGuard guard(parent.path_ / tmp);  // a signal removes it too (core/temp_files.hpp)
  auto unlink_tmp = [&] { ::unlinkat(parent.fd_, tmp.c_str(), 0); };
  int err = 0;
  for (std::size_t off = 0; off < content.size() && err == 0;) {
    const ssize_t w = ::write(f.fd, content.data() + off, content.size() - off);
    if (w < 0) {
      if (errno != EINTR) err = errno;
      continue;
    }
    off += static_cast<std::size_t>(w);
  }
  if (err == 0 && ::fsync(f.fd) != 0 && errno != EINVAL) err = errno;
  if (::close(f.release()) != 0 && err == 0) err = errno;
  if (err != 0) {
    unlink_tmp();
    throw Error(where.string() + ": write failed: " + std::strerror(err));  // disk full, a size limit: exit 1
  }
  if (mode != 0644) ::fchmodat(parent.fd_, tmp.c_str(), static_cast<mode_t>(mode), 0);
  try {
    check_existing();  // again: something may have been planted meanwhile
  } catch (...) {
    unlink_tmp();
    throw;
  }
  // renameat replaces the directory entry itself: a link planted after the check is
  // replaced, never followed.
  const int rc = replace ? ::renameat(parent.fd_, tmp.c_str(), parent.fd_, name.c_str())
                         : ::renameat2(parent.fd_, tmp.c_str(), parent.fd_, name.c_str(), RENAME_NOREPLACE);
  if (rc != 0) {
    const int e = errno;
    unlink_tmp();
    SYNCSCOPE_INPUT_ERROR_IF(e == EEXIST, where.string() + ": appeared while writing; not replaced");
    throw Error(where.string() + ": cannot rename the finished file into place: " + std::strerror(e));
  }
  guard.release();
}

int DirHandle::open_append(const fs::path& rel) const {
  const fs::path where = path_ / rel;
  if (rel.has_parent_path()) (void)sub(rel.parent_path(), true);
  Fd f(open_beneath(fd_, components(rel, path_), O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK, 0644));
  if (f.fd < 0) fail_open(where, errno);
  require_regular(f.fd, where);
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0) ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  return f.release();
}

void DirHandle::remove(const fs::path& rel) const {
  auto parts = components(rel, path_);
  SYNCSCOPE_THROW_IF(parts.empty(), path_.string() + ": a directory does not remove itself");
  const std::string last = parts.back();
  parts.pop_back();
  Fd parent(open_beneath(fd_, parts, O_RDONLY | O_DIRECTORY, 0));
  if (parent.fd < 0) {
    if (errno == ENOENT) return;
    fail_open(path_ / rel.parent_path(), errno);
  }
  remove_tree_at(parent.fd, last, path_ / rel);
}

std::vector<std::string> DirHandle::list(const fs::path& rel) const {
  std::vector<std::string> out;
  Fd d(open_beneath(fd_, components(rel, path_), O_RDONLY | O_DIRECTORY, 0));
  if (d.fd < 0) {
    if (errno == ENOENT) return out;
    fail_open(path_ / rel, errno);
  }
  DIR* dir = ::fdopendir(d.release());
  SYNCSCOPE_THROW_IF(dir == nullptr, (path_ / rel).string() + ": " + std::strerror(errno));
  while (const dirent* e = ::readdir(dir)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(dir);
  return out;
}

}  // namespace syncscope
