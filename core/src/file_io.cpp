#include "syncscope/core/file_io.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/temp_files.hpp"

namespace syncscope {
namespace fs = std::filesystem;

bool is_gzip_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

namespace {

constexpr std::size_t kChunk = 1 << 20;  // bytes read per read(2)

// One open descriptor, read front to back: works for pipes and FIFOs, which cannot seek.
// What is being read now, for the out-of-memory message (core/file_io.hpp reading_now).
struct Progress {
  std::string file;
  std::uint64_t bytes = 0;
};
thread_local Progress tl_progress;

class Reader {
 public:
  explicit Reader(const fs::path& path, bool regular_only = false) : name_(path.string()) {
    tl_progress = {name_, 0};
    if (regular_only) {
      open_regular(path);
      return;
    }
    if (name_ == "-") {
      fd_ = STDIN_FILENO;
      name_ = "standard input (-)";
      return;
    }
    do {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) {
      const int err = errno;
      if (err == ENOENT) throw InputError(name_ + ": no such file");
      throw InputError(name_ + ": cannot open for reading: " + std::strerror(err));
    }
    owned_ = true;
    struct stat st {};
    if (::fstat(fd_, &st) == 0) {
      SYNCSCOPE_INPUT_ERROR_IF(S_ISDIR(st.st_mode), name_ + ": is a directory, expected a file");
      if (S_ISREG(st.st_mode)) size_hint_ = static_cast<std::uint64_t>(st.st_size);
    }
  }
  ~Reader() {
    if (owned_) ::close(fd_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Up to n bytes into buf; 0 at the end.
  std::size_t read(char* buf, std::size_t n) {
    for (;;) {
      const ssize_t got = ::read(fd_, buf, n);
      if (got > 0) tl_progress.bytes += static_cast<std::uint64_t>(got);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno == EINTR) continue;
      const int err = errno;
      if (err == EISDIR) throw InputError(name_ + ": is a directory, expected a file");
      throw InputError(name_ + ": read failed: " + std::strerror(err));
    }
  }
  const std::string& name() const { return name_; }
  std::uint64_t size_hint() const { return size_hint_; }

 private:
  // A file we wrote and read back: refused unless a regular file, before any byte is read.
  // Opened with O_NONBLOCK so a FIFO put in its place returns at once (a blocking open of a
  // FIFO waits for a writer forever), then checked on the descriptor itself (no race between
  // a stat and the open).
  void open_regular(const fs::path& path) {
    SYNCSCOPE_INPUT_ERROR_IF(name_ == "-", "standard input (-): this input must be a regular file, not a stream");
    do {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) {
      const int err = errno;
      if (err == ENOENT) throw InputError(name_ + ": no such file");
      throw InputError(name_ + ": cannot open for reading: " + std::strerror(err));
    }
    owned_ = true;
    struct stat st {};
    SYNCSCOPE_INPUT_ERROR_IF(::fstat(fd_, &st) != 0, name_ + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) {
      const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                         : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                         : S_ISSOCK(st.st_mode) ? "a socket"
                         : S_ISCHR(st.st_mode)  ? "a character device"
                         : S_ISBLK(st.st_mode)  ? "a block device"
                                                : "not a regular file";
      ::close(fd_);
      owned_ = false;
      throw InputError(name_ + ": is " + kind + ", expected a regular file (syncscope wrote it as one)");
    }
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    size_hint_ = static_cast<std::uint64_t>(st.st_size);
  }

  std::string name_;
  int fd_ = -1;
  bool owned_ = false;
  std::uint64_t size_hint_ = 0;
};

[[noreturn]] void too_large(const std::string& name, std::uint64_t max_bytes, const char* what) {
  throw InputError(name + ": " + what + " more than " + bounds::format_bytes(static_cast<double>(max_bytes)) +
                   ", the most this input may hold; is it the right file?");
}

void append_bounded(std::string& out, const char* data, std::size_t n, std::uint64_t max_bytes, const std::string& name,
                    const char* what) {
  if (out.size() + n > max_bytes) too_large(name, max_bytes, what);
  out.append(data, n);
}

// Inflates gzip data as it is read (concatenated members too), the first bytes already read.
std::string inflate_stream(Reader& in, std::string first, std::uint64_t max_bytes) {
  z_stream zs{};
  // 16 + MAX_WBITS: gzip framing; concatenated members are handled by resetting below.
  SYNCSCOPE_THROW_IF(inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK, "zlib inflateInit2 failed");
  std::string out;
  std::vector<char> inbuf = std::vector<char>(first.begin(), first.end());  // read before we knew it was gzip
  std::vector<char> outbuf(1 << 16);
  zs.next_in = reinterpret_cast<Bytef*>(inbuf.data());
  zs.avail_in = static_cast<uInt>(inbuf.size());
  std::uint64_t consumed = 0;
  bool eof = false, output_full = false;
  int rc = Z_OK;
  auto refill = [&] {
    if (eof) return;
    inbuf.resize(kChunk);
    zs.avail_in = static_cast<uInt>(in.read(inbuf.data(), inbuf.size()));
    zs.next_in = reinterpret_cast<Bytef*>(inbuf.data());
    eof = zs.avail_in == 0;
  };
  try {
    for (;;) {
      if (zs.avail_in == 0 && !output_full) {
        refill();
        if (zs.avail_in == 0) {
          if (rc != Z_STREAM_END) rc = Z_BUF_ERROR;  // input ended before the stream did
          break;
        }
        if (rc == Z_STREAM_END) {  // another gzip member follows
          inflateReset(&zs);
          rc = Z_OK;
        }
      } else if (rc == Z_STREAM_END) {
        inflateReset(&zs);  // another member follows in the bytes we have
        rc = Z_OK;
      }
      zs.next_out = reinterpret_cast<Bytef*>(outbuf.data());
      zs.avail_out = static_cast<uInt>(outbuf.size());
      const uInt before = zs.avail_in;
      rc = inflate(&zs, Z_NO_FLUSH);
      consumed += before - zs.avail_in;
      output_full = zs.avail_out == 0;
      append_bounded(out, outbuf.data(), outbuf.size() - zs.avail_out, max_bytes, in.name(), "gunzips to");
      if (rc == Z_STREAM_END) {
        output_full = false;
        continue;
      }
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && !output_full) continue;  // needs more input
      if (rc != Z_OK) break;
    }
  } catch (...) {
    inflateEnd(&zs);
    throw;
  }
  inflateEnd(&zs);
  SYNCSCOPE_INPUT_ERROR_IF(rc != Z_STREAM_END, in.name() + ": corrupt or truncated gzip data near compressed byte " +
                                                   std::to_string(consumed) + "; re-create or re-download the file");
  return out;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Writes everything to a descriptor we write straight through (stdout, a FIFO, a device).
void write_stream(const OutputFile& plan, const std::function<void(const Sink&)>& write, bool gz) {
  const std::string name = plan.requested.string();
  int fd = plan.stream_fd;
  bool owned = false;
  if (fd < 0) {
    do {
      fd = ::open(plan.target.c_str(), O_WRONLY | O_CLOEXEC);  // no O_CREAT, no O_TRUNC: it exists and is special
    } while (fd < 0 && errno == EINTR);
    SYNCSCOPE_INPUT_ERROR_IF(fd < 0, name + ": cannot open for writing: " + std::strerror(errno));
    owned = true;
  } else if (fd == STDOUT_FILENO) {
    std::fflush(stdout);  // keep what was printed before in order
  } else if (fd == STDERR_FILENO) {
    std::fflush(stderr);
  }
  bool ok = true;
  int err = 0;
  auto raw = [&](const char* p, std::size_t n) {
    while (ok && n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        err = errno;
        ok = false;
        break;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  };
  try {
    if (gz) {
      // gzip into memory chunks, then raw writes: gzdopen would close our descriptor.
      z_stream zs{};
      SYNCSCOPE_THROW_IF(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK,
                         "zlib deflateInit2 failed");
      std::vector<char> buf(1 << 16);
      auto pump = [&](std::string_view s, int flush) {
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
        zs.avail_in = static_cast<uInt>(s.size());
        do {
          zs.next_out = reinterpret_cast<Bytef*>(buf.data());
          zs.avail_out = static_cast<uInt>(buf.size());
          deflate(&zs, flush);
          raw(buf.data(), buf.size() - zs.avail_out);
        } while (zs.avail_out == 0 && ok);
      };
      try {
        write([&](std::string_view s) {
          while (ok && !s.empty()) {
            const std::size_t n = std::min<std::size_t>(s.size(), 1u << 30);
            pump(s.substr(0, n), Z_NO_FLUSH);
            s.remove_prefix(n);
          }
        });
        if (ok) pump({}, Z_FINISH);
      } catch (...) {
        deflateEnd(&zs);
        throw;
      }
      deflateEnd(&zs);
    } else {
      write([&](std::string_view s) { raw(s.data(), s.size()); });
    }
  } catch (...) {
    if (owned) ::close(fd);
    throw;
  }
  if (owned && ::close(fd) != 0 && ok) {
    err = errno;
    ok = false;
  }
  // EPIPE from a closed pipe (`| head`) and ENOSPC alike: the output is incomplete, exit 1.
  SYNCSCOPE_THROW_IF(!ok, name + ": write failed: " + std::strerror(err));
}

}  // namespace

ReadingNow reading_now() { return {tl_progress.file, tl_progress.bytes}; }
void note_reading(const std::string& file, std::uint64_t bytes_so_far) { tl_progress = {file, bytes_so_far}; }
void note_read_bytes(std::uint64_t more) { tl_progress.bytes += more; }

namespace {
std::string read_all(Reader& in, std::uint64_t max_bytes);
}

std::string read_file(const fs::path& path, std::uint64_t max_bytes) {
  Reader in(path);
  return read_all(in, max_bytes);
}

std::string read_regular_file(const fs::path& path, std::uint64_t max_bytes) {
  Reader in(path, true);
  return read_all(in, max_bytes);
}

namespace {
std::string read_all(Reader& in, std::uint64_t max_bytes) {
  if (in.size_hint() > 0 && in.size_hint() > max_bytes) too_large(in.name(), max_bytes, "holds");
  std::string data;
  if (in.size_hint() > 0) data.reserve(static_cast<std::size_t>(in.size_hint()));
  std::vector<char> buf(kChunk);
  // The first bytes say whether it is gzip; they are read once and kept.
  while (data.size() < 2) {
    const std::size_t got = in.read(buf.data(), buf.size());
    if (got == 0) return data;
    append_bounded(data, buf.data(), got, max_bytes, in.name(), "holds");
  }
  if (static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b) {
    return inflate_stream(in, std::move(data), max_bytes);
  }
  for (;;) {
    const std::size_t got = in.read(buf.data(), buf.size());
    if (got == 0) break;
    append_bounded(data, buf.data(), got, max_bytes, in.name(), "holds");
  }
  return data;
}
}  // namespace

void write_file_atomic(const fs::path& path, const std::function<void(const Sink&)>& write, bool overwrite) {
  const OutputFile plan = plan_output_file(path, overwrite);
  const bool gz = ends_with(path.string(), ".gz");
  if (plan.stream) {
    write_stream(plan, write, gz);
    return;
  }
  const fs::path& target = plan.target;
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::random_device rd;
  const std::string tmp_prefix = "." + target.filename().string() + ".tmp";
  // Those of a process killed before it could remove them (SIGKILL): its pid is in the name.
  remove_stale_temp_files(dir, tmp_prefix);
  fs::path tmp = dir / (tmp_prefix + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  TempFileGuard guard(tmp);  // removed on SIGINT, SIGTERM and SIGHUP too
  std::error_code ec;
  try {
    if (gz) {
      gzFile f = gzopen(tmp.c_str(), "wb6");
      SYNCSCOPE_INPUT_ERROR_IF(f == nullptr, path.string() + ": cannot open " + tmp.string() +
                                                 " for writing: " + std::strerror(errno));
      bool ok = true;
      Sink sink = [&](std::string_view s) {
        while (ok && !s.empty()) {
          unsigned n = static_cast<unsigned>(std::min<std::size_t>(s.size(), 1u << 30));
          if (gzwrite(f, s.data(), n) != static_cast<int>(n)) ok = false;
          s.remove_prefix(n);
        }
      };
      try {
        write(sink);
      } catch (...) {
        gzclose(f);
        throw;
      }
      ok = (gzclose(f) == Z_OK) && ok;
      // A write that fails (disk full, a file size limit) is not bad input: exit 1.
      SYNCSCOPE_THROW_IF(!ok, path.string() + ": write failed (disk full or a file size limit?)");
    } else {
      std::FILE* f = std::fopen(tmp.c_str(), "wb");
      SYNCSCOPE_INPUT_ERROR_IF(f == nullptr, path.string() + ": cannot open " + tmp.string() +
                                                 " for writing: " + std::strerror(errno));
      bool ok = true;
      int err = 0;
      Sink sink = [&](std::string_view s) {
        if (ok && !s.empty() && std::fwrite(s.data(), 1, s.size(), f) != s.size()) {
          ok = false;
          err = errno;
        }
      };
      try {
        write(sink);
      } catch (...) {
        std::fclose(f);
        throw;
      }
      if (std::fflush(f) != 0 && ok) {
        ok = false;
        err = errno;
      }
      if (::fsync(fileno(f)) != 0 && errno != EINVAL && ok) {
        ok = false;
        err = errno;
      }
      if (std::fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
      }
      SYNCSCOPE_THROW_IF(!ok, path.string() + ": write failed: " + std::strerror(err));
    }
    if (!overwrite) {
      // RENAME_NOREPLACE: a file created meanwhile by another process is not replaced.
      if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0) {
        const int err = errno;
        SYNCSCOPE_INPUT_ERROR_IF(err == EEXIST, path.string() + ": appeared while writing; not replaced");
        SYNCSCOPE_INPUT_ERROR_IF(err != EINVAL && err != ENOSYS,
                                 path.string() + ": cannot rename the finished file into place: " + std::strerror(err));
        // A file system without RENAME_NOREPLACE: check, then rename.
        SYNCSCOPE_INPUT_ERROR_IF(path_kind(target) != PathKind::Missing || fs::is_symlink(target, ec),
                                 path.string() + ": appeared while writing; not replaced");
        fs::rename(tmp, target);
      }
    } else {
      // Checked again: what is there now must still be a regular file (or nothing).
      struct stat st {};
      if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw InputError(path.string() + ": became " + describe(path_kind(target)) + " while writing; not replaced");
      fs::rename(tmp, target);
    }
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  guard.release();
}

void write_file_atomic(const fs::path& path, std::string_view content, bool overwrite) {
  write_file_atomic(
      path, [&](const Sink& sink) { sink(content); }, overwrite);
}

}  // namespace syncscope
