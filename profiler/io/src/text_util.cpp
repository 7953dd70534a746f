#include "text_util.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

namespace syncscope::io_detail {

namespace {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Eight ASCII digits at p (all inside the text) as a number, 8 bytes at a time (SWAR: the
// method of simdjson's parse_eight_digits_unrolled); false when any byte is not a digit.
inline bool eight_digits(const char* p, std::uint64_t& out) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if ((((v & 0xF0F0F0F0F0F0F0F0ULL) | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4))) !=
      0x3333333333333333ULL)
    return false;
  v -= 0x3030303030303030ULL;
  v = (v * 10) + (v >> 8);
  v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
       (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
      32;
  out = v;
  return true;
}

}  // namespace

std::optional<std::int64_t> parse_us_as_ns(std::string_view s) {
  // Fast path for Kineto's own form, "123.456" (non-negative, <= 15 integer digits, exactly
  // three decimals): cannot overflow, no rounding.
  if (s.size() >= 5 && s.size() <= 19 && s[s.size() - 4] == '.' && (s[0] != '0' || s.size() == 5)) {
    std::int64_t v = 0;
    bool ok = true;
    std::size_t k = 0;
    if (s.size() - 4 >= 8) {  // Kineto's timestamps: 13 integer digits; the first 8 at once
      std::uint64_t first = 0;
      ok = eight_digits(s.data(), first);
      v = static_cast<std::int64_t>(first);
      k = 8;
    }
    for (; k + 4 < s.size(); ++k) {
      ok &= is_digit(s[k]);
      v = v * 10 + (s[k] - '0');
    }
    for (std::size_t f = s.size() - 3; f < s.size(); ++f) {
      ok &= is_digit(s[f]);
      v = v * 10 + (s[f] - '0');
    }
    if (ok) return v;
  }
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && s[i] == '-') {
    neg = true;
    ++i;
  }
  // Significant digits (leading zeros dropped) and where the decimal point falls among them.
  std::array<char, 32> digits{};
  std::size_t ndigits = 0;
  bool sticky = false;     // a non-zero digit was dropped beyond the 32 kept
  std::int64_t point = 0;  // digits before the decimal point, counting dropped leading zeros as none
  std::size_t int_len = 0;
  for (; i < s.size() && is_digit(s[i]); ++i, ++int_len) {
    if (ndigits == 0 && s[i] == '0') continue;
    if (ndigits < digits.size()) digits[ndigits++] = s[i];
    else return std::nullopt;  // more than 32 integer digits cannot fit
    ++point;
  }
  if (int_len == 0) return std::nullopt;
  if (int_len > 1 && s[neg ? 1 : 0] == '0') return std::nullopt;  // JSON has no leading zeros
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t frac_len = 0;
    for (; i < s.size() && is_digit(s[i]); ++i, ++frac_len) {
      if (ndigits == 0 && s[i] == '0') {
        --point;  // 0.00123: the point sits before the (dropped) zeros
        continue;
      }
      if (ndigits < digits.size()) digits[ndigits++] = s[i];
      else if (s[i] != '0') sticky = true;
    }
    if (frac_len == 0) return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    std::size_t elen = 0;
    std::int64_t e = 0;
    for (; i < s.size() && is_digit(s[i]); ++i, ++elen)
      if (e < 100000) e = e * 10 + (s[i] - '0');
    if (elen == 0) return std::nullopt;
    point += eneg ? -e : e;
  }
  if (i != s.size()) return std::nullopt;
  if (ndigits == 0) return std::int64_t{0};
  point += 3;  // microseconds -> nanoseconds
  if (point > 19) return std::nullopt;

  // Integer part: digits[0, point), padded with zeros when point > ndigits.
  std::uint64_t v = 0;
  for (std::int64_t k = 0; k < point; ++k) {
    const int d = k < static_cast<std::int64_t>(ndigits) ? digits[static_cast<std::size_t>(k)] - '0' : 0;
    if (v > (std::numeric_limits<std::uint64_t>::max() - static_cast<unsigned>(d)) / 10) return std::nullopt;
    v = v * 10 + static_cast<unsigned>(d);
  }
  // Round on the first dropped digit (sticky digits further on cannot change half-up).
  (void)sticky;
  if (point >= 0 && point < static_cast<std::int64_t>(ndigits) && digits[static_cast<std::size_t>(point)] >= '5') ++v;
  const std::uint64_t limit = neg ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  if (v > limit) return std::nullopt;
  if (neg)
    return v == (std::uint64_t{1} << 63) ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(v);
  return static_cast<std::int64_t>(v);
}

std::optional<std::int64_t> parse_int64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parse_integer_text(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
  }
  if (auto v = parse_int64(s)) return static_cast<std::uint64_t>(*v);
  std::uint64_t u = 0;  // non-negative decimals above INT64_MAX
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return u;
}

std::optional<CopyKind> copy_kind_from_number(std::int64_t v) {
  switch (v) {
    case 0: return CopyKind::HtoH;
    case 1: return CopyKind::HtoD;
    case 2: return CopyKind::DtoH;
    case 3: return CopyKind::DtoD;
    case 4: return CopyKind::Unknown;  // cudaMemcpyDefault: inferred from the pointers
    default: return std::nullopt;
  }
}

int memcpy_kind_number(CopyKind k) {
  switch (k) {
    case CopyKind::HtoH: return 0;
    case CopyKind::HtoD: return 1;
    case CopyKind::DtoH: return 2;
    case CopyKind::DtoD: return 3;
    case CopyKind::PtoP:
    case CopyKind::Unknown: break;
  }
  return -1;
}

std::optional<std::int64_t> stream_from_track_name(std::string_view tid) {
  constexpr std::string_view prefix = "stream ";
  if (tid.substr(0, prefix.size()) != prefix) return std::nullopt;
  return parse_int64(tid.substr(prefix.size()));
}

std::optional<std::int64_t> canonical_int(std::string_view s) {
  auto v = parse_int64(s);
  if (!v) return std::nullopt;
  if (std::to_string(*v) != s) return std::nullopt;
  return v;
}

void append_us(std::string& out, std::int64_t ns) {
  std::uint64_t mag = ns < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  if (ns < 0) out.push_back('-');
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, mag / 1000);
  out.append(buf, p);
  const unsigned frac = static_cast<unsigned>(mag % 1000);
  out.push_back('.');
  out.push_back(static_cast<char>('0' + frac / 100));
  out.push_back(static_cast<char>('0' + frac / 10 % 10));
  out.push_back(static_cast<char>('0' + frac % 10));
}

// CUPTI's spellings as libkineto prints them (cupti_strings.cpp); "<unknown>" is Kineto's
// text for copy kinds it does not know.
std::string_view kineto_copy_kind(CopyKind k) {
  switch (k) {
    case CopyKind::HtoD: return "HtoD";
    case CopyKind::DtoH: return "DtoH";
    case CopyKind::DtoD: return "DtoD";
    case CopyKind::PtoP: return "PtoP";
    case CopyKind::HtoH: return "HtoH";
    case CopyKind::Unknown: break;
  }
  return "<unknown>";
}

std::string_view kineto_memory_kind(MemoryKind k) {
  switch (k) {
    case MemoryKind::Pageable: return "Pageable";
    case MemoryKind::Pinned: return "Pinned";
    case MemoryKind::Device: return "Device";
    case MemoryKind::Managed: return "Managed";
    case MemoryKind::Unknown: break;
  }
  return "Unknown";
}

std::string_view kineto_sync_kind(SyncType t) {
  switch (t) {
    case SyncType::EventSync: return "Event Sync";
    case SyncType::StreamWaitEvent: return "Stream Wait Event";
    case SyncType::StreamSync: return "Stream Sync";
    case SyncType::ContextSync: return "Context Sync";
    case SyncType::Unknown: break;
  }
  return "Unknown";
}

std::string memcpy_name(CopyKind kind, MemoryKind src, MemoryKind dst) {
  std::string s = "Memcpy ";
  s += kineto_copy_kind(kind);
  s += " (";
  s += kineto_memory_kind(src);
  s += " -> ";
  s += kineto_memory_kind(dst);
  s += ")";
  return s;
}

std::string memset_name(MemoryKind kind) { return "Memset (" + std::string(kineto_memory_kind(kind)) + ")"; }

namespace {

MemoryKind memory_kind_from(std::string_view s) {
  if (s == "Pageable") return MemoryKind::Pageable;
  if (s == "Pinned") return MemoryKind::Pinned;
  if (s == "Device" || s == "Device Static") return MemoryKind::Device;
  if (s == "Managed" || s == "Managed Static") return MemoryKind::Managed;
  return MemoryKind::Unknown;
}

CopyKind copy_kind_from(std::string_view s) {
  if (s == "HtoD") return CopyKind::HtoD;
  if (s == "DtoH") return CopyKind::DtoH;
  if (s == "DtoD") return CopyKind::DtoD;
  if (s == "PtoP") return CopyKind::PtoP;
  if (s == "HtoH") return CopyKind::HtoH;
  return CopyKind::Unknown;
}

}  // namespace

std::optional<CopyKind> copy_kind_from_text(std::string_view text) {
  if (auto v = parse_int64(text)) return copy_kind_from_number(*v);
  const CopyKind k = copy_kind_from(text);
  if (k == CopyKind::Unknown) return std::nullopt;
  return k;
}

void parse_memcpy_name(std::string_view name, CopyKind& kind, MemoryKind& src, MemoryKind& dst) {
  kind = CopyKind::Unknown;
  src = dst = MemoryKind::Unknown;
  constexpr std::string_view prefix = "Memcpy ";
  if (name.substr(0, prefix.size()) != prefix) return;
  name.remove_prefix(prefix.size());
  const auto sp = name.find(" (");
  kind = copy_kind_from(name.substr(0, sp));
  if (sp == std::string_view::npos || name.back() != ')') return;
  std::string_view inner = name.substr(sp + 2, name.size() - sp - 3);
  const auto arrow = inner.find(" -> ");
  if (arrow == std::string_view::npos) return;
  src = memory_kind_from(inner.substr(0, arrow));
  dst = memory_kind_from(inner.substr(arrow + 4));
}

MemoryKind parse_memset_name(std::string_view name) {
  constexpr std::string_view prefix = "Memset (";
  if (name.substr(0, prefix.size()) != prefix || name.empty() || name.back() != ')') return MemoryKind::Unknown;
  return memory_kind_from(name.substr(prefix.size(), name.size() - prefix.size() - 1));
}

SyncType parse_kineto_sync_kind(std::string_view s) {
  if (s == "Event Sync") return SyncType::EventSync;
  if (s == "Stream Wait Event") return SyncType::StreamWaitEvent;
  if (s == "Stream Sync") return SyncType::StreamSync;
  if (s == "Context Sync") return SyncType::ContextSync;
  return SyncType::Unknown;
}

}  // namespace syncscope::io_detail
