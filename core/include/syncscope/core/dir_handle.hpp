// One rule for every file syncscope writes into, reads from or removes under a directory it
// did not just create (a sweep, a rank analysis, a results directory): the
// directory is opened once, and every path under it is resolved relative to that
// descriptor without following a symbolic link, never leaving it. Linux's openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does this in the kernel (Linux >= 5.6, openat2(2));
// elsewhere each component is opened with O_NOFOLLOW, which refuses a link the same way.
//
// What is not a regular file where one is expected (a FIFO, a device, a socket, a link, a
// directory) is InputError (exit 2) naming it; FIFOs are opened with O_NONBLOCK, then
// checked with fstat, so a planted FIFO never blocks. A write that fails (disk full, a file
// size limit) is Error (exit 1) with the OS's reason.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace syncscope {

class DirHandle {
 public:
  // Opens `dir` as a directory; `dir` itself may be reached through a link (the user named
  // it). With `create`, missing directories on the way are created first.
  static DirHandle open(const std::filesystem::path& dir, bool create = false);

  DirHandle(DirHandle&& other) noexcept;
  DirHandle& operator=(DirHandle&& other) noexcept;
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  ~DirHandle();

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return fd_; }

  // The directory `rel` beneath this one, each component a real directory (created when
  // missing and `create`). InputError naming it when a component is a link or not a directory.
  DirHandle sub(const std::filesystem::path& rel, bool create) const;

  // lstat of `rel` beneath (a final link is described, not followed). False when nothing is
  // there; InputError when a directory on the way is a link.
  bool stat(const std::filesystem::path& rel, struct stat& st) const;
  bool exists(const std::filesystem::path& rel) const;
  bool is_directory(const std::filesystem::path& rel) const;  // a real directory, not a link to one

  // The content of the regular file `rel` (at most max_bytes). InputError when it is missing,
  // a link, a FIFO, a device or too large.
  std::string read(const std::filesystem::path& rel, std::uint64_t max_bytes = std::uint64_t{1} << 30) const;

  // Writes `rel` (its directories created beneath) through a temporary file renamed over
  // it: readers see the old or the new content. An existing regular file is replaced when
  // `replace`; anything else there (a link, a FIFO, a directory) is InputError naming it.
  void write(const std::filesystem::path& rel, std::string_view content, bool replace = true,
             unsigned mode = 0644) const;

  // Opens `rel` for appending (created when missing): a regular file only. The caller
  // closes the descriptor.
  int open_append(const std::filesystem::path& rel) const;

  // Removes the entry `rel` itself (a link is removed, never its target); a directory with
  // everything in it, walked without following links. Nothing there: no error.
  void remove(const std::filesystem::path& rel) const;

  // Names in the directory `rel` beneath ("." and ".." left out), unsorted.
  std::vector<std::string> list(const std::filesystem::path& rel = ".") const;

 private:
  DirHandle(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::filesystem::path path_;
};

// For tests: resolve without openat2, as on a kernel before 5.6 (the component walk).
void dir_handle_force_component_walk(bool on);

}  // namespace syncscope
