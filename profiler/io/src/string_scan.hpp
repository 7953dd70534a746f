// Finding the end of a JSON string's text: the first '"' or '\' from a position. Shared by
// the event scanner (json_stream.cpp) and the in-place string reading (reader_values.hpp).
#pragma once

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace syncscope::io_detail {

#if defined(__SSE2__)
// Bit i set where p[i] (of 16 bytes) is a quote or a backslash.
inline unsigned quote_or_backslash_mask(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return static_cast<unsigned>(
      _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')))));
}
#endif

// The first '"' or '\\' in [p, end), or end. 16 bytes at a time where SSE2 is there (every
// x86-64), so a 200-byte kernel name costs about 13 compares, not 200.
inline const char* find_quote_or_backslash(const char* p, const char* end) {
#if defined(__SSE2__)
  for (; end - p >= 16; p += 16)
    if (const unsigned m = quote_or_backslash_mask(p); m != 0) return p + __builtin_ctz(m);
#endif
  while (p < end && *p != '"' && *p != '\\') ++p;
  return p;
}

// The same for text inside a simdjson document, which is followed by at least
// SIMDJSON_PADDING (64) readable bytes: whole 16-byte loads even where fewer than 16 bytes
// remain before `end` (keys and short strings: no byte loop), the result clipped to `end`.
inline const char* find_quote_or_backslash_padded(const char* p, const char* end) {
#if defined(__SSE2__)
  for (; p < end; p += 16)
    if (const unsigned m = quote_or_backslash_mask(p); m != 0) return std::min(p + __builtin_ctz(m), end);
  return end;
#else
  return find_quote_or_backslash(p, end);
#endif
}

}  // namespace syncscope::io_detail
