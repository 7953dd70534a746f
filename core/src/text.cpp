#include "syncscope/core/text.hpp"

#include <cstdint>
#include <cstdio>

namespace syncscope {

namespace {

// Length of the valid UTF-8 sequence at s[i] and its code point, or 0 when the bytes there
// are not valid UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF) return 0;  // overlong / too large
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;                                         // surrogate
  return n;
}

bool is_control(std::uint32_t cp) { return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0); }

void hex_byte(std::string& out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", c);
  out += buf;
}

}  // namespace

std::optional<std::string> name_problem(std::string_view name, std::size_t max_chars) {
  if (name.empty()) return std::string("is empty");
  std::size_t chars = 0;
  for (std::size_t i = 0; i < name.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(name, i, cp);
    if (n == 0) return "is not valid UTF-8 (byte " + std::to_string(i) + ")";
    if (is_control(cp)) {
      char shown[16];
      std::snprintf(shown, sizeof shown, "U+%04X", static_cast<unsigned>(cp));
      return std::string("holds a control character (") + shown + " at byte " + std::to_string(i) +
             "); names are printed in tables, CSV and HTML";
    }
    i += n;
    ++chars;
  }
  if (chars > max_chars)
    return "has " + std::to_string(chars) + " characters; at most " + std::to_string(max_chars) + " are allowed";
  return std::nullopt;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(s, i, cp);
    if (n == 0) {
      hex_byte(out, static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (is_control(cp)) {
      for (std::size_t k = 0; k < n; ++k) hex_byte(out, static_cast<unsigned char>(s[i + k]));
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::size_t utf8_length(std::string_view s) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++chars) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(s, i, cp);
    i += n == 0 ? 1 : n;
  }
  return chars;
}

}  // namespace syncscope
