#include "syncscope/core/temp_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace syncscope {

namespace fs = std::filesystem;

namespace {

// Fixed slots, so the signal handler touches no allocator: it only reads a path and calls
// unlink(2), both async-signal-safe (signal-safety(7)).
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> used{false};
  char path[kPathMax];
};
Slot g_slots[kSlots];
std::once_flag g_install;
std::mutex g_mutex;
const int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int sig) {
  for (auto& s : g_slots)
    if (s.used.load()) ::unlink(s.path);
  // End the process by the same signal, as if we had not caught it (the shell's status
  // says 130 for Ctrl-C, 143 for SIGTERM).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install() {
  for (int sig : kSignals) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    // Only where nobody else handles it (a command that forwards signals keeps its own
    // handler, and an ignored SIGHUP stays ignored under nohup).
    if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

TempFileGuard::TempFileGuard(const fs::path& path) : path_(path.string()) {
  std::call_once(g_install, install);
  if (path_.size() >= kPathMax) return;       // not registered: removed by its owner or the next run
  std::lock_guard<std::mutex> lock(g_mutex);  // registration only; the handler takes no lock
  for (int i = 0; i < kSlots; ++i) {
    if (g_slots[i].used.load()) continue;
    std::memcpy(g_slots[i].path, path_.c_str(), path_.size() + 1);
    g_slots[i].used.store(true);  // published after the path is complete
    slot_ = i;
    return;
  }
}

TempFileGuard::~TempFileGuard() {
  if (slot_ >= 0) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_slots[slot_].used = false;
  }
  if (!released_) ::unlink(path_.c_str());
}

void TempFileGuard::release() { released_ = true; }

std::vector<fs::path> remove_stale_temp_files(const fs::path& dir, std::string_view prefix, char sep) {
  std::vector<fs::path> removed;
  DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (!d) return removed;
  const int dfd = ::dirfd(d);
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    const std::string_view rest = name.substr(prefix.size());
    const auto end = rest.find(sep);
    if (end == 0 || end == std::string_view::npos || end > 9) continue;
    long pid = 0;
    bool digits = true;
    for (char c : rest.substr(0, end)) {
      if (c < '0' || c > '9') digits = false;
      pid = pid * 10 + (c - '0');
    }
    if (!digits || pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    struct stat st {};
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::getuid())
      continue;
    if (::unlinkat(dfd, e->d_name, 0) == 0) removed.push_back(dir / std::string(name));
  }
  ::closedir(d);
  return removed;
}

}  // namespace syncscope
