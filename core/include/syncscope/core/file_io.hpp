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

// Reads a whole file, transparently gunzipping .gz content. Throws InputError naming the
// file when it cannot be read or the gzip stream is corrupt or truncated.
std::string read_file(const std::filesystem::path& path);

// Writes through a temporary file in the same directory, then renames it over `path`, so
// readers never see a partial file and a failure leaves nothing behind. Compresses with
// gzip when `path` ends in ".gz". Refuses to replace an existing file unless `overwrite`.
// `write` receives a sink; everything it appends becomes the file's content.
using Sink = std::function<void(std::string_view)>;
void write_file_atomic(const std::filesystem::path& path, const std::function<void(const Sink&)>& write,
                       bool overwrite = false);
void write_file_atomic(const std::filesystem::path& path, std::string_view content, bool overwrite = false);

}  // namespace syncscope
