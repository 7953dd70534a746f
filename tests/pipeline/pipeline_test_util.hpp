// Shared by tests/pipeline: a small dense scenario with the packing and offload fixes, quick
// to simulate (tiny.yaml; tests/reports/test_run_cli.cpp runs the same one through the CLI).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "syncscope/core/file_io.hpp"
#include "test_paths.hpp"

namespace syncscope::test {

// The scenario file's text (tests/pipeline/tiny.yaml).
inline std::string tiny_scenario() { return read_file(source_dir() / "tests/pipeline/tiny.yaml"); }

inline std::filesystem::path write_scenario(const std::filesystem::path& dir, const std::string& name,
                                            const std::string& text = tiny_scenario()) {
  const std::filesystem::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace syncscope::test
