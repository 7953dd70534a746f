#include "json_stream.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "syncscope/core/error.hpp"

namespace syncscope::io_detail {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING, "views must carry simdjson's padding");

namespace {

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// End of a number or literal: structural characters and whitespace.
inline bool ends_scalar(char c) { return c == ',' || c == '}' || c == ']' || c == ':' || is_ws(c); }

// Inside a string only the closing quote and backslashes matter.
inline const char* find_quote_or_backslash(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i bslash = _mm_set1_epi8('\\');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
    if (m != 0) return p + __builtin_ctz(static_cast<unsigned>(m));
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '\\') ++p;
  return p;
}

// Outside strings: a quote or a bracket.
inline const char* find_structural(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open_c = _mm_set1_epi8('{');
  const __m128i close_c = _mm_set1_epi8('}');
  const __m128i open_s = _mm_set1_epi8('[');
  const __m128i close_s = _mm_set1_epi8(']');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, open_c)),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, close_c), _mm_cmpeq_epi8(v, open_s)), _mm_cmpeq_epi8(v, close_s)));
    const int m = _mm_movemask_epi8(hit);
    if (m != 0) return p + __builtin_ctz(static_cast<unsigned>(m));
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '{' && *p != '}' && *p != '[' && *p != ']') ++p;
  return p;
}

}  // namespace

JsonPull::JsonPull(ByteSource& source, std::size_t chunk_bytes, std::string source_name)
    : source_(source), name_(std::move(source_name)),
      chunk_(std::clamp<std::size_t>(chunk_bytes, 1, std::size_t{1} << 28)), buf_(chunk_ + kJsonPadding, '\0') {}

void JsonPull::fail(std::uint64_t offset, const std::string& what) const {
  throw InputError(name_ + ": " + std::string(source_.offset_unit()) + " " + std::to_string(offset) + ": " + what);
}

bool JsonPull::fill() {
  if (eof_) return false;
  base_ += end_;
  pos_ = 0;
  end_ = source_.read(buf_.data(), chunk_);
  if (end_ == 0) eof_ = true;
  return end_ > 0;
}

int JsonPull::peek() {
  for (;;) {
    while (pos_ < end_ && is_ws(buf_[pos_])) ++pos_;
    if (pos_ < end_) return static_cast<unsigned char>(buf_[pos_]);
    if (!fill()) return -1;
  }
}

ValueView JsonPull::scan_value() {
  const int first = peek();
  const std::uint64_t start_offset = offset();
  if (first < 0) fail(start_offset, "the input ends where a JSON value was expected (truncated file?)");
  const char c0 = static_cast<char>(first);
  const bool scalar = c0 != '"' && c0 != '{' && c0 != '[';
  if (scalar && !(c0 == '-' || (c0 >= '0' && c0 <= '9') || c0 == 't' || c0 == 'f' || c0 == 'n')) {
    std::string shown = (first >= 0x20 && first < 0x7f) ? std::string("'") + c0 + "'" : "byte " + std::to_string(first);
    fail(start_offset, "expected a JSON value, found " + shown);
  }

  carry_.clear();
  bool carried = false;
  std::size_t s = pos_;
  int depth = 0;
  bool in_string = false;
  bool escape = false;
  for (;;) {
    const char* const b = buf_.data();
    const char* p = b + pos_;
    const char* const e = b + end_;
    bool done = false;
    if (scalar) {
      while (p < e && !ends_scalar(*p)) ++p;
      done = p < e;
    } else {
      while (p < e) {
        if (in_string) {
          if (escape) {
            escape = false;
            ++p;
            continue;
          }
          p = find_quote_or_backslash(p, e);
          if (p == e) break;
          if (*p == '\\') {
            escape = true;
            ++p;
            continue;
          }
          in_string = false;
          ++p;
          if (depth == 0) {
            done = true;
            break;
          }
          continue;
        }
        p = find_structural(p, e);
        if (p == e) break;
        const char ch = *p++;
        if (ch == '"') {
          in_string = true;
        } else if (ch == '{' || ch == '[') {
          ++depth;
        } else if (--depth == 0) {
          done = true;
          break;
        } else if (depth < 0) {
          fail(offset(), "unbalanced brackets");  // unreachable: values start with an opener
        }
      }
    }
    pos_ = static_cast<std::size_t>(p - b);
    if (done) break;
    // The value continues in the next chunk: keep what we have and read on.
    carry_.insert(carry_.end(), b + s, b + end_);
    carried = true;
    if (carry_.size() > kMaxValueBytes)
      fail(start_offset, "a single JSON value is larger than " + std::to_string(kMaxValueBytes >> 20) +
                             " MiB; this is not a trace event (corrupt file?)");
    s = 0;
    if (!fill()) {
      if (scalar) break;
      fail(start_offset, std::string("the input ends inside this ") + (c0 == '"' ? "string" : c0 == '{' ? "object" : "array") +
                             " (truncated file?)");
    }
  }

  ValueView v;
  v.offset = start_offset;
  if (!carried) {
    v.data = buf_.data() + s;
    v.size = pos_ - s;
    v.capacity = buf_.size() - s;
    return v;
  }
  carry_.insert(carry_.end(), buf_.data() + s, buf_.data() + pos_);
  v.size = carry_.size();
  carry_.resize(carry_.size() + kJsonPadding, '\0');
  v.data = carry_.data();
  v.capacity = carry_.size();
  return v;
}

}  // namespace syncscope::io_detail
