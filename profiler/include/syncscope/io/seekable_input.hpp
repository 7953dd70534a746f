// A trace path that readers can seek in. SQLite reads a database at arbitrary offsets, so a
// pipe, FIFO or character device (`syncscope analyze /dev/stdin < report.sqlite`, `<(...)`)
// is first copied to a temporary file (0600, in the system temp directory, removed when this
// object dies). Regular files are used in place, and anything that does not exist or is a
// directory is passed on for the reader to report.
#pragma once

#include <filesystem>

namespace syncscope {

class SeekableInput {
 public:
  // Throws InputError naming the input when it cannot be read or copied (e.g. a full disk).
  explicit SeekableInput(const std::filesystem::path& path);
  ~SeekableInput();
  SeekableInput(const SeekableInput&) = delete;
  SeekableInput& operator=(const SeekableInput&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool copied() const { return copied_; }

 private:
  std::filesystem::path path_;
  bool copied_ = false;
};

}  // namespace syncscope
