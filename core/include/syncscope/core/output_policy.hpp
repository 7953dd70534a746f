// What syncscope may write over (nothing lost).
//
// An output FILE replaces only a regular file, and only with --force. A character device, a
// FIFO, `-`, /dev/stdout, /dev/stderr and /dev/fd/N are written straight through (users
// pipe our output). A symlink is resolved and the rule applied to its target, which is
// replaced while the link stays. A directory is never replaced by a file; a socket or a
// block device is never written.
//
// An output DIRECTORY (a run's results) replaces an existing directory only with --force,
// and only when it holds our marker file (results.json of our schema, judged by the
// caller) and nothing but what we write. A run builds its results in a partial directory
// TARGET.partial-<pid>-XXXXXX whose marker names the process, host and boot; the next run
// into the same place removes those of runs that are no longer alive, saying so.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace syncscope {

enum class PathKind { Missing, Regular, Directory, CharDevice, Fifo, Socket, BlockDevice, Other };
const char* describe(PathKind kind);  // "a regular file", "a directory", "a FIFO", ...
// What is at `path`, following symlinks (a dangling symlink is Missing).
PathKind path_kind(const std::filesystem::path& path);

struct OutputFile {
  std::filesystem::path requested;  // as given
  std::filesystem::path target;     // where the bytes go: symlinks resolved
  PathKind existing = PathKind::Missing;
  bool stream = false;  // written straight through (no temporary file, no rename)
  int stream_fd = -1;   // >= 0: write to this open descriptor ("-" and /dev/stdout: 1)
};

// Decides how `path` may be written; throws InputError (exit 2) saying what is there when
// it must not be: a directory, a socket or block device, a regular file without `force`,
// a missing directory, a symlink loop.
OutputFile plan_output_file(const std::filesystem::path& path, bool force);

// How to recognise a run directory we wrote.
struct OwnedDirRules {
  std::string marker = "results.json";  // a regular file at the top
  // True when the marker file is ours (e.g. parses as results.json of our schema).
  std::function<bool(const std::filesystem::path& marker_file)> marker_is_ours;
  // Globs (core/glob.hpp) over paths relative to the directory, '/'-separated: everything
  // we write ("results.json", "traces", "traces/*.json.gz"). Anything else there makes the
  // directory not ours to replace.
  std::vector<std::string> allowed;
  // When set: the manifest file (core/dir_manifest.hpp) publish writes, and the only
  // authority --force takes: every file must be listed with its size and content, and a
  // directory without one is not replaced. `allowed` then only names what may be there.
  std::string manifest;
};

struct OutputDir {
  std::filesystem::path requested;  // as given
  std::filesystem::path target;     // absolute, symlinks resolved, no trailing separator
  bool via_symlink = false;         // a symbolic link led from requested to target
  bool exists = false;
};

// Decides whether `dir` may receive a run's results; throws InputError naming what is in
// the way: a non-directory, an existing directory without `force`, or with `force` a
// directory that is not ours or holds files we did not write.
OutputDir plan_output_dir(const std::filesystem::path& dir, bool force, const OwnedDirRules& rules);

// Creates TARGET.partial-<pid>-XXXXXX next to target (creating target's parent), readable
// like any new directory, with a marker file naming this process.
std::filesystem::path make_partial_dir(const std::filesystem::path& target);
inline constexpr const char* kPartialMarker = ".syncscope-partial";

// Removes TARGET.partial-* directories left by runs on this host and boot that are no
// longer alive (their marker's pid is gone, or is another process now). Each removal is
// reported through `log`. Directories without our marker, or from another host, stay.
std::vector<std::filesystem::path> remove_stale_partial_dirs(const std::filesystem::path& target,
                                                             const std::function<void(const std::string&)>& log);

// Moves a finished partial directory to out.target. An existing target is checked again
// (it must still be ours, and `force` given), swapped in atomically where the file system
// can (renameat2 RENAME_EXCHANGE), and the old results removed.
void publish_partial_dir(const std::filesystem::path& partial, const OutputDir& out, bool force,
                         const OwnedDirRules& rules);

// A run that stopped: removes the partial directory when it holds no file besides the
// marker and returns false; else keeps it (the complete files written so far) and returns
// true. The marker stays, so a later run removes it once this process is gone.
bool abandon_partial_dir(const std::filesystem::path& partial);

}  // namespace syncscope
