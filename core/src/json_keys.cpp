#include "syncscope/core/json_keys.hpp"

#include <cstdint>
#include <set>
#include <vector>

#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope {

namespace {

void put_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex4(std::string_view s, std::size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    const char c = s[k];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// The body of a JSON string (between the quotes) unescaped (RFC 8259 section 7).
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    const char e = s[++i];
    switch (e) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        int cp = hex4(s, i + 1);
        if (cp < 0) {
          out += e;
          break;
        }
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 2 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u') {
          const int lo = hex4(s, i + 3);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        put_utf8(out, static_cast<std::uint32_t>(cp));
        break;
      }
      default: out += e;  // \" \\ \/
    }
  }
  return out;
}

struct Frame {
  bool object = false;
  bool expect_key = false;
  std::size_t index = 0;
  std::string key;
  std::set<std::string> keys;
};

std::string path_of(const std::vector<Frame>& stack) {
  std::string p = "$";
  for (const auto& f : stack) p += f.object ? "." + f.key : "[" + std::to_string(f.index) + "]";
  return p;
}

}  // namespace

std::optional<DuplicateKey> find_duplicate_key(std::string_view s) {
  std::vector<Frame> stack;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '\n':
        ++line;
        line_start = i + 1;
        break;
      case '{':
      case '[': {
        Frame f;
        f.object = c == '{';
        f.expect_key = f.object;
        stack.push_back(std::move(f));
        break;
      }
      case '}':
      case ']':
        if (stack.empty()) return std::nullopt;
        stack.pop_back();
        break;
      case ',':
        if (stack.empty()) return std::nullopt;
        if (stack.back().object) stack.back().expect_key = true;
        else ++stack.back().index;
        break;
      case '"': {
        const std::size_t start = i;
        std::size_t j = i + 1;
        bool escaped = false;
        for (; j < s.size(); ++j) {
          if (escaped) escaped = false;
          else if (s[j] == '\\') escaped = true;
          else if (s[j] == '"') break;
        }
        if (j >= s.size()) return std::nullopt;  // unterminated: the parser says so
        if (!stack.empty() && stack.back().object && stack.back().expect_key) {
          Frame& f = stack.back();
          f.expect_key = false;
          const std::string_view raw = s.substr(start + 1, j - start - 1);
          f.key = raw.find('\\') == std::string_view::npos ? std::string(raw) : unescape(raw);
          if (!f.keys.insert(f.key).second) return DuplicateKey{line, start - line_start + 1, path_of(stack), f.key};
        }
        i = j;  // strings hold no newline (a raw one is invalid JSON)
        break;
      }
      default: break;
    }
  }
  return std::nullopt;
}

void refuse_duplicate_keys(std::string_view json, std::string_view file) {
  if (auto d = find_duplicate_key(json))
    throw InputError(std::string(file) + ":" + std::to_string(d->line) + ":" + std::to_string(d->column) +
                     ": duplicate key '" + printable(d->key) + "' (at " + printable(d->path) +
                     "): a key given twice is ambiguous (a reader keeps one of the two); give each key once");
}

}  // namespace syncscope
