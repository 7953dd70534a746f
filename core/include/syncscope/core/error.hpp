// Errors carry where they were raised and what was being done, so a message a user sees
// names the file, the position and the fix. Library and CLI code throw; only the injected
// tracer logs and continues.
#pragma once

#include <stdexcept>
#include <string>

namespace syncscope {

// Where an error was raised. std::source_location would do, but clang 14 (Debian's, used
// for the libFuzzer build) cannot compile libstdc++ 12's <source_location>; the builtins
// behind it work in both compilers.
struct SourceLocation {
  const char* file = "";
  unsigned line = 0;
  static constexpr SourceLocation current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    return SourceLocation{file, line};
  }
};

class Error : public std::runtime_error {
 public:
  Error(std::string message, SourceLocation where = SourceLocation::current());
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
  CudaError(std::string message, int code, SourceLocation where = SourceLocation::current());
  int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace syncscope

#define SYNCSCOPE_THROW_IF(cond, msg)                     \
  do {                                                    \
    if (cond) throw ::syncscope::Error(std::string(msg)); \
  } while (0)

#define SYNCSCOPE_INPUT_ERROR_IF(cond, msg)                    \
  do {                                                         \
    if (cond) throw ::syncscope::InputError(std::string(msg)); \
  } while (0)
