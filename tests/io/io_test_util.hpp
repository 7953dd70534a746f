// Helpers shared by the io tests.
#pragma once

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.hpp"

namespace syncscope::test {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

inline void spit(const std::filesystem::path& p, std::string_view data) {
  std::ofstream out(p, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// gzip-compresses `data` into `p` (whatever its name).
inline void spit_gz(const std::filesystem::path& p, std::string_view data) {
  gzFile f = gzopen(p.c_str(), "wb6");
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  gzclose(f);
}

inline std::string gunzip(const std::filesystem::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

inline std::filesystem::path torch_fixture() { return fixture("torch/item_loop_l8_h200.json.gz"); }
inline std::filesystem::path trace_fixture(const std::string& name) { return fixture("traces/" + name); }

}  // namespace syncscope::test
