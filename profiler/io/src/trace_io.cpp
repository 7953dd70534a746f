#include "syncscope/io/trace_io.hpp"

#include <fcntl.h>
#include <unistd.h>
#include "byte_source.hpp"
#include "chrome_reader.hpp"

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "syncscope/core/error.hpp"
#include "syncscope/core/temp_files.hpp"
#include "syncscope/io/nsys_sqlite.hpp"

namespace syncscope {
namespace {

// A compact binary form (.sstrace) was considered and left out: see bench/trace_io/README.md
// for the measurements that decided it.
[[noreturn]] void no_binary(const std::string& name) {
  throw InputError(name +
                   ": the binary trace format (.sstrace) is not supported by this build; "
                   "use Chrome trace JSON (.json or .json.gz)");
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// SQLite reads a database at arbitrary offsets: an export arriving through a pipe, FIFO or
// standard input is spooled from the handle already opened (its first bytes included) to a
// temporary file (0600, a fresh name, removed when done).
class SpooledCopy {
 public:
  SpooledCopy(io_detail::ByteSource& source, const std::string& name) {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    // Spools of processes killed outright (SIGKILL) carry their pid: removed here once gone.
    remove_stale_temp_files(dir, "syncscope-input-");
    path_ = (dir / ("syncscope-input-" + std::to_string(::getpid()) + "-XXXXXX")).string();
    const int fd = ::mkstemp(path_.data());
    if (fd >= 0) guard_.emplace(path_);  // removed on SIGINT, SIGTERM and SIGHUP too
    if (fd < 0)
      throw InputError(name + ": cannot create a temporary copy in " + dir.string() +
                       " (SQLite needs to seek): " + std::strerror(errno) + "; write the input to a file first");
    std::vector<char> buf(std::size_t{1} << 20);
    const char* failed = nullptr;
    int err = 0;
    try {
      for (std::size_t n; failed == nullptr && (n = source.read(buf.data(), buf.size())) > 0;) {
        for (const char* p = buf.data(); n > 0;) {
          const ssize_t w = ::write(fd, p, n);
          if (w < 0 && errno == EINTR) continue;
          if (w <= 0) {
            err = errno;
            failed = "cannot write the temporary copy";
            break;
          }
          p += w;
          n -= static_cast<std::size_t>(w);
        }
      }
    } catch (...) {
      ::close(fd);
      ::unlink(path_.c_str());
      throw;
    }
    if (::close(fd) != 0 && failed == nullptr) {
      err = errno;
      failed = "cannot write the temporary copy";
    }
    if (failed != nullptr) {
      ::unlink(path_.c_str());
      throw InputError(name + ": " + failed + " (" + path_ + "): " + std::strerror(err) +
                       "; write the input to a file first");
    }
  }
  ~SpooledCopy() { ::unlink(path_.c_str()); }  // guard_ unregisters it
  SpooledCopy(const SpooledCopy&) = delete;
  SpooledCopy& operator=(const SpooledCopy&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::optional<TempFileGuard> guard_;
};

// What an opened input is decides its reader (its first bytes, not its name). A reader for
// another format adds its case here.
Trace read_opened(const std::filesystem::path& path, io_detail::OpenedInput& in, const ReadOptions& options) {
  using io_detail::InputKind;
  switch (in.kind) {
    case InputKind::Sqlite: {  // an Nsight Systems export
      std::error_code ec;
      if (path != "-" && std::filesystem::is_regular_file(path, ec)) return read_nsys_sqlite(path, in.name);
      const SpooledCopy copy(*in.source, in.name);
      return read_nsys_sqlite(copy.path(), in.name);
    }
    case InputKind::Gzip:  // open_input inflates gzip: never here
    case InputKind::Json: break;
  }
  return io_detail::read_chrome_json(*in.source, in.name, options.chunk_bytes);
}

}  // namespace

Trace read_trace(const std::filesystem::path& path, const ReadOptions& options) {
  if (options.format == TraceFormat::Binary) no_binary(path.string());
  io_detail::OpenedInput in = io_detail::open_input(path, options.chunk_bytes);  // one open, no re-read
  return read_opened(path, in, options);
}

Trace parse_chrome_json(std::string_view json, std::string_view source_name, const ReadOptions& options) {
  io_detail::MemorySource source(json);
  return io_detail::read_chrome_json(source, std::string(source_name), options.chunk_bytes);
}

Trace parse_chrome_json(std::string_view json, std::string_view source_name) {
  return parse_chrome_json(json, source_name, ReadOptions{});
}

void write_trace(const Trace& trace, const std::filesystem::path& path, const WriteOptions& options) {
  const bool binary = options.format == TraceFormat::Binary ||
                      (options.format == TraceFormat::Auto && ends_with(path.string(), ".sstrace"));
  if (binary) no_binary(path.string());
  if (options.time_grid == TimeGrid::WholeMicrosecond) {
    const Trace gridded = on_microsecond_grid(trace);
    write_file_atomic(
        path, [&](const Sink& sink) { write_chrome_json(gridded, sink); }, options.overwrite);
    return;
  }
  write_file_atomic(
      path, [&](const Sink& sink) { write_chrome_json(trace, sink); }, options.overwrite);
}

}  // namespace syncscope
