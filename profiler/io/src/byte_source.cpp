#include "byte_source.hpp"

#include "syncscope/core/file_io.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prefetch_source.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::io_detail {
namespace fs = std::filesystem;

// Blocks read ahead of the parser (each chunk_bytes, 1 MiB by default): enough to keep the
// producer busy while the parser works through one; memory stays a few MiB per input.
constexpr std::size_t kPrefetchBlocks = 4;

std::size_t MemorySource::read(char* dst, std::size_t max) {
  const std::size_t n = std::min(max, data_.size());
  if (n > 0) std::memcpy(dst, data_.data(), n);
  data_.remove_prefix(n);
  return n;
}

FdSource::FdSource(int fd, std::string name, bool owned) : fd_(fd), name_(std::move(name)), owned_(owned) {
  note_reading(name_, 0);  // named by an out-of-memory message (core/file_io.hpp reading_now)
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) size_ = static_cast<std::uint64_t>(st.st_size);
}

FdSource::~FdSource() {
  if (owned_) ::close(fd_);
}

std::size_t FdSource::read(char* dst, std::size_t max) {
  for (;;) {
    const ssize_t n = ::read(fd_, dst, std::min<std::size_t>(max, SSIZE_MAX));
    if (n > 0) note_read_bytes(static_cast<std::uint64_t>(n));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EISDIR) throw InputError(name_ + ": is a directory, expected a trace file");
    throw InputError(name_ + ": read error: " + std::strerror(errno));
  }
}

std::string_view HeadSource::head(std::size_t n) {
  while (head_.size() < n) {
    const std::size_t before = head_.size();
    head_.resize(n);
    const std::size_t got = in_->read(head_.data() + before, n - before);
    head_.resize(before + got);
    if (got == 0) break;
  }
  return std::string_view(head_).substr(0, n);
}

std::size_t HeadSource::read(char* dst, std::size_t max) {
  if (pos_ < head_.size()) {
    const std::size_t n = std::min(max, head_.size() - pos_);
    std::memcpy(dst, head_.data() + pos_, n);
    pos_ += n;
    if (pos_ == head_.size()) {  // handed out: free it
      head_.clear();
      head_.shrink_to_fit();
      pos_ = 0;
    }
    return n;
  }
  return in_->read(dst, max);
}

struct GzipSource::State {
  z_stream zs{};
  bool member_ended = false;
};

GzipSource::GzipSource(std::unique_ptr<ByteSource> compressed, std::string name, std::size_t chunk_bytes)
    : in_(std::move(compressed)),
      name_(std::move(name)),
      z_(std::make_unique<State>()),
      inbuf_(std::clamp<std::size_t>(chunk_bytes, 1, std::size_t{1} << 24)),
      compressed_size_(in_->size_hint()) {
  // 16 + MAX_WBITS: expect gzip framing (header and CRC trailer).
  if (inflateInit2(&z_->zs, 16 + MAX_WBITS) != Z_OK) throw Error("zlib inflateInit2 failed");
}

GzipSource::~GzipSource() { inflateEnd(&z_->zs); }

std::size_t GzipSource::read(char* dst, std::size_t max) {
  if (done_ || max == 0) return 0;
  z_stream& zs = z_->zs;
  const uInt want = static_cast<uInt>(std::min<std::size_t>(max, UINT_MAX / 2));
  zs.next_out = reinterpret_cast<Bytef*>(dst);
  zs.avail_out = want;
  auto fail = [&](const std::string& what) {
    throw InputError(name_ + ": " + what + " near compressed byte " + std::to_string(consumed_) +
                     "; re-create or re-download the file");
  };
  while (zs.avail_out == want) {
    if (zs.avail_in == 0 && !in_eof_) {
      const std::size_t n = in_->read(inbuf_.data(), inbuf_.size());
      if (n == 0) in_eof_ = true;
      zs.next_in = reinterpret_cast<Bytef*>(inbuf_.data());
      zs.avail_in = static_cast<uInt>(n);
    }
    if (z_->member_ended) {
      if (zs.avail_in == 0) {
        if (in_eof_) {
          done_ = true;
          break;
        }
        continue;
      }
      // More bytes after a complete member: another gzip member follows (as `cat a.gz b.gz`).
      inflateReset(&zs);
      z_->member_ended = false;
    }
    const uInt before = zs.avail_in;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    consumed_ += before - zs.avail_in;
    if (rc == Z_STREAM_END) {
      z_->member_ended = true;
    } else if (rc == Z_OK) {
      continue;
    } else if (rc == Z_BUF_ERROR) {
      if (zs.avail_in == 0 && in_eof_) fail("truncated gzip data (the compressed stream ends early)");
    } else {
      fail(std::string("corrupt gzip data (") + (zs.msg != nullptr ? zs.msg : "zlib error " + std::to_string(rc)) +
           ")");
    }
  }
  hint_in_.store(consumed_, std::memory_order_relaxed);
  hint_out_.fetch_add(want - zs.avail_out, std::memory_order_relaxed);
  return want - zs.avail_out;
}

std::uint64_t GzipSource::size_hint() const {
  const std::uint64_t in = hint_in_.load(std::memory_order_relaxed);
  const std::uint64_t out = hint_out_.load(std::memory_order_relaxed);
  if (compressed_size_ == 0 || in < (std::uint64_t{64} << 10)) return 0;  // too little seen to scale
  const double total = static_cast<double>(compressed_size_) * (static_cast<double>(out) / static_cast<double>(in));
  return total >= 1e18 ? 0 : static_cast<std::uint64_t>(total);
}

InputKind sniff_input(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
    return InputKind::Gzip;
  constexpr std::string_view kSqlite("SQLite format 3\0", 16);
  if (head.substr(0, kSqlite.size()) == kSqlite) return InputKind::Sqlite;
  return InputKind::Json;
}

OpenedInput open_input(const fs::path& path, std::size_t chunk_bytes) {
  OpenedInput in;
  int fd = 0;
  const bool stdin_input = path == "-";
  if (stdin_input) {
    in.name = "<stdin>";
  } else {
    in.name = path.string();
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) throw InputError(in.name + ": no such file");
      throw InputError(in.name + ": cannot open for reading: " + std::strerror(errno));
    }
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (!stdin_input && stat_ok && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(in.name + ": is a directory, expected a trace file");
  }
  // A pipe, FIFO, socket or terminal: its reads wait on the writer.
  const bool may_block = !stat_ok || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
  auto raw = std::make_unique<HeadSource>(std::make_unique<FdSource>(fd, in.name, !stdin_input));
  in.kind = sniff_input(raw->head(16));
  if (in.kind == InputKind::Sqlite) {  // SQLite seeks: a file is opened again by path, a pipe spooled
    in.source = std::move(raw);
    return in;
  }
  if (in.kind != InputKind::Gzip) {
    // A regular file is read straight into the parser's buffer (the page cache is as fast as
    // a copy); a pipe is read ahead so the writer and the parser run at once.
    if (may_block) in.source = std::make_unique<PrefetchSource>(std::move(raw), chunk_bytes, kPrefetchBlocks, true);
    else in.source = std::move(raw);
    return in;
  }
  // Inflating takes about a third of a .json.gz's import on one core: it runs in its own
  // thread, a few blocks ahead of the parser. The inflated bytes say what they are in turn.
  auto inflated = std::make_unique<HeadSource>(
      std::make_unique<PrefetchSource>(std::make_unique<GzipSource>(std::move(raw), in.name, chunk_bytes), chunk_bytes,
                                       kPrefetchBlocks, may_block));
  in.kind = sniff_input(inflated->head(16));
  if (in.kind == InputKind::Gzip) in.kind = InputKind::Json;  // gzip inside gzip: not a trace; the reader says so
  in.source = std::move(inflated);
  return in;
}

}  // namespace syncscope::io_detail
