// Writing the results directory atomically: everything goes to DIR.partial-XXXXXX next to
// DIR, which is renamed to DIR when complete. make_partial_dir and publish are one unit
// (the output-directory rules live there).
#pragma once

#include <filesystem>

namespace syncscope::pipeline {

// Creates DIR.partial-XXXXXX next to DIR (with traces/ in it).
std::filesystem::path make_partial_dir(const std::filesystem::path& dir);
// Moves the finished partial directory to DIR, replacing an old DIR only with --force.
void publish(const std::filesystem::path& partial, const std::filesystem::path& dir, bool force);

// A run that stops half-way: the partial directory keeps the complete files written so
// far (each written atomically), or goes away when there are none.
struct PartialDirGuard {
  std::filesystem::path dir;
  bool published = false;
  ~PartialDirGuard();
};

}  // namespace syncscope::pipeline
