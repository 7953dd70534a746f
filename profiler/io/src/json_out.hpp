// A small streaming JSON writer for the trace writer: text accumulates in a buffer that is
// handed to the sink about every megabyte; strings are escaped so the output is valid JSON
// for strict parsers whatever bytes the model holds.
#pragma once

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "syncscope/core/file_io.hpp"
#include "syncscope/core/units.hpp"

namespace syncscope::io_detail {

class JsonOut {
 public:
  explicit JsonOut(const Sink& sink) : sink_(sink) { buf_.reserve(kFlush + 4096); }
  void raw(std::string_view s) { buf_.append(s); }
  void ch(char c) { buf_.push_back(c); }
  // A JSON string: quotes, backslashes and control characters escaped; invalid UTF-8 bytes
  // become U+FFFD.
  void str(std::string_view s);
  template <class I>
  void num(I v) {
    char b[24];
    auto [e, ec] = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, e);
  }
  // Nanoseconds as microseconds: an integer when whole, else with three decimals.
  void us(Ns ns);
  // An id kept as text (OtherEvent, TrackName): a number when it is one, else a string.
  void id_text(std::string_view s);
  void key(std::string_view k) {
    str(k);
    buf_.push_back(':');
  }
  void maybe_flush() {
    if (buf_.size() >= kFlush) {
      sink_(buf_);
      buf_.clear();
    }
  }
  void finish() {
    if (!buf_.empty()) sink_(buf_);
    buf_.clear();
  }

 private:
  static constexpr std::size_t kFlush = std::size_t{1} << 20;
  const Sink& sink_;
  std::string buf_;
};

// Comma-separated members of one JSON object.
class Obj {
 public:
  explicit Obj(JsonOut& o) : o_(o) { o_.ch('{'); }
  JsonOut& key(std::string_view k) {
    if (!first_) o_.ch(',');
    first_ = false;
    o_.key(k);
    return o_;
  }
  void close() { o_.ch('}'); }

 private:
  JsonOut& o_;
  bool first_ = true;
};

// A nested object opened only when something goes into it (args.syncscope).
class LazyObj {
 public:
  LazyObj(Obj& parent, std::string_view key) : parent_(parent), key_(key) {}
  JsonOut& key(std::string_view k) {
    if (!inner_) inner_.emplace(parent_.key(key_));
    return inner_->key(k);
  }
  void close() {
    if (inner_) inner_->close();
  }

 private:
  Obj& parent_;
  std::string_view key_;
  std::optional<Obj> inner_;
};

}  // namespace syncscope::io_detail
