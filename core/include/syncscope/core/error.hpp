// Errors carry where they were raised and what was being done, so a message a user sees
// names the file, the position and the fix. Library and CLI code throw; only the injected
// tracer logs and continues.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace syncscope {

class Error : public std::runtime_error {
 public:
  Error(std::string message, std::source_location where = std::source_location::current());
  const char* file() const noexcept { return file_; }
  unsigned line() const noexcept { return line_; }

 private:
  const char* file_;
  unsigned line_;
};

// Bad user input (a malformed trace, scenario or option): the CLI reports it on one line
// and exits with status 2. `what()` is already the whole user-facing message.
class InputError : public Error {
 public:
  using Error::Error;
};

// A CUDA or CUPTI call failed.
class CudaError : public Error {
 public:
  CudaError(std::string message, int code, std::source_location where = std::source_location::current());
  int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace syncscope

#define SYNCSCOPE_THROW_IF(cond, msg)                                  \
  do {                                                                 \
    if (cond) throw ::syncscope::Error(std::string(msg));              \
  } while (0)

#define SYNCSCOPE_INPUT_ERROR_IF(cond, msg)                            \
  do {                                                                 \
    if (cond) throw ::syncscope::InputError(std::string(msg));         \
  } while (0)
