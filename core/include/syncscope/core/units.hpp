// Time is integer nanoseconds inside syncscope; rates are SI (bytes/s, FLOP/s); fractions
// are 0..1. These helpers are the only place where units are converted.
#pragma once

#include <cmath>
#include <cstdint>

namespace syncscope {

using Ns = std::int64_t;  // a time point or duration in nanoseconds

constexpr Ns kNsPerUs = 1'000;
constexpr Ns kNsPerMs = 1'000'000;
constexpr Ns kNsPerS = 1'000'000'000;

// Rounds to the nearest nanosecond (Kineto writes microseconds with three decimals).
inline Ns ns_from_us(double us) { return static_cast<Ns>(std::llround(us * 1e3)); }
inline Ns ns_from_ms(double ms) { return static_cast<Ns>(std::llround(ms * 1e6)); }
inline Ns ns_from_s(double s) { return static_cast<Ns>(std::llround(s * 1e9)); }
constexpr double us_from_ns(Ns ns) { return static_cast<double>(ns) / 1e3; }
constexpr double ms_from_ns(Ns ns) { return static_cast<double>(ns) / 1e6; }
constexpr double s_from_ns(Ns ns) { return static_cast<double>(ns) / 1e9; }

// bytes over nanoseconds, as bytes per second; 0 when the duration is not positive.
constexpr double bytes_per_s(std::uint64_t bytes, Ns duration) {
  return duration > 0 ? static_cast<double>(bytes) * 1e9 / static_cast<double>(duration) : 0.0;
}
constexpr double gb_per_s(double bytes_per_second) { return bytes_per_second / 1e9; }

// part/whole as a 0..1 fraction; 0 when whole is 0.
constexpr double fraction(Ns part, Ns whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace syncscope
