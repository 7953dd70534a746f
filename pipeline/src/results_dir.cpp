// The results directory written atomically (results_dir.hpp). make_partial_dir and publish
// are moved here unchanged from cli/cmd_run.cpp, as one unit.
#include "syncscope/pipeline/results_dir.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include "syncscope/core/error.hpp"

namespace syncscope::pipeline {

namespace fs = std::filesystem;

// Creates DIR.partial-XXXXXX next to DIR.
fs::path make_partial_dir(const fs::path& dir) {
  fs::path parent = dir.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw Error(fmt::format("cannot create {}: {}", parent.string(), ec.message()));
  std::string tmpl = (parent / (dir.filename().string() + ".partial-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw Error(fmt::format("cannot create a directory next to {}", dir.string()));
  // mkdtemp makes it private (0700); results are meant to be shared like any new directory.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmpl.c_str(), 0777 & ~mask);
  fs::create_directories(fs::path(tmpl) / "traces");
  return tmpl;
}

// Moves the finished partial directory to DIR, replacing an old DIR only with --force.
void publish(const fs::path& partial, const fs::path& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!force) throw InputError(fmt::format("{} exists (created meanwhile?): use --force to replace it", dir.string()));
    fs::path old = dir;
    old += ".old-" + partial.filename().string().substr(partial.filename().string().rfind('-') + 1);
    fs::rename(dir, old, ec);
    if (ec) throw Error(fmt::format("cannot move {} aside: {}", dir.string(), ec.message()));
    fs::rename(partial, dir, ec);
    if (ec) throw Error(fmt::format("cannot rename {} to {}: {}", partial.string(), dir.string(), ec.message()));
    fs::remove_all(old, ec);
    return;
  }
  fs::rename(partial, dir, ec);
  if (ec) throw Error(fmt::format("cannot rename {} to {}: {}", partial.string(), dir.string(), ec.message()));
}

PartialDirGuard::~PartialDirGuard() {
  if (published || dir.empty()) return;
  std::error_code ec;
  bool any_file = false;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    any_file |= it->is_regular_file(ec);
  if (!any_file) {
    fs::remove_all(dir, ec);
  } else {
    std::fprintf(stderr, "syncscope run: stopped; the complete files written so far are in %s\n", dir.c_str());
  }
}

}  // namespace syncscope::pipeline
