#include "syncscope/core/bounds.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include "syncscope/core/error.hpp"

namespace syncscope::bounds {

namespace {

std::string g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string describe_int(const Range& r) {
  return "an integer in " + std::to_string(static_cast<long long>(r.lo)) + ".." +
         std::to_string(static_cast<long long>(r.hi)) + " (" + r.why + ")";
}

std::string describe_number(const Range& r, const char* unit) {
  const std::string u = (unit != nullptr && *unit) ? std::string(" ") + unit : std::string();
  return "a number in [" + g(r.lo) + ", " + g(r.hi) + "]" + u + " (" + r.why + ")";
}

std::optional<long long> parse_int_in(const std::string& text, const Range& r) {
  long long v = 0;
  std::size_t pos = 0;
  try {
    v = std::stoll(text, &pos);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (pos == 0 || pos != text.size() || !r.contains(static_cast<double>(v))) return std::nullopt;
  return v;
}

std::optional<double> parse_number_in(const std::string& text, const Range& r) {
  double v = 0;
  std::size_t pos = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (pos == 0 || pos != text.size() || !r.contains(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::int64_t> ns_checked(double ns) {
  if (!(ns >= 0 && ns < kMaxTimeNs)) return std::nullopt;  // NaN fails both
  return static_cast<std::int64_t>(std::llround(ns));
}

std::optional<std::uint64_t> mem_available_bytes() {
  if (const char* e = std::getenv("SYNCSCOPE_MEM_AVAILABLE_BYTES"); e != nullptr && *e) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(e, &end, 10);
    if (end != e && *end == '\0') return static_cast<std::uint64_t>(v);
  }
  std::ifstream in("/proc/meminfo");
  std::string key;
  unsigned long long value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return static_cast<std::uint64_t>(value) * 1024;  // the file says kB (KiB)
  }
  return std::nullopt;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

void check_memory(double estimated_bytes, const std::string& what, const std::string& fix) {
  const auto avail = mem_available_bytes();
  if (!avail) return;  // cannot tell: let the allocation decide
  if (!(estimated_bytes <= static_cast<double>(*avail)))
    throw InputError(what + " needs an estimated " + format_bytes(estimated_bytes) + " of memory, more than the " +
                     format_bytes(static_cast<double>(*avail)) + " this machine has available (MemAvailable, " +
                     "/proc/meminfo)" + (fix.empty() ? std::string() : "; " + fix));
}

}  // namespace syncscope::bounds
