#include "sqlite_db.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "syncscope/core/error.hpp"

namespace syncscope::nsys_detail {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic{"SQLite format 3\0", 16};
constexpr std::string_view kReexport = "; re-export the report with `nsys export --type sqlite REPORT.nsys-rep`";

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

// The database header (first 100 bytes; https://www.sqlite.org/fileformat2.html, "The
// Database Header"): the page size at offset 16 (big-endian; 1 means 65536) and the
// in-header database size in pages at offset 28, valid when the change counter at offset 24
// equals the version-valid-for number at offset 92. A file shorter than that size was cut
// off (an interrupted copy or download): say so before SQLite reports it as "malformed".
void check_header(const unsigned char* h, std::size_t have, std::uint64_t file_size, const std::string& name) {
  if (have < 100)
    throw InputError(name + ": truncated SQLite database: " + std::to_string(file_size) +
                     " bytes, shorter than the 100-byte SQLite header" + std::string(kReexport));
  const std::uint32_t raw_page = (std::uint32_t{h[16]} << 8) | h[17];
  const std::uint32_t page = raw_page == 1 ? 65536u : raw_page;
  if (page < 512 || page > 65536 || (page & (page - 1)) != 0)
    throw InputError(name + ": corrupt SQLite header: page size " + std::to_string(raw_page) +
                     " is not a power of two between 512 and 65536" + std::string(kReexport));
  const std::uint32_t pages = be32(h + 28);
  if (pages > 0 && be32(h + 24) == be32(h + 92)) {
    const std::uint64_t expected = std::uint64_t{pages} * page;
    if (expected > file_size)
      throw InputError(name + ": truncated SQLite database: its header says " + std::to_string(expected) + " bytes (" +
                       std::to_string(pages) + " pages of " + std::to_string(page) + "), the file has " +
                       std::to_string(file_size) + "; the copy is incomplete" + std::string(kReexport));
  }
}

// SQLite locks a database with POSIX advisory locks on fixed bytes at offset 1 GiB (the
// "pending byte" 0x40000000, the reserved byte after it, then 510 shared bytes; SQLite's
// os_unix.c and https://www.sqlite.org/lockingv3.html). A write lock there means another
// process is writing the file (nsys export still running): reading it now would give a
// half-written database. Read-only immutable access would not notice, so ask the kernel.
// Returns the writer's pid, 0 when none (or when the file system cannot tell).
long writer_lock_pid(int fd) {
  struct flock probe {};
  probe.l_type = F_RDLCK;  // conflicts only with write locks: RESERVED, PENDING, EXCLUSIVE
  probe.l_whence = SEEK_SET;
  probe.l_start = 0x40000000;
  probe.l_len = 512;
  if (::fcntl(fd, F_GETLK, &probe) != 0) return 0;
  return probe.l_type == F_UNLCK ? 0 : static_cast<long>(probe.l_pid > 0 ? probe.l_pid : 1);
}

// file: URI of an absolute path: '%', '?' and '#' and bytes outside printable ASCII are
// percent-encoded (https://www.sqlite.org/uri.html).
std::string file_uri(const fs::path& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = path;
  std::string uri = "file://";
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : abs.string()) {
    if (c == '%' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7f) {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?mode=ro&immutable=1";
}

std::string describe(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT: return "corrupt database";
    case SQLITE_NOTADB: return "not a SQLite database, or an encrypted one";
    case SQLITE_IOERR: return "read error";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "database is locked";
    case SQLITE_CANTOPEN: return "cannot open the database";
    case SQLITE_PERM:
    case SQLITE_AUTH: return "permission denied";
    case SQLITE_FULL: return "disk full";
    case SQLITE_RANGE:
    case SQLITE_FORMAT:
    case SQLITE_SCHEMA:
    case SQLITE_ERROR: return "unexpected database layout";
    default: return "SQLite error";
  }
}

}  // namespace

bool has_sqlite_magic(std::string_view head) { return head.size() >= kMagic.size() && head.substr(0, 16) == kMagic; }

Db::Db(sqlite3* db, std::string name) : db_(db), name_(std::move(name)) {}

Db::~Db() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Db::Db(Db&& other) noexcept
    : db_(other.db_),
      name_(std::move(other.name_)),
      image_(std::move(other.image_)),
      tables_(std::move(other.tables_)),
      warnings_(std::move(other.warnings_)),
      size_bytes_(other.size_bytes_) {
  other.db_ = nullptr;
}

void Db::fail(int rc, std::string_view what) const {
  std::string msg = name_ + ": " + describe(rc);
  const char* detail = db_ != nullptr ? sqlite3_errmsg(db_) : nullptr;
  if (detail != nullptr && *detail != '\0') msg += std::string(" (") + sqlite3_errstr(rc) + ": " + detail + ")";
  if (!what.empty()) msg += std::string(" while ") + std::string(what);
  if ((rc & 0xff) == SQLITE_NOMEM) throw Error(msg);  // not the input's fault
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
    throw InputError(msg + "; another process is writing it: wait until it has finished");
  throw InputError(msg + std::string(kReexport));
}

Db Db::open_file(const fs::path& path, std::string name) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!fs::exists(st)) throw InputError(name + ": no such file");
  if (fs::is_directory(st)) throw InputError(name + ": is a directory, expected a trace file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(name + ": cannot open for reading: " + std::strerror(errno));
  struct stat sb {};
  unsigned char header[100] = {};
  std::size_t have = 0;
  bool read_failed = false;
  if (::fstat(fd, &sb) == 0) {
    while (have < sizeof header) {
      const ssize_t n = ::pread(fd, header + have, sizeof header - have, static_cast<off_t>(have));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) read_failed = true;
      if (n <= 0) break;
      have += static_cast<std::size_t>(n);
    }
  } else {
    read_failed = true;
  }
  const int read_errno = errno;
  const long writer = read_failed ? 0 : writer_lock_pid(fd);
  ::close(fd);
  if (read_failed) throw InputError(name + ": read error: " + std::strerror(read_errno));
  if (!has_sqlite_magic(std::string_view(reinterpret_cast<const char*>(header), have)))
    throw InputError(name + ": not a SQLite database (no \"SQLite format 3\" header)");
  check_header(header, have, static_cast<std::uint64_t>(sb.st_size), name);
  if (writer != 0)
    throw InputError(name + ": database is locked: process " + std::to_string(writer) +
                     " holds a write lock on it (nsys export still running?); wait until it has finished");

  sqlite3* raw = nullptr;
  const std::string uri = file_uri(path);
  const int rc =
      sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw, std::move(name));
  if (rc != SQLITE_OK) db.fail(rc, "opening it");
  db.size_bytes_ = static_cast<std::uint64_t>(sb.st_size);
  // Immutable mode reads neither of these: what they hold is not in the export we read.
  for (const char* side : {"-journal", "-wal"}) {
    const fs::path p = path.string() + side;
    std::error_code e2;
    if (fs::is_regular_file(p, e2) && fs::file_size(p, e2) > 0)
      db.warnings_.push_back(db.name_ + ": " + p.filename().string() +
                             " exists beside it: a write to the database was interrupted or is in progress, and "
                             "what that file holds was not read");
  }
  db.configure_and_list_tables();
  return db;
}

Db Db::open_memory(std::string_view image, std::string name) {
  if (!has_sqlite_magic(image)) throw InputError(name + ": not a SQLite database (no \"SQLite format 3\" header)");
  check_header(reinterpret_cast<const unsigned char*>(image.data()), image.size(), image.size(), name);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw, std::move(name));
  if (rc != SQLITE_OK) db.fail(rc, "opening it");
  db.size_bytes_ = image.size();
  db.image_ = std::make_unique<unsigned char[]>(image.size());
  std::memcpy(db.image_.get(), image.data(), image.size());
  const auto size = static_cast<sqlite3_int64>(image.size());
  const int drc = sqlite3_deserialize(db.db_, "main", db.image_.get(), size, size, SQLITE_DESERIALIZE_READONLY);
  if (drc != SQLITE_OK) db.fail(drc, "loading it");
  db.configure_and_list_tables();
  return db;
}

void Db::configure_and_list_tables() {
  // A file is data, not code: no triggers, views or functions from its schema run with our
  // privileges, and SQL cannot deliberately corrupt it (https://www.sqlite.org/security.html).
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  Stmt s = prepare("SELECT name FROM sqlite_master WHERE type = 'table'", "listing its tables");
  while (s.step()) tables_.emplace(s.text(0));
}

std::vector<std::string> Db::columns(const std::string& table) const {
  std::vector<std::string> out;
  if (!has_table(table)) return out;
  // table_info's second column is the name. The table name comes from sqlite_master, so it
  // is quoted as an identifier rather than trusted.
  std::string quoted = "\"";
  for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  Stmt s = prepare("PRAGMA table_info(" + quoted + "\")", "reading the columns of " + table);
  while (s.step()) out.emplace_back(s.text(1));
  return out;
}

Stmt Db::prepare(const std::string& sql, std::string_view what) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    fail(rc, what);
  }
  return Stmt(*this, stmt, std::string(what));
}

Stmt::~Stmt() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Stmt::Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_), what_(std::move(other.what_)) {
  other.stmt_ = nullptr;
}

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(rc, what_);
}

void Stmt::reset() { sqlite3_reset(stmt_); }

bool Stmt::integer_row(std::initializer_list<int> text_cols) const {
  const int n = sqlite3_column_count(stmt_);
  for (int c = 0; c < n; ++c) {
    const int t = sqlite3_column_type(stmt_, c);
    if (t != SQLITE_TEXT && t != SQLITE_BLOB) continue;
    if (std::find(text_cols.begin(), text_cols.end(), c) == text_cols.end()) return false;
  }
  return true;
}

void Stmt::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_->fail(rc, what_);
}

std::string_view Stmt::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))};
}

}  // namespace syncscope::nsys_detail
