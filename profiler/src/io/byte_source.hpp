// Sources of bytes for the streaming readers: a plain file, a gzip file inflated on the
// fly, or memory. Each hands out at most the requested number of bytes per call, so a
// reader never holds more than one chunk of the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace syncscope::io_detail {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `max` bytes into `dst`; returns 0 only at the end of the data. Throws
  // InputError on read errors and corrupt compressed data.
  virtual std::size_t read(char* dst, std::size_t max) = 0;
  // How the offsets a reader reports should be described ("byte" or "decompressed byte").
  virtual std::string_view offset_unit() const { return "byte"; }
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  std::size_t read(char* dst, std::size_t max) override;

 private:
  std::string_view data_;
};

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  std::size_t read(char* dst, std::size_t max) override;

 private:
  std::string name_;
  std::FILE* f_ = nullptr;
};

// Inflates gzip (all members of a multi-member file) from another source.
class GzipSource final : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> compressed, std::string name, std::size_t chunk_bytes);
  ~GzipSource() override;
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;
  std::size_t read(char* dst, std::size_t max) override;
  std::string_view offset_unit() const override { return "decompressed byte"; }

 private:
  struct State;
  std::unique_ptr<ByteSource> in_;
  std::string name_;
  std::unique_ptr<State> z_;
  std::vector<char> inbuf_;
  std::uint64_t consumed_ = 0;  // compressed bytes handed to zlib so far
  bool in_eof_ = false;
  bool done_ = false;
};

// Opens a file for streaming: gzip is recognized by its magic bytes, not by the name.
std::unique_ptr<ByteSource> open_file_source(const std::filesystem::path& path, std::size_t chunk_bytes);

}  // namespace syncscope::io_detail
