#pragma once

#include <filesystem>
#include <string>

#include <unistd.h>

// In a test that runs the build's `syncscope` executable: skips (reported skipped) in a build
// without it (SYNCSCOPE_ENABLE_CLI=OFF, the `asan` preset), where tests/CMakeLists.txt defines
// SYNCSCOPE_HAVE_CLI as 0. Needs <gtest/gtest.h>.
#ifndef SYNCSCOPE_HAVE_CLI
#define SYNCSCOPE_HAVE_CLI 1
#endif
#define SYNCSCOPE_SKIP_WITHOUT_CLI()                                                                             \
  do {                                                                                                           \
    if (!SYNCSCOPE_HAVE_CLI) GTEST_SKIP() << "no syncscope executable in this build (SYNCSCOPE_ENABLE_CLI=OFF)"; \
  } while (0)

namespace syncscope::test {

inline std::filesystem::path source_dir() { return SYNCSCOPE_SOURCE_DIR; }
inline std::filesystem::path fixture(const std::string& rel) { return source_dir() / "tests" / "fixtures" / rel; }

// A fresh, empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "syncscope-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace syncscope::test
