#include "syncscope/core/file_io.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <unistd.h>

#include "syncscope/core/error.hpp"

namespace syncscope {
namespace fs = std::filesystem;

bool is_gzip_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

namespace {

std::string read_plain(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  SYNCSCOPE_INPUT_ERROR_IF(!in, path.string() + ": cannot open for reading: " + std::strerror(errno));
  std::string data;
  in.seekg(0, std::ios::end);
  auto size = in.tellg();
  SYNCSCOPE_INPUT_ERROR_IF(size < 0, path.string() + ": cannot read (not a regular file?)");
  data.resize(static_cast<std::size_t>(size));
  in.seekg(0);
  in.read(data.data(), size);
  SYNCSCOPE_INPUT_ERROR_IF(in.gcount() != size, path.string() + ": short read");
  return data;
}

std::string read_gzip(const fs::path& path) {
  std::string compressed = read_plain(path);
  z_stream zs{};
  // 16 + MAX_WBITS: gzip framing; concatenated members are handled by resetting below.
  SYNCSCOPE_THROW_IF(inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK, "zlib inflateInit2 failed");
  std::string out;
  out.reserve(compressed.size() * 4);
  zs.next_in = reinterpret_cast<Bytef*>(compressed.data());
  zs.avail_in = static_cast<uInt>(compressed.size());
  char buf[1 << 16];
  int rc = Z_OK;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out != 0) {
      rc = Z_BUF_ERROR;  // input ended before the stream did
      break;
    }
  }
  auto consumed = compressed.size() - zs.avail_in;
  inflateEnd(&zs);
  SYNCSCOPE_INPUT_ERROR_IF(rc != Z_STREAM_END,
                           path.string() + ": corrupt or truncated gzip data near compressed byte " +
                               std::to_string(consumed) + "; re-create or re-download the file");
  return out;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string read_file(const fs::path& path) {
  std::error_code ec;
  SYNCSCOPE_INPUT_ERROR_IF(!fs::exists(path, ec), path.string() + ": no such file");
  SYNCSCOPE_INPUT_ERROR_IF(fs::is_directory(path, ec), path.string() + ": is a directory, expected a file");
  return is_gzip_file(path) ? read_gzip(path) : read_plain(path);
}

void write_file_atomic(const fs::path& path, const std::function<void(const Sink&)>& write, bool overwrite) {
  std::error_code ec;
  SYNCSCOPE_INPUT_ERROR_IF(!overwrite && fs::exists(path, ec),
                           path.string() + ": already exists; choose another name or pass --force to replace it");
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  SYNCSCOPE_INPUT_ERROR_IF(!fs::is_directory(dir, ec), dir.string() + ": output directory does not exist");
  std::random_device rd;
  fs::path tmp = dir / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()) + "-" +
                        std::to_string(rd()));
  const bool gz = ends_with(path.string(), ".gz");
  try {
    if (gz) {
      gzFile f = gzopen(tmp.c_str(), "wb6");
      SYNCSCOPE_INPUT_ERROR_IF(f == nullptr, tmp.string() + ": cannot open for writing");
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
      SYNCSCOPE_INPUT_ERROR_IF(!ok, path.string() + ": write failed (disk full?)");
    } else {
      std::FILE* f = std::fopen(tmp.c_str(), "wb");
      SYNCSCOPE_INPUT_ERROR_IF(f == nullptr, tmp.string() + ": cannot open for writing: " + std::strerror(errno));
      bool ok = true;
      Sink sink = [&](std::string_view s) {
        if (ok && !s.empty() && std::fwrite(s.data(), 1, s.size(), f) != s.size()) ok = false;
      };
      try {
        write(sink);
      } catch (...) {
        std::fclose(f);
        throw;
      }
      ok = (std::fflush(f) == 0) && ok;
      ok = (::fsync(fileno(f)) == 0 || errno == EINVAL) && ok;
      ok = (std::fclose(f) == 0) && ok;
      SYNCSCOPE_INPUT_ERROR_IF(!ok, path.string() + ": write failed (disk full?)");
    }
    if (!overwrite) {
      // Re-check just before the rename: another process may have created it meanwhile.
      SYNCSCOPE_INPUT_ERROR_IF(fs::exists(path, ec), path.string() + ": appeared while writing; not replaced");
    }
    fs::rename(tmp, path);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

void write_file_atomic(const fs::path& path, std::string_view content, bool overwrite) {
  write_file_atomic(path, [&](const Sink& sink) { sink(content); }, overwrite);
}

}  // namespace syncscope
