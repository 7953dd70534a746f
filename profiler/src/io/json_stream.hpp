// A pull scanner over streamed JSON text: it walks the top-level object and hands out the
// raw text of one value at a time (one trace event, one top-level value), tracking strings,
// escapes and nesting across chunk boundaries. Values that lie inside the current chunk are
// handed out in place (no copy); a value that straddles chunks is assembled in a side
// buffer. Either way the view is followed by at least kJsonPadding readable bytes, as
// simdjson requires, so memory stays one chunk plus the largest single value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "byte_source.hpp"

namespace syncscope::io_detail {

inline constexpr std::size_t kJsonPadding = 64;  // >= SIMDJSON_PADDING (checked in the .cpp)
inline constexpr std::size_t kMaxValueBytes = std::size_t{256} << 20;

struct ValueView {
  const char* data = nullptr;
  std::size_t size = 0;
  std::size_t capacity = 0;  // readable bytes from data; >= size + kJsonPadding
  std::uint64_t offset = 0;  // of the first byte in the whole stream
  std::string_view text() const { return {data, size}; }
};

class JsonPull {
 public:
  JsonPull(ByteSource& source, std::size_t chunk_bytes, std::string source_name);

  // Next non-whitespace byte (not consumed), or -1 at the end of the input.
  int peek();
  void consume() { ++pos_; }  // only after peek() returned a byte
  std::uint64_t offset() const { return base_ + pos_; }

  // The raw text of the next JSON value (after optional whitespace). Throws InputError when
  // the input ends inside the value or the value does not start like one.
  ValueView scan_value();

  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const;
  const std::string& name() const { return name_; }
  std::string_view offset_unit() const { return source_.offset_unit(); }

 private:
  bool fill();

  ByteSource& source_;
  std::string name_;
  std::size_t chunk_;
  std::vector<char> buf_;   // chunk_ + kJsonPadding
  std::size_t pos_ = 0;     // next unread byte in buf_
  std::size_t end_ = 0;     // bytes of buf_ holding data
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  std::vector<char> carry_;  // a value that straddles chunks
};

}  // namespace syncscope::io_detail
