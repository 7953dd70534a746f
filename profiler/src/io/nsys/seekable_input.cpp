#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "syncscope/core/error.hpp"
#include "syncscope/io/seekable_input.hpp"

namespace syncscope {
namespace fs = std::filesystem;

namespace {

// Writes all of buf, retrying short writes; false with errno set on failure.
bool write_all(int fd, const char* buf, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    buf += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

SeekableInput::SeekableInput(const fs::path& path) : path_(path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  const fs::file_type type = st.type();
  if (type != fs::file_type::fifo && type != fs::file_type::character && type != fs::file_type::socket) return;

  const std::string name = path.string();
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw InputError(name + ": cannot open for reading: " + std::strerror(errno));
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string tmpl = (dir / "syncscope-input-XXXXXX").string();
  const int out = ::mkstemp(tmpl.data());  // 0600, a fresh name: nothing of anyone's replaced
  if (out < 0) {
    const int err = errno;
    ::close(in);
    throw InputError(name + ": cannot create a temporary copy in " + dir.string() + " (readers need to seek): " +
                     std::strerror(err) + "; write the input to a file first");
  }
  std::vector<char> buf(std::size_t{1} << 20);
  int err = 0;
  const char* failed = nullptr;
  for (;;) {
    const ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      failed = "read error";
      break;
    }
    if (n == 0) break;
    if (!write_all(out, buf.data(), static_cast<std::size_t>(n))) {
      err = errno;
      failed = "cannot write the temporary copy";
      break;
    }
  }
  ::close(in);
  if (::close(out) != 0 && failed == nullptr) {
    err = errno;
    failed = "cannot write the temporary copy";
  }
  if (failed != nullptr) {
    ::unlink(tmpl.c_str());
    throw InputError(name + ": " + failed + " (copying to " + tmpl + ", as readers need to seek): " +
                     std::strerror(err) + "; write the input to a file first");
  }
  path_ = tmpl;
  copied_ = true;
}

SeekableInput::~SeekableInput() {
  if (copied_) ::unlink(path_.c_str());
}

}  // namespace syncscope
