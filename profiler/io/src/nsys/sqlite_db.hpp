// A read-only SQLite connection to one Nsight Systems export, and the statements run on it.
// Every SQLite failure becomes an InputError that names the file, what was being read and
// the fix; the database file is never written (SQLITE_OPEN_READONLY with the URI parameters
// mode=ro&immutable=1: SQLite takes no locks, reads no journal or WAL, creates no file).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace syncscope::nsys_detail {

class Stmt;

class Db {
 public:
  // Checks the file before SQLite sees it (exists, readable, a SQLite header, not truncated
  // according to that header, no other process holding a write lock on it), then opens it.
  // `name` is what messages call the file.
  static Db open_file(const std::filesystem::path& path, std::string name);
  // A database image in memory (sqlite3_deserialize, read-only): tests and the fuzzer.
  static Db open_memory(std::string_view image, std::string name);

  ~Db();
  Db(Db&& other) noexcept;
  Db& operator=(Db&&) = delete;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  const std::string& name() const { return name_; }
  // The database's size in bytes (file or image): what any count read from it must fit in.
  std::uint64_t size_bytes() const { return size_bytes_; }
  // Tables (not views: a view named like an nsys table is not one) present in the file.
  bool has_table(std::string_view table) const { return tables_.count(std::string(table)) > 0; }
  const std::set<std::string>& tables() const { return tables_; }
  // Column names of a table, in order (PRAGMA table_info); empty when the table is missing.
  std::vector<std::string> columns(const std::string& table) const;
  // `what` names the reading step in errors ("reading CUPTI_ACTIVITY_KIND_KERNEL").
  Stmt prepare(const std::string& sql, std::string_view what) const;
  [[noreturn]] void fail(int rc, std::string_view what) const;

  // Warnings found while opening (a rollback journal or WAL beside the file).
  const std::vector<std::string>& open_warnings() const { return warnings_; }

 private:
  Db(sqlite3* db, std::string name);
  void configure_and_list_tables();

  sqlite3* db_ = nullptr;
  std::string name_;
  std::unique_ptr<unsigned char[]> image_;  // open_memory's copy; SQLite reads it in place
  std::set<std::string> tables_;
  std::vector<std::string> warnings_;
  std::uint64_t size_bytes_ = 0;
};

class Stmt {
 public:
  Stmt(const Db& db, sqlite3_stmt* stmt, std::string what) : db_(&db), stmt_(stmt), what_(std::move(what)) {}
  ~Stmt();
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&&) = delete;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Advances to the next row: true when there is one; throws InputError on any failure.
  bool step();
  void reset();
  void bind(int index, std::int64_t value);

  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  // False when a column other than `text_cols` holds text or a blob: i64() would read it as
  // 0 (or a prefix's number), and a row of wrong numbers is worse than a skipped one.
  bool integer_row(std::initializer_list<int> text_cols = {}) const;
  std::int64_t i64(int col) const { return sqlite3_column_int64(stmt_, col); }
  // Text of a column (empty for NULL); valid until the next step().
  std::string_view text(int col) const;

 private:
  const Db* db_;
  sqlite3_stmt* stmt_;
  std::string what_;
};

// True when the bytes start with SQLite's 16-byte header string "SQLite format 3\0".
bool has_sqlite_magic(std::string_view head);

}  // namespace syncscope::nsys_detail
