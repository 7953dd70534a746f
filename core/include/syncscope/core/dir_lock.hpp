// One writer per output directory: an flock(2) on DIR/.syncscope-lock, a file inside it
// opened beneath DIR's descriptor (a link planted there is refused, never followed).
//
// The exclusive holder writes "pid N host H since T" into the file and empties it when it
// lets go, so a second writer is told who holds the directory (exit 2), and a lock file that
// is not empty when its lock is free was left by a writer that died (the kernel releases an
// flock with its process): taken over, and said. Shared holders (a sweep's tasks) write
// nothing; they keep an exclusive writer (`sweep --force`) out while they run, and empty a
// dead exclusive writer's text (said, as a takeover).
//
// What it does not promise: flock on NFS is emulated with POSIX byte-range locks (Linux
// >= 2.6.12, nfs(5) "local_lock"), and a file system without locks makes open or flock
// fail (said as such, exit 1).
#pragma once

#include <functional>
#include <string>

#include "syncscope/core/dir_handle.hpp"

namespace syncscope {

inline constexpr const char* kDirLockFile = ".syncscope-lock";

class DirLock {
 public:
  enum class Mode { Exclusive, Shared };
  // Takes the lock of the directory `dir` (which must exist). Exclusive: at once or
  // InputError naming the holder; Shared: waits up to `wait_seconds` for an exclusive holder
  // to finish, then InputError. `what` names the directory's kind in messages ("sweep").
  // `say` receives "took over the lock of pid N on H (no longer running)" lines.
  static DirLock take(const DirHandle& dir, Mode mode, const std::string& what,
                      const std::function<void(const std::string&)>& say, int wait_seconds = 0);
  DirLock(DirLock&& other) noexcept;
  DirLock& operator=(DirLock&&) = delete;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

 private:
  DirLock(int fd, Mode mode) : fd_(fd), mode_(mode) {}
  int fd_ = -1;
  Mode mode_ = Mode::Exclusive;
};

}  // namespace syncscope
