// A pull scanner over streamed JSON text: it walks the top-level object and hands out the
// raw text of one value at a time (one trace event, one top-level value), tracking strings,
// escapes and nesting across chunk boundaries. Values that lie inside the current chunk are
// handed out in place (no copy); a value that straddles chunks is assembled in a side
// buffer. Either way the view is followed by at least kJsonPadding readable bytes, as
// simdjson requires, so memory stays one chunk plus the largest single value. Events that lie
// inside the current chunk can also be handed out as a run, one array (EventRun below).
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

// A run of events (objects) lying in the current chunk, made into one JSON array in place
// for simdjson: '[' over the byte before the first event, ']' over the byte after the '}'
// where the run is cut (both restored by close_run()), so simdjson's stage 1 runs once
// over the run instead of once per event, and our own scan of each event is not needed.
// The cut is chosen without scanning (the last "}," before a limit), so it may fall inside
// an event or a string: the reader then gets an error from simdjson for the run or for its
// last event, and reads that event the exact way (ChromeReader::handle_run).
struct EventRun {
  const char* data = nullptr;  // the '['
  std::size_t size = 0;        // through the ']'
  std::size_t capacity = 0;    // readable bytes from data (at least size + kJsonPadding)
};

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

  // Opens a run of events starting at the current position, which must hold '{' and not be
  // the chunk's first byte, ending before the chunk's end and within `max_bytes` of the
  // start: cut after the last '}' followed by whitespace and ',' (one followed by a line
  // break if there is one), or with `exact`, after the last event whose end our own scan
  // finds there. False (nothing changed) when there is no such place, or after run_failed()
  // until the next chunk is read.
  bool open_run(std::size_t max_bytes, EventRun& run, bool exact);
  // Puts back the two bytes open_run() replaced and moves past the run's cut...
  void close_run();
  // ...or, when the reader stopped early, to the end of the event starting at `event`
  // (scanned exactly; it lies in the run), or back to the run's start when `event` is null.
  void close_run_after(const char* event);
  // No more runs in this chunk (one failed at its first event: read it event by event).
  void run_failed() { no_runs_until_fill_ = true; }
  // Stream offset of a byte of the current chunk.
  std::uint64_t offset_of(const char* p) const { return base_ + static_cast<std::uint64_t>(p - buf_.data()); }

  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const;
  const std::string& name() const { return name_; }
  std::string_view offset_unit() const { return source_.offset_unit(); }
  std::uint64_t size_hint() const { return source_.size_hint(); }

 private:
  bool fill();

  ByteSource& source_;
  std::string name_;
  std::size_t chunk_;
  std::vector<char> buf_;   // chunk_ + kJsonPadding + 1 (the +1: a run's ']' may sit at chunk_)
  std::size_t pos_ = 0;     // next unread byte in buf_
  std::size_t end_ = 0;     // bytes of buf_ holding data
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  std::vector<char> carry_;  // a value that straddles chunks
  bool run_open_ = false;
  bool no_runs_until_fill_ = false;
  std::size_t run_lo_ = 0, run_hi_ = 0;  // where open_run() wrote '[' and ']'
  char saved_lo_ = 0, saved_hi_ = 0;
};

}  // namespace syncscope::io_detail
