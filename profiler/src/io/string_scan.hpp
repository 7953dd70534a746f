// Finding the end of a JSON string's text: the first '"' or '\' from a position. Shared by
// the event scanner (json_stream.cpp) and the in-place string reading (reader_values.hpp).
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace syncscope::io_detail {

// The first '"' or '\' in [p, end), or end. 16 bytes at a time where SSE2 is there (every
// x86-64), so a 200-byte kernel name costs about 13 compares, not 200.
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

// The same for text inside a simdjson document, which is followed by at least
// SIMDJSON_PADDING (64) readable bytes: whole 16-byte loads even where fewer than 16 bytes
// remain before `end` (keys and short strings: no byte loop), the result clipped to `end`.
inline const char* find_quote_or_backslash_padded(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i bslash = _mm_set1_epi8('\\');
  for (; p < end; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
    if (m != 0) {
      const char* const q = p + __builtin_ctz(static_cast<unsigned>(m));
      return q < end ? q : end;
    }
  }
  return end;
#else
  return find_quote_or_backslash(p, end);
#endif
}

}  // namespace syncscope::io_detail
