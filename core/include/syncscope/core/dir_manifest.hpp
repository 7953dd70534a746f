// What a run wrote into its results directory, file by file (`--force` removes
// only files whose names and contents the run's own manifest lists).
//
// The manifest is a text file at the directory's top, written last, before the directory is
// published:
//
//   syncscope-manifest 1
//   dir traces
//   file 1834 9f3c0b7a11d2e4f5 results.json
//
// one line per directory and per regular file (size in bytes, FNV-1a 64 of the content in
// hex, path relative to the directory, '/'-separated). FNV-1a is not a cryptographic hash: it
// tells our file from a different one put in its place by accident (a user's copy, an
// edit), not from one crafted to collide; such a file would have been put there to be lost.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace syncscope {

inline constexpr const char* kRunManifest = "syncscope-manifest.txt";

// Lists every directory and regular file under `dir` (except the manifest itself and the
// names in `skip`) into dir/`name`. Error when `dir` holds a link or a special file.
void write_dir_manifest(const std::filesystem::path& dir, const std::string& name = kRunManifest,
                        const std::vector<std::string>& skip = {});

// Entries under `dir` that the manifest does not list as they are now: not listed, of
// another size or content, links, special files ("traces/mine.json.gz (not in the
// manifest)"); at most `limit`. A missing or unreadable manifest is one entry saying so.
std::vector<std::string> dir_manifest_mismatches(const std::filesystem::path& dir,
                                                 const std::string& name = kRunManifest, std::size_t limit = 5);

// FNV-1a 64 of a file's content as 16 hex digits (read in chunks).
std::string file_fnv1a_hex(const std::filesystem::path& file);

}  // namespace syncscope
