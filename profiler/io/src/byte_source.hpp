// Sources of bytes for the streaming readers: a plain file, a gzip file inflated on the
// fly, or memory. Each hands out at most the requested number of bytes per call, so a
// reader never holds more than one chunk of the input.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  // About how many bytes read() yields in all, when it can be told (a regular file's size; a
  // gzip file's, scaled by how much the bytes inflated so far grew); 0 when not. Only a hint
  // for reserving memory, never trusted for correctness; safe to call while another thread
  // reads (PrefetchSource).
  virtual std::uint64_t size_hint() const { return 0; }
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  std::size_t read(char* dst, std::size_t max) override;
  std::uint64_t size_hint() const override { return data_.size(); }

 private:
  std::string_view data_;
};

// A file descriptor read to its end: a regular file, standard input, a FIFO, a pipe from
// process substitution (/dev/fd/N) or a character device. Never seeks or re-opens.
class FdSource final : public ByteSource {
 public:
  FdSource(int fd, std::string name, bool owned);
  ~FdSource() override;
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;
  std::size_t read(char* dst, std::size_t max) override;
  std::uint64_t size_hint() const override { return size_; }

 private:
  int fd_;
  std::string name_;
  bool owned_;
  std::uint64_t size_ = 0;  // a regular file's size when opened; 0 for anything else
};

// Lets a reader look at the first bytes of a source and then read them again: how a
// format is recognized from the one handle that was opened (a pipe cannot be re-read).
class HeadSource final : public ByteSource {
 public:
  explicit HeadSource(std::unique_ptr<ByteSource> in) : in_(std::move(in)) {}
  // Up to n bytes from the start (fewer only at the end of the input); not consumed.
  std::string_view head(std::size_t n);
  std::size_t read(char* dst, std::size_t max) override;
  std::string_view offset_unit() const override { return in_->offset_unit(); }
  std::uint64_t size_hint() const override { return in_->size_hint(); }

 private:
  std::unique_ptr<ByteSource> in_;
  std::string head_;
  std::size_t pos_ = 0;  // bytes of head_ already handed out
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
  std::uint64_t size_hint() const override;

 private:
  struct State;
  std::unique_ptr<ByteSource> in_;
  std::string name_;
  std::unique_ptr<State> z_;
  std::vector<char> inbuf_;
  std::uint64_t consumed_ = 0;         // compressed bytes handed to zlib so far
  std::uint64_t compressed_size_ = 0;  // the compressed input's size hint, when opened
  // consumed_ and the bytes inflated, for size_hint() from the reading thread
  std::atomic<std::uint64_t> hint_in_{0}, hint_out_{0};
  bool in_eof_ = false;
  bool done_ = false;
};

// What the first bytes of an input say it is.
enum class InputKind {
  Json,    // anything else: the JSON reader says what is wrong with it
  Gzip,    // 1f 8b (RFC 1952)
  Sqlite,  // "SQLite format 3\0" (e.g. an Nsight Systems export)
};
InputKind sniff_input(std::string_view head);

// An input opened once: `source` yields its bytes (gzip already inflated), `kind` what
// they are, `name` how messages name it.
struct OpenedInput {
  std::unique_ptr<ByteSource> source;
  InputKind kind = InputKind::Json;
  std::string name;
};

// Opens `path` once for streaming ("-" is standard input) and recognizes its format from the
// first bytes of that handle: no second open, no re-read, so pipes, FIFOs and process
// substitution work, gzip or not.
OpenedInput open_input(const std::filesystem::path& path, std::size_t chunk_bytes);

}  // namespace syncscope::io_detail
