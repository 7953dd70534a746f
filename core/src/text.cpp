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

// Unicode general category Cf (format characters; Unicode 15.1, DerivedGeneralCategory.txt),
// plus U+2028/U+2029 (line and paragraph separators, Zl/Zp: a terminal or editor breaks the
// line there). These are invisible or reorder what follows: the bidi embeddings and
// overrides U+202A..U+202E and isolates U+2066..U+2069 make a name read as another
// (CVE-2021-42574, "Trojan Source").
bool is_format(std::uint32_t cp) {
  struct Range {
    std::uint32_t lo, hi;
  };
  static constexpr Range ranges[] = {
      {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
      {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},   {0x2028, 0x202E},
      {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
      {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
      {0xE0020, 0xE007F},
  };
  for (const auto& r : ranges)
    if (cp >= r.lo && cp <= r.hi) return true;
  return false;
}

void code_point(std::string& out, std::uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(cp));
  out += buf;
}

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
    if (is_format(cp)) {
      char shown[16];
      std::snprintf(shown, sizeof shown, "U+%04X", static_cast<unsigned>(cp));
      return std::string("holds an invisible format character (") + shown + " at byte " + std::to_string(i) +
             ", e.g. a bidi override that makes text read as other text); names are printed in tables, CSV and HTML";
    }
    i += n;
    ++chars;
  }
  if (chars > max_chars)
    return "has " + std::to_string(chars) + " characters; at most " + std::to_string(max_chars) + " are allowed";
  // Names become file and directory names: POSIX file systems (ext4, XFS, tmpfs) allow at most
  // 255 bytes in one component (NAME_MAX), so 128 two-byte characters would pass the character
  // count and fail at write. Longer texts (a profile's sources, max_chars > 128) are not names.
  if (max_chars <= 128 && name.size() > max_name_bytes)
    return "is " + std::to_string(name.size()) + " bytes in UTF-8; at most " + std::to_string(max_name_bytes) +
           " are allowed (it becomes a file name)";
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
    } else if (is_format(cp)) {
      code_point(out, cp);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::optional<std::string> file_name_problem(std::string_view name, std::size_t max_chars) {
  if (auto p = name_problem(name, max_chars)) return p;
  if (name == "." || name == "..") return std::string("is '") + std::string(name) + "', a directory, not a name";
  if (name.find('/') != std::string_view::npos)
    return std::string("holds '/'; a name is one file name, written in the output directory");
  return std::nullopt;
}

bool needs_escape(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(s, i, cp);
    if (n == 0 || is_control(cp) || is_format(cp)) return true;
    i += n;
  }
  return false;
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
