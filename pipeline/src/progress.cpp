#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace syncscope::pipeline {

Progress::Progress(std::size_t total) : tty_(::isatty(STDERR_FILENO) == 1), total_(total) {}

void Progress::begin(std::size_t index, const std::string& what) {
  const std::string line = fmt::format("[{}/{}] {} ...", index + 1, total_, what);
  if (tty_) {
    std::fprintf(stderr, "\r\033[2K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void Progress::done() {
  if (tty_) std::fprintf(stderr, "\r\033[2K");
  std::fflush(stderr);
}

}  // namespace syncscope::pipeline
