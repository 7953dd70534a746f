// One progress line per trace on stderr ("[3/8] qwen3-0.6b packing=cached ..."),
// rewritten in place on a terminal.
#pragma once

#include <cstddef>
#include <string>

namespace syncscope::pipeline {

class Progress {
 public:
  explicit Progress(std::size_t total);
  void begin(std::size_t index, const std::string& what);
  void done();
  ~Progress() { done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  bool tty_;
  std::size_t total_;
};

}  // namespace syncscope::pipeline
