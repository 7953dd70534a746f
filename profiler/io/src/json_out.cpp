#include "json_out.hpp"

#include "text_util.hpp"

namespace syncscope::io_detail {
namespace {

// Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there are not one.
std::size_t utf8_len(const unsigned char* p, std::size_t n) {
  const unsigned c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) { return i < n && p[i] >= lo && p[i] <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

}  // namespace

void JsonOut::str(std::string_view s) {
  buf_.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t run = 0;  // start of a run of bytes copied as they are
  std::size_t i = 0;
  auto flush_run = [&] { buf_.append(s.data() + run, i - run); };
  while (i < n) {
    const unsigned c = p[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t len = utf8_len(p + i, n - i);
      if (len > 0) {
        i += len;
        continue;
      }
      flush_run();
      buf_.append("\\ufffd");
      run = ++i;
      continue;
    }
    flush_run();
    switch (c) {
      case '"': buf_.append("\\\""); break;
      case '\\': buf_.append("\\\\"); break;
      case '\n': buf_.append("\\n"); break;
      case '\r': buf_.append("\\r"); break;
      case '\t': buf_.append("\\t"); break;
      case '\b': buf_.append("\\b"); break;
      case '\f': buf_.append("\\f"); break;
      default: {
        static const char* hex = "0123456789abcdef";
        buf_.append("\\u00");
        buf_.push_back(hex[c >> 4]);
        buf_.push_back(hex[c & 15]);
      }
    }
    run = ++i;
  }
  flush_run();
  buf_.push_back('"');
}

// Whole microseconds as integers: Holistic Trace Analysis reads "ts" into an integer column
// only when every value is one, and warns about rounding otherwise.
void JsonOut::us(Ns ns) {
  if (ns % 1000 == 0) num(ns / 1000);
  else append_us(buf_, ns);
}

void JsonOut::id_text(std::string_view s) {
  if (auto v = canonical_int(s)) num(*v);
  else str(s);
}

}  // namespace syncscope::io_detail
