// Temporary files syncscope makes (an output's `.NAME.tmpPID-N` before its rename, the
// `syncscope-input-PID-XXXXXX` spool of a piped Nsight Systems export) are removed on every
// exit path we control: by their owner's destructor on return and on exceptions,
// and by a signal handler on SIGINT, SIGTERM and SIGHUP, which then ends the process by the
// same signal. Those left by a process that was killed outright (SIGKILL, a power cut) carry
// its pid in the name and are removed by the next run that looks in the same place.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace syncscope {

// Registers `path` for removal should a signal end the process; unregisters on destruction
// and removes the file unless release() was called (it was renamed into place).
class TempFileGuard {
 public:
  explicit TempFileGuard(const std::filesystem::path& path);
  ~TempFileGuard();
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  void release();

 private:
  int slot_ = -1;
  std::string path_;
  bool released_ = false;
};

// Removes regular files in `dir` named `prefix` + PID + `sep`..., owned by this user, whose
// process is gone (kill(PID, 0) says no such process). Returns what was removed.
std::vector<std::filesystem::path> remove_stale_temp_files(const std::filesystem::path& dir, std::string_view prefix,
                                                           char sep = '-');

}  // namespace syncscope
