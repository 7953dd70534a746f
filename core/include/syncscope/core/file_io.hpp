// File input and output shared by every reader and writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace syncscope {

// True when the file starts with the gzip magic bytes (the name does not matter).
bool is_gzip_file(const std::filesystem::path& path);

// Reads a whole file, transparently gunzipping content that starts with the gzip magic
// bytes. The file is opened once and read front to back, so pipes, FIFOs, process
// substitution (/dev/fd/N) and "-" (standard input) work, gzip or not. Throws InputError
// naming the file when it cannot be read, the gzip stream is corrupt or truncated, or the
// content (after gunzip) exceeds `max_bytes` (a bound before we allocate for it).
inline constexpr std::uint64_t kDefaultMaxReadBytes = 1ull << 30;
std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes = kDefaultMaxReadBytes);

// read_file for the files we wrote and read back (results.json, timelines.json, sweep.json,
// status files, profiles): InputError naming the file unless it is a regular file (a FIFO,
// socket, device or "-" is refused before any byte is read, so nothing waits on it).
std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes = kDefaultMaxReadBytes);

// The file this thread reads or last read through read_file / read_regular_file, and the
// bytes read from it so far: what an out-of-memory message names ("out of memory while
// reading FILE (N MiB so far)"). Readers that read a file themselves may set it too.
struct ReadingNow {
  std::string file;
  std::uint64_t bytes = 0;
};
ReadingNow reading_now();
void note_reading(const std::string& file, std::uint64_t bytes_so_far);
void note_read_bytes(std::uint64_t more);  // adds to the bytes of the file noted last

// Writes `path` by the rules of core/output_policy.hpp: a regular file (or nothing) there
// is written through a temporary file in the same directory and renamed over it, so
// readers never see a partial file and a failure leaves nothing behind; a symlink's target
// is the file replaced; a character device, FIFO, "-" or /dev/stdout is written straight
// through. Refuses to replace an existing regular file unless `overwrite`, and never
// replaces a directory or another special file. Compresses with gzip when `path` ends in
// ".gz". `write` receives a sink; everything it appends becomes the file's content.
using Sink = std::function<void(std::string_view)>;
void write_file_atomic(const std::filesystem::path& path, const std::function<void(const Sink&)>& write,
                       bool overwrite = false);
void write_file_atomic(const std::filesystem::path& path, std::string_view content, bool overwrite = false);

}  // namespace syncscope
