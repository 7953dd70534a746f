// Reading typed values out of simdjson On-Demand values, with errors that name the input,
// where in it (the event index or top-level key and the byte offset) and the field.
// ChromeReader derives from ValueReader; the hot getters are inline.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "string_scan.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::io_detail {

namespace od = simdjson::ondemand;

const char* type_name(od::json_type t);

// An id (pid, tid) as Chrome traces write it: a number or a string ("Spans", "stream 7").
struct IdVal {
  enum Kind : std::uint8_t { None, Int, Str } kind = None;
  std::int64_t i = 0;
  std::string_view s;
};

// Where the reader is, for error messages.
struct ReadPosition {
  std::string source_name;
  std::string_view offset_unit = "byte";  // "byte" or "decompressed byte"
  bool in_event = false;
  std::uint64_t event_index = 0;
  std::uint64_t offset = 0;  // of the current event or top-level value
  std::string top_key;
};

class ValueReader {
 public:
  std::string where() const;
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_json(simdjson::error_code e) const;
  [[noreturn]] void fail_type(std::string_view field, const char* expected, od::json_type got) const;
  void check(simdjson::error_code e) const {
    if (e) fail_json(e);
  }

  od::json_type type_of(od::value& v) const {
    od::json_type t{};
    check(v.type().get(t));
    return t;
  }
  std::string_view get_string(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::string) fail_type(field, "a string", t);
    return string_text(v);
  }
  // The text of a value known to be a string (type_of said so). Without a backslash it is
  // read in place, straight from the event's text: the same bytes simdjson's unescaping
  // would copy out (stage 1 already validated the UTF-8 of the whole value), without the
  // copy into its string buffer or the call into the library per string (perf on a 200 MB
  // trace: that unescaping was about 5% of read_trace). With a backslash simdjson unescapes
  // it and rejects a bad escape, as before. Either view lives until the next event is cut
  // from the input (the in-place one) or parsed (the unescaped one): callers copy what they keep.
  std::string_view string_text(od::value& v) const {
    const std::string_view tok = v.raw_json_token();  // '"', the text, '"', whitespace; not consumed
    if (tok.size() >= 2) {
      const char* const body = tok.data() + 1;
      const char* const q = find_quote_or_backslash_padded(body, tok.data() + tok.size());
      if (q != tok.data() + tok.size() && *q == '"') {
        od::raw_json_string consumed;
        check(v.get_raw_json_string().get(consumed));
        return {body, static_cast<std::size_t>(q - body)};
      }
    }
    std::string_view s;
    check(v.get_string().get(s));
    return s;
  }
  std::int64_t get_int(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::number) fail_type(field, "an integer", t);
    std::int64_t x = 0;
    if (v.get_int64().get(x)) fail("field \"" + std::string(field) + "\": expected an integer, got " + token(v));
    return x;
  }
  std::uint64_t get_uint(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::number) fail_type(field, "a non-negative integer", t);
    std::uint64_t x = 0;
    if (v.get_uint64().get(x))
      fail("field \"" + std::string(field) + "\": expected a non-negative integer, got " + token(v));
    return x;
  }
  bool get_bool(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::boolean) fail_type(field, "true or false", t);
    bool b = false;
    check(v.get_bool().get(b));
    return b;
  }
  // Microseconds (number or "us.nnn" string) as exact nanoseconds.
  std::int64_t get_time(od::value& v, std::string_view field) const;
  IdVal get_id(od::value& v, std::string_view field) const;
  std::int32_t narrow32(std::int64_t x, std::string_view field) const {
    if (x < std::numeric_limits<std::int32_t>::min() || x > std::numeric_limits<std::int32_t>::max())
      fail("field \"" + std::string(field) + "\": " + std::to_string(x) + " is out of range for a 32-bit value");
    return static_cast<std::int32_t>(x);
  }
  std::uint32_t narrowu32(std::uint64_t x, std::string_view field) const {
    if (x > std::numeric_limits<std::uint32_t>::max())
      fail("field \"" + std::string(field) + "\": " + std::to_string(x) + " is out of range for a 32-bit value");
    return static_cast<std::uint32_t>(x);
  }
  // f(key, value) for each member of an object, in order.
  template <class F>
  void each_field(od::object& o, F&& f) const {
    for (auto fr : o) {
      // The field by reference, not copied out with get(): that copy (two narrow stores read
      // back as one 16-byte load) stalled on store forwarding, ~6% of read_trace (perf).
      check(fr.error());
      od::field& field = fr.value_unsafe();
      // A key without a backslash is read in place (see string_text): its text runs from
      // just after the opening quote to the closing quote, which comes before the value.
      const char* const k = field.key().raw();
      const char* const value_at = field.value().raw_json_token().data();
      const char* const q = find_quote_or_backslash_padded(k, value_at);
      std::string_view key;
      if (q != value_at && *q == '"') key = std::string_view(k, static_cast<std::size_t>(q - k));
      else check(field.unescaped_key().get(key));
      f(key, field.value());
    }
  }
  template <class F>
  void each_field(od::value& v, F&& f) const {
    od::object o;
    check(v.get_object().get(o));
    each_field(o, f);
  }
  // f(element) for each element of an array.
  template <class F>
  void each_element(od::value& v, F&& f) const {
    od::array a;
    check(v.get_array().get(a));
    for (auto er : a) {
      od::value e;
      check(std::move(er).get(e));
      f(e);
    }
  }

  // Visits every part of a value we do not use, so malformed JSON there is still reported.
  void validate(od::value& v, int depth = 0) const;

  // The value's JSON text, trailing whitespace removed, at most 40 bytes (for messages).
  static std::string token(od::value& v);
  static std::string_view trim_right(std::string_view raw);

  ReadPosition pos;
};

}  // namespace syncscope::io_detail
