// The one way a command's text result leaves: stdout, or --output written atomically (a
// temporary file renamed over it; core/file_io.hpp) with a line on stderr naming it.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope::cli {

void emit_output(const std::string& output, bool force, const std::string& text) {
  if (output.empty()) {
    std::cout << text << std::flush;
    return;
  }
  write_file_atomic(output, text, force);
  std::fprintf(stderr, "syncscope: wrote %s\n", printable(output).c_str());
}

}  // namespace syncscope::cli
