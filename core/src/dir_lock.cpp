#include "syncscope/core/dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"

namespace syncscope {

namespace {

std::string read_all(int fd) {
  std::string s;
  char buf[512];
  off_t at = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0 || s.size() > 4096) break;
    s.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string this_host() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0) return "?";
  return h;
}

}  // namespace

DirLock DirLock::take(const DirHandle& dir, Mode mode, const std::string& what,
                      const std::function<void(const std::string&)>& say, int wait_seconds) {
  const std::string name = (dir.path() / kDirLockFile).string();
  int fd = -1;
  do {
    fd = ::openat(dir.fd(), kDirLockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    SYNCSCOPE_INPUT_ERROR_IF(err == ELOOP, name + ": is a symbolic link; the lock of a " + what +
                                               " directory is a file syncscope makes: remove the link");
    throw Error(name + ": cannot open the " + what + " directory's lock: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(name + ": is not a regular file; the lock of a " + what + " directory is a file syncscope makes");
  }
  const int op = mode == Mode::Exclusive ? LOCK_EX : LOCK_SH;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(wait_seconds);
  for (;;) {
    if (::flock(fd, op | LOCK_NB) == 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK) {
      ::close(fd);
      throw Error(name + ": cannot lock the " + what + " directory: " + std::strerror(err));
    }
    if (std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    std::string holder = read_all(fd);
    ::close(fd);
    if (holder.empty()) holder = "its running tasks (job sweep-task / rank-part)";
    throw InputError(dir.path().string() + ": another syncscope is writing this " + what + " directory (" +
                     printable(holder) +
                     "); two writers in one directory would overwrite each other's results: wait until it "
                     "ends (or stop it), then run again, or choose another --out");
  }
  // Text in a lock we now hold was left by an exclusive writer that died (a live one holds
  // its flock, and empties the file before it lets go): taken over, and said, in both modes.
  const std::string left = read_all(fd);
  if (!left.empty() && say)
    say("took over the lock of " + printable(left) + " (it is no longer running; the kernel released its lock)");
  if (mode == Mode::Shared && !left.empty()) (void)::ftruncate(fd, 0);  // no exclusive holder can be meanwhile
  if (mode == Mode::Exclusive) {
    const std::string me =
        "pid " + std::to_string(::getpid()) + " on host " + this_host() + " since " + utc_now_iso8601() + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
      // The lock holds without its text: a second writer is still refused, without a pid.
    }
  }
  return DirLock(fd, mode);
}

DirLock::DirLock(DirLock&& other) noexcept : fd_(other.fd_), mode_(other.mode_) { other.fd_ = -1; }

DirLock::~DirLock() {
  if (fd_ < 0) return;
  if (mode_ == Mode::Exclusive) (void)::ftruncate(fd_, 0);  // let go cleanly: nothing to take over
  ::close(fd_);
}

}  // namespace syncscope
