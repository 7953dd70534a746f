// Nsight Systems exports for the tests, built from the SQL scripts in tests/fixtures/nsys
// through the SQLite C API (not the sqlite3 CLI), into a file or an in-memory image.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "syncscope/core/units.hpp"
#include "test_paths.hpp"

namespace syncscope::test {

inline std::string nsys_sql(const std::string& name) {
  std::ifstream in(fixture("nsys/" + name + ".sql"), std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture tests/fixtures/nsys/" + name + ".sql");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the fixture's SQL, then `extra_sql` (a variation: rows changed, tables dropped),
// into a new database file `out`.
inline void build_export(const std::string& name, const std::filesystem::path& out, const std::string& extra_sql = "") {
  std::filesystem::remove(out);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(out.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
    throw std::runtime_error("cannot create " + out.string());
  char* err = nullptr;
  // One transaction, no journal, no fsync: a fixture is rebuilt for every test.
  const std::string sql =
      "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;\n" + nsys_sql(name) + "\n" + extra_sql + "\nCOMMIT;";
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error(name + ".sql: " + msg);
}

inline std::filesystem::path build_export(const TempDir& dir, const std::string& name,
                                          const std::string& extra_sql = "") {
  const auto path = dir / (name + ".sqlite");
  build_export(name, path, extra_sql);
  return path;
}

inline std::string slurp_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fixture's session start (TARGET_INFO_SESSION_START_TIME.utcEpochNs) in the modern
// fixtures: trace times are this plus the session time.
inline constexpr Ns kSessionUtc = 1732924800000000000;

}  // namespace syncscope::test
