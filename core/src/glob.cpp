#include "syncscope/core/glob.hpp"

namespace syncscope {
namespace {

// Matches one bracket class starting at p[i] == '['; sets `end` past the ']'. A malformed
// class (no closing bracket) is treated as a literal '['.
bool match_class(std::string_view p, std::size_t i, char c, std::size_t& end) {
  std::size_t j = i + 1;
  bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
  if (negate) ++j;
  bool matched = false;
  bool first = true;
  for (; j < p.size() && (first || p[j] != ']'); ++j, first = false) {
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      if (p[j] <= c && c <= p[j + 2]) matched = true;
      j += 2;
    } else if (p[j] == c) {
      matched = true;
    }
  }
  if (j >= p.size()) {  // unterminated: literal '['
    end = i + 1;
    return c == '[';
  }
  end = j + 1;
  return matched != negate;
}

}  // namespace

bool glob_match(std::string_view p, std::string_view s) {
  // Iterative matcher with single-star backtracking: linear in practice, no recursion.
  std::size_t pi = 0, si = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size()) {
      char pc = p[pi];
      if (pc == '*') {
        star_p = pi++;
        star_s = si;
        continue;
      }
      if (pc == '?') {
        ++pi;
        ++si;
        continue;
      }
      if (pc == '[') {
        std::size_t end = 0;
        if (match_class(p, pi, s[si], end)) {
          pi = end;
          ++si;
          continue;
        }
      } else if (pc == s[si]) {
        ++pi;
        ++si;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p + 1;
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace syncscope
