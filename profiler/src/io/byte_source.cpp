#include "byte_source.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"

namespace syncscope::io_detail {
namespace fs = std::filesystem;

std::size_t MemorySource::read(char* dst, std::size_t max) {
  const std::size_t n = std::min(max, data_.size());
  if (n > 0) std::memcpy(dst, data_.data(), n);
  data_.remove_prefix(n);
  return n;
}

FileSource::FileSource(const fs::path& path) : name_(path.string()) {
  f_ = std::fopen(path.c_str(), "rb");
  if (f_ == nullptr) throw InputError(name_ + ": cannot open for reading: " + std::strerror(errno));
}

FileSource::~FileSource() {
  if (f_ != nullptr) std::fclose(f_);
}

std::size_t FileSource::read(char* dst, std::size_t max) {
  const std::size_t n = std::fread(dst, 1, max, f_);
  if (n < max && std::ferror(f_)) throw InputError(name_ + ": read error: " + std::strerror(errno));
  return n;
}

struct GzipSource::State {
  z_stream zs{};
  bool member_ended = false;
};

GzipSource::GzipSource(std::unique_ptr<ByteSource> compressed, std::string name, std::size_t chunk_bytes)
    : in_(std::move(compressed)), name_(std::move(name)), z_(std::make_unique<State>()),
      inbuf_(std::clamp<std::size_t>(chunk_bytes, 1, std::size_t{1} << 24)) {
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
  return want - zs.avail_out;
}

std::unique_ptr<ByteSource> open_file_source(const fs::path& path, std::size_t chunk_bytes) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path.string() + ": no such file");
  if (fs::is_directory(path, ec)) throw InputError(path.string() + ": is a directory, expected a trace file");
  auto file = std::make_unique<FileSource>(path);
  if (is_gzip_file(path)) return std::make_unique<GzipSource>(std::move(file), path.string(), chunk_bytes);
  return file;
}

}  // namespace syncscope::io_detail
