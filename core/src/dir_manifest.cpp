#include "syncscope/core/dir_manifest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHeader = "syncscope-manifest 1";

struct Entry {
  bool dir = false;
  std::uint64_t bytes = 0;
  std::string hash;
};

// Every entry under `dir` by '/'-separated relative path; links and special files as such.
struct Walked {
  std::map<std::string, Entry> entries;
  std::vector<std::string> odd;  // links, FIFOs, devices: never ours
};

Walked walk(const fs::path& dir, const std::string& manifest, const std::vector<std::string>& skip, bool hash) {
  Walked w;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (rel == manifest || std::find(skip.begin(), skip.end(), rel) != skip.end()) continue;
    std::error_code sec;
    const auto st = it->symlink_status(sec);
    if (fs::is_symlink(st)) {
      w.odd.push_back(rel + " (a symbolic link)");
    } else if (fs::is_directory(st)) {
      w.entries[rel] = Entry{true, 0, ""};
    } else if (fs::is_regular_file(st)) {
      Entry e;
      e.bytes = it->file_size(sec);
      if (hash) e.hash = file_fnv1a_hex(it->path());
      w.entries[rel] = e;
    } else {
      w.odd.push_back(rel + " (not a regular file)");
    }
  }
  if (ec) w.odd.push_back("(cannot list " + dir.string() + ": " + ec.message() + ")");
  return w;
}

}  // namespace

std::string file_fnv1a_hex(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  SYNCSCOPE_INPUT_ERROR_IF(fd < 0, file.string() + ": cannot open: " + std::strerror(errno));
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis (Fowler, Noll, Vo)
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw InputError(file.string() + ": read failed: " + std::strerror(err));
    }
    for (ssize_t i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;  // FNV 64-bit prime
    }
  }
  ::close(fd);
  static const char* hex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = hex[h & 0xf];
  return out;
}

void write_dir_manifest(const fs::path& dir, const std::string& name, const std::vector<std::string>& skip) {
  const Walked w = walk(dir, name, skip, true);
  SYNCSCOPE_THROW_IF(!w.odd.empty(), dir.string() + ": cannot list what was written: " + w.odd.front());
  std::string text = std::string(kHeader) + "\n";
  for (const auto& [rel, e] : w.entries) {
    SYNCSCOPE_THROW_IF(rel.find('\n') != std::string::npos, dir.string() + ": a written name holds a newline");
    text += e.dir ? "dir " + rel + "\n" : "file " + std::to_string(e.bytes) + " " + e.hash + " " + rel + "\n";
  }
  write_file_atomic(dir / name, text, true);
}

std::vector<std::string> dir_manifest_mismatches(const fs::path& dir, const std::string& name, std::size_t limit) {
  std::vector<std::string> out;
  std::map<std::string, Entry> listed;
  try {
    std::istringstream in(read_file(dir / name, std::uint64_t{64} << 20));
    std::string line;
    if (!std::getline(in, line) || line != kHeader) throw InputError("not a manifest");
    while (std::getline(in, line)) {
      if (line.rfind("dir ", 0) == 0) {
        listed[line.substr(4)] = Entry{true, 0, ""};
        continue;
      }
      std::istringstream ls(line);
      std::string kind, hash;
      Entry e;
      if (!(ls >> kind >> e.bytes >> hash) || kind != "file" || hash.size() != 16)
        throw InputError("a line is malformed");
      ls.get();  // the space before the path
      std::string rel;
      std::getline(ls, rel);
      e.hash = hash;
      listed[rel] = e;
    }
  } catch (const Error& e) {
    out.push_back(name + " (the run's manifest: " + e.what() +
                  "; without it --force cannot tell what the run wrote: remove the directory yourself)");
    return out;
  }
  const Walked w = walk(dir, name, {}, false);
  for (const auto& o : w.odd) {
    if (out.size() >= limit) return out;
    out.push_back(printable(o));
  }
  for (const auto& [rel, e] : w.entries) {
    if (out.size() >= limit) break;
    const auto it = listed.find(rel);
    if (it == listed.end()) {
      out.push_back(printable(rel));
    } else if (it->second.dir != e.dir) {
      out.push_back(printable(rel) + " (" + (e.dir ? "a directory" : "a file") + " where the run wrote " +
                    (it->second.dir ? "a directory" : "a file") + ")");
    } else if (!e.dir && (it->second.bytes != e.bytes || it->second.hash != file_fnv1a_hex(dir / rel))) {
      out.push_back(printable(rel) + " (not the content the run wrote)");
    }
  }
  return out;
}

}  // namespace syncscope
