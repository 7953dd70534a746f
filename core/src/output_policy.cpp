#include "syncscope/core/output_policy.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "syncscope/core/dir_manifest.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/glob.hpp"

namespace syncscope {

namespace fs = std::filesystem;

const char* describe(PathKind kind) {
  switch (kind) {
    case PathKind::Missing: return "nothing";
    case PathKind::Regular: return "a regular file";
    case PathKind::Directory: return "a directory";
    case PathKind::CharDevice: return "a character device";
    case PathKind::Fifo: return "a FIFO (named pipe)";
    case PathKind::Socket: return "a socket";
    case PathKind::BlockDevice: return "a block device";
    case PathKind::Other: return "a special file";
  }
  return "a special file";
}

namespace {

PathKind kind_of(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return PathKind::Regular;
  if (S_ISDIR(st.st_mode)) return PathKind::Directory;
  if (S_ISCHR(st.st_mode)) return PathKind::CharDevice;
  if (S_ISFIFO(st.st_mode)) return PathKind::Fifo;
  if (S_ISSOCK(st.st_mode)) return PathKind::Socket;
  if (S_ISBLK(st.st_mode)) return PathKind::BlockDevice;
  return PathKind::Other;
}

// Follows symlinks one hop at a time, so a dangling link resolves to the path it names.
fs::path resolve_symlinks(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    SYNCSCOPE_INPUT_ERROR_IF(hops >= 40, path.string() + ": too many levels of symbolic links (a loop?)");
    std::error_code ec;
    fs::path t = fs::read_symlink(p, ec);
    SYNCSCOPE_INPUT_ERROR_IF(ec, path.string() + ": cannot read the symbolic link " + p.string() + ": " + ec.message());
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
}

// "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: an open descriptor of ours.
int descriptor_path(const fs::path& path) {
  const std::string s = path.string();
  if (s == "-" || s == "/dev/stdout") return 1;
  if (s == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string pre = prefix;
    if (s.size() > pre.size() && s.compare(0, pre.size(), pre) == 0) {
      const std::string num = s.substr(pre.size());
      if (num.find_first_not_of("0123456789") != std::string::npos || num.size() > 6) return -1;
      return std::atoi(num.c_str());
    }
  }
  return -1;
}

// The path as given, and where it leads when a symbolic link was followed on the way.
std::string shown(const fs::path& requested, const fs::path& target, bool via_symlink) {
  if (!via_symlink) return requested.string();
  return requested.string() + " (a symbolic link to " + target.string() + ")";
}

fs::path strip_trailing_separator(fs::path p) {
  while (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

// ---- partial directories ---------------------------------------------------------------

std::string read_first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string this_host() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string boot_id() { return read_first_line("/proc/sys/kernel/random/boot_id"); }

// Field 22 of /proc/<pid>/stat: the process's start time in clock ticks after boot; with
// the pid it names one process across pid reuse.
std::string start_time(long pid) {
  const std::string stat = read_first_line("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && (in >> field); ++i)
    if (i == 22) return field;
  return "";
}

struct PartialOwner {
  long pid = 0;
  std::string start, host, boot;
};

std::string owner_text(const PartialOwner& o) {
  return "syncscope partial results v1\npid " + std::to_string(o.pid) + "\nstart " + o.start + "\nhost " + o.host +
         "\nboot " + o.boot + "\n";
}

bool read_owner(const fs::path& marker, PartialOwner& o) {
  // A planted FIFO or device must not hang or feed the next run: read_regular_file refuses
  // anything but a regular file before opening it, and the marker is a few lines (4 KiB).
  std::string text;
  try {
    text = read_regular_file(marker, 4096);
  } catch (const std::exception&) {
    return false;  // missing, not a regular file, too long: not our marker
  }
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "syncscope partial results v1") return false;
  bool have_pid = false;
  while (std::getline(in, line)) {
    const auto sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string key = line.substr(0, sp), value = line.substr(sp + 1);
    if (key == "pid") {
      char* end = nullptr;
      o.pid = std::strtol(value.c_str(), &end, 10);
      have_pid = end != value.c_str() && *end == '\0' && o.pid > 0;
    } else if (key == "start") {
      o.start = value;
    } else if (key == "host") {
      o.host = value;
    } else if (key == "boot") {
      o.boot = value;
    }
  }
  return have_pid && !o.host.empty();
}

// True only when the owner is known to be gone: same host, and another boot, or no such
// pid, or that pid is a process started at another time (reused).
bool owner_dead(const PartialOwner& o) {
  if (o.host != this_host()) return false;
  const std::string boot = boot_id();
  if (!o.boot.empty() && !boot.empty() && o.boot != boot) return true;
  if (::kill(static_cast<pid_t>(o.pid), 0) != 0 && errno == ESRCH) return true;
  const std::string start = start_time(o.pid);
  return !o.start.empty() && !start.empty() && start != o.start;
}

// Everything under `dir` not matching `allowed`, as relative paths (at most `limit`).
std::vector<std::string> foreign_entries(const fs::path& dir, const std::vector<std::string>& allowed,
                                         std::size_t limit) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    const auto st = it->symlink_status(ec);
    bool ok = fs::is_regular_file(st) || fs::is_directory(st);
    if (ok) {
      ok = false;
      for (const auto& g : allowed) ok = ok || glob_match(g, rel);
    }
    if (!ok) {
      out.push_back(rel + (fs::is_symlink(st) ? " (a symbolic link)" : ""));
      if (fs::is_directory(st)) it.disable_recursion_pending();
      if (out.size() >= limit) break;
    }
  }
  if (ec) out.push_back("(cannot list " + dir.string() + ": " + ec.message() + ")");
  return out;
}

void check_ours(const fs::path& requested, const fs::path& target, bool via_symlink, const OwnedDirRules& rules) {
  const fs::path marker = target / rules.marker;
  const bool have_marker = path_kind(marker) == PathKind::Regular && ::access(marker.c_str(), R_OK) == 0;
  bool ours = have_marker;
  if (ours && rules.marker_is_ours) {
    try {
      ours = rules.marker_is_ours(marker);
    } catch (const std::exception&) {
      ours = false;
    }
  }
  if (!ours)
    throw InputError(shown(requested, target, via_symlink) + " is not a syncscope results directory (it holds no " +
                     rules.marker +
                     " of ours): --force replaces only a directory `syncscope run` wrote; choose another --out");
  auto foreign = foreign_entries(target, rules.allowed, 5);
  if (foreign.empty() && !rules.manifest.empty()) foreign = dir_manifest_mismatches(target, rules.manifest, 5);
  if (!foreign.empty()) {
    std::string list;
    for (const auto& f : foreign) list += (list.empty() ? "" : ", ") + f;
    throw InputError(shown(requested, target, via_symlink) + " holds files syncscope run did not write (" + list +
                     "): --force would delete them; move them away or choose another --out");
  }
}

}  // namespace

PathKind path_kind(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return PathKind::Missing;
  return kind_of(st);
}

OutputFile plan_output_file(const fs::path& path, bool force) {
  SYNCSCOPE_INPUT_ERROR_IF(path.empty(), "output file name is empty");
  OutputFile out;
  out.requested = path;
  out.target = path;
  if (const int fd = descriptor_path(path); fd >= 0) {
    SYNCSCOPE_INPUT_ERROR_IF(::fcntl(fd, F_GETFD) == -1,
                             path.string() + ": descriptor " + std::to_string(fd) + " is not open");
    out.stream = true;
    out.stream_fd = fd;
    struct stat st {};
    out.existing = ::fstat(fd, &st) == 0 ? kind_of(st) : PathKind::Other;
    return out;
  }
  out.target = resolve_symlinks(path);
  out.existing = path_kind(out.target);
  const std::string what = shown(path, out.target, out.target != path);
  switch (out.existing) {
    case PathKind::Missing: {
      const fs::path dir = out.target.parent_path().empty() ? fs::path(".") : out.target.parent_path();
      const PathKind d = path_kind(dir);
      SYNCSCOPE_INPUT_ERROR_IF(d == PathKind::Missing, what + ": output directory " + dir.string() + " does not exist");
      SYNCSCOPE_INPUT_ERROR_IF(d != PathKind::Directory,
                               what + ": " + dir.string() + " is " + describe(d) + ", not a directory");
      return out;
    }
    case PathKind::Regular:
      SYNCSCOPE_INPUT_ERROR_IF(!force, what + ": already exists; choose another name or pass --force to replace it");
      return out;
    case PathKind::Directory:
      throw InputError(what + ": is a directory; a directory is never replaced by a file: name a file inside it");
    case PathKind::CharDevice:
    case PathKind::Fifo:
      out.stream = true;  // /dev/null, a terminal, a named pipe: written straight through
      return out;
    default:
      throw InputError(what + ": is " + describe(out.existing) +
                       "; syncscope writes only regular files, character devices and FIFOs");
  }
}

OutputDir plan_output_dir(const fs::path& dir, bool force, const OwnedDirRules& rules) {
  SYNCSCOPE_INPUT_ERROR_IF(dir.empty(), "output directory name is empty");
  OutputDir out;
  out.requested = dir;
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  SYNCSCOPE_INPUT_ERROR_IF(ec, dir.string() + ": cannot resolve: " + ec.message());
  abs = strip_trailing_separator(abs.lexically_normal());
  out.target = strip_trailing_separator(resolve_symlinks(abs).lexically_normal());
  out.via_symlink = out.target != abs;
  SYNCSCOPE_INPUT_ERROR_IF(out.target == out.target.root_path(),
                           dir.string() + ": the root directory cannot be a results directory");
  const PathKind k = path_kind(out.target);
  if (k == PathKind::Missing) return out;
  out.exists = true;
  const std::string what = shown(dir, out.target, out.via_symlink);
  SYNCSCOPE_INPUT_ERROR_IF(k != PathKind::Directory,
                           what + " is " + describe(k) + ", not a results directory; choose another --out");
  SYNCSCOPE_INPUT_ERROR_IF(!force, what +
                                       " exists: choose another --out or pass --force to replace it (only a "
                                       "directory `syncscope run` wrote is replaced)");
  check_ours(dir, out.target, out.via_symlink, rules);
  return out;
}

fs::path make_partial_dir(const fs::path& target) {
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw InputError("cannot create " + parent.string() + " for the results: " + ec.message());
  std::string tmpl =
      (parent / (target.filename().string() + ".partial-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) {
    const int err = errno;
    const std::string msg =
        "cannot create a directory in " + parent.string() + " for the results: " + std::strerror(err);
    // Where the user asked us to write is not writable: bad input (exit 2), said with the OS's reason.
    if (err == EACCES || err == EROFS || err == EPERM || err == ENOTDIR || err == ENOENT || err == EEXIST)
      throw InputError(msg);
    throw Error(msg);
  }
  // mkdtemp makes it private (0700); results are meant to be shared like any new directory.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmpl.c_str(), 0777 & ~mask);
  PartialOwner o;
  o.pid = static_cast<long>(::getpid());
  o.start = start_time(o.pid);
  o.host = this_host();
  o.boot = boot_id();
  std::ofstream(fs::path(tmpl) / kPartialMarker) << owner_text(o);
  return tmpl;
}

std::vector<fs::path> remove_stale_partial_dirs(const fs::path& target,
                                                const std::function<void(const std::string&)>& log) {
  std::vector<fs::path> removed;
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  const std::string prefix = target.filename().string() + ".partial-";
  std::error_code ec;
  for (auto it = fs::directory_iterator(parent, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    std::error_code ec2;
    if (!it->is_directory(ec2) || it->is_symlink(ec2)) continue;
    PartialOwner o;
    if (!read_owner(it->path() / kPartialMarker, o) || !owner_dead(o)) continue;
    fs::remove_all(it->path(), ec2);
    if (ec2) {
      if (log) log("cannot remove the stale partial directory " + it->path().string() + ": " + ec2.message());
      continue;
    }
    removed.push_back(it->path());
    if (log)
      log("removed the stale partial directory " + it->path().string() + " (left by process " + std::to_string(o.pid) +
          ", which is no longer running)");
  }
  return removed;
}

void publish_partial_dir(const fs::path& partial, const OutputDir& out, bool force, const OwnedDirRules& rules) {
  std::error_code ec;
  const PathKind k = path_kind(out.target);
  if (k != PathKind::Missing) {
    // Checked again: the target may have appeared or changed while the run ran.
    SYNCSCOPE_INPUT_ERROR_IF(!force, out.target.string() + " exists (created meanwhile?): use --force to replace it");
    SYNCSCOPE_INPUT_ERROR_IF(k != PathKind::Directory,
                             out.target.string() + " is " + describe(k) + " now, not a results directory");
    check_ours(out.requested, out.target, out.via_symlink, rules);
  }
  // The marker goes before the move; should the move fail, it comes back, so that the
  // partial directory stays recognisable as ours.
  const fs::path marker = partial / kPartialMarker;
  std::string marker_text;
  {
    std::ifstream in(marker);
    std::ostringstream ss;
    ss << in.rdbuf();
    marker_text = ss.str();
  }
  if (!rules.manifest.empty()) write_dir_manifest(partial, rules.manifest, {kPartialMarker});
  fs::remove(marker, ec);
  auto fail = [&](const std::string& msg) {
    if (!marker_text.empty() && path_kind(partial) == PathKind::Directory) std::ofstream(marker) << marker_text;
    throw Error(msg);
  };
  if (k == PathKind::Missing) {
    // RENAME_NOREPLACE: a directory created meanwhile is not replaced.
    if (::renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, out.target.c_str(), RENAME_NOREPLACE) == 0) return;
    const int err = errno;
    if (err != EINVAL && err != ENOSYS)
      fail("cannot rename " + partial.string() + " to " + out.target.string() + ": " + std::strerror(err));
    fs::rename(partial, out.target, ec);
    if (ec) fail("cannot rename " + partial.string() + " to " + out.target.string() + ": " + ec.message());
    return;
  }
  if (::renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, out.target.c_str(), RENAME_EXCHANGE) == 0) {
    // `partial` now holds the old results, which were ours.
    fs::remove_all(partial, ec);
    return;
  }
  const int err = errno;
  if (err != EINVAL && err != ENOSYS)
    fail("cannot replace " + out.target.string() + " with " + partial.string() + ": " + std::strerror(err));
  // A file system without RENAME_EXCHANGE: move the old results aside, then the new in.
  fs::path old = out.target;
  old += ".old-" + std::to_string(::getpid());
  fs::rename(out.target, old, ec);
  if (ec) fail("cannot move " + out.target.string() + " aside: " + ec.message());
  fs::rename(partial, out.target, ec);
  if (ec) {
    std::error_code ec2;
    fs::rename(old, out.target, ec2);  // put the old results back
    fail("cannot rename " + partial.string() + " to " + out.target.string() + ": " + ec.message());
  }
  fs::remove_all(old, ec);
}

bool abandon_partial_dir(const fs::path& partial) {
  std::error_code ec;
  bool any_file = false;
  for (auto it = fs::recursive_directory_iterator(partial, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() == kPartialMarker && it->path().parent_path() == partial) continue;
    any_file |= it->is_regular_file(ec);
  }
  if (any_file) return true;
  fs::remove_all(partial, ec);
  return false;
}

}  // namespace syncscope
