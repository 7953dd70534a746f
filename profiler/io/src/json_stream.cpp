#include "json_stream.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SYNCSCOPE_SCAN_AVX2 1  // an AVX2 block scanner, chosen at run time (below)
#endif

#include "string_scan.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::io_detail {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING, "views must carry simdjson's padding");

namespace {

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// End of a number or literal: structural characters and whitespace.
inline bool ends_scalar(char c) { return c == ',' || c == '}' || c == ']' || c == ':' || is_ws(c); }

// Outside strings: a quote, a bracket or a backslash (which escapes the next byte
// wherever it is, exactly as the block scanner below treats it).
inline const char* find_structural(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i bslash = _mm_set1_epi8('\\');
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open_c = _mm_set1_epi8('{');
  const __m128i close_c = _mm_set1_epi8('}');
  const __m128i open_s = _mm_set1_epi8('[');
  const __m128i close_s = _mm_set1_epi8(']');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, open_c)),
                                     _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, close_c), _mm_cmpeq_epi8(v, open_s)),
                                                  _mm_or_si128(_mm_cmpeq_epi8(v, close_s), _mm_cmpeq_epi8(v, bslash))));
    const int m = _mm_movemask_epi8(hit);
    if (m != 0) return p + __builtin_ctz(static_cast<unsigned>(m));
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '{' && *p != '}' && *p != '[' && *p != ']' && *p != '\\') ++p;
  return p;
}

// 64 bytes at a time, the way simdjson's stage 1 finds structure: bitmasks of quotes,
// backslashes and brackets; escaped characters from runs of backslashes; string interiors by
// a prefix XOR of the unescaped quotes; brackets outside strings adjust the depth.
struct BlockMasks {
  std::uint64_t quote, backslash, open, close;
};

inline BlockMasks block_masks(const char* p) {
  BlockMasks m{};
#if defined(__SSE2__)
  const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
  const __m128i oc = _mm_set1_epi8('{'), cc = _mm_set1_epi8('}'), os = _mm_set1_epi8('['), cs = _mm_set1_epi8(']');
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    const int sh = 16 * i;
    m.quote |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)))) << sh;
    m.backslash |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, bs)))) << sh;
    m.open |= static_cast<std::uint64_t>(
                  static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, oc), _mm_cmpeq_epi8(v, os)))))
              << sh;
    m.close |= static_cast<std::uint64_t>(
                   static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, cc), _mm_cmpeq_epi8(v, cs)))))
               << sh;
  }
#else
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    switch (p[i]) {
      case '"': m.quote |= bit; break;
      case '\\': m.backslash |= bit; break;
      case '{':
      case '[': m.open |= bit; break;
      case '}':
      case ']': m.close |= bit; break;
      default: break;
    }
  }
#endif
  return m;
}

inline std::uint64_t prefix_xor(std::uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// Bits of characters escaped by a backslash (simdjson's branchless odd/even run method).
// `prev_escaped` (0 or 1) says whether the block's first byte is escaped; updated for the next.
inline std::uint64_t find_escaped(std::uint64_t backslash, std::uint64_t& prev_escaped) {
  backslash &= ~prev_escaped;
  const std::uint64_t follows_escape = backslash << 1 | prev_escaped;
  constexpr std::uint64_t even_bits = 0x5555555555555555ULL;
  const std::uint64_t odd_sequence_starts = backslash & ~even_bits & ~follows_escape;
  unsigned long long sequences_starting_on_even_bits = 0;
  prev_escaped = __builtin_uaddll_overflow(odd_sequence_starts, backslash, &sequences_starting_on_even_bits) ? 1 : 0;
  const std::uint64_t invert_mask = sequences_starting_on_even_bits << 1;
  return (even_bits ^ invert_mask) & follows_escape;
}

// The scanner's state between bytes: inside a string, the next byte escaped, bracket depth.
struct ScanState {
  bool in_string = false;
  bool escape = false;
  int depth = 0;
};

// Whole 64-byte blocks from `p` while at least 64 bytes remain before `e`: returns where it
// stopped, with `done` set when the value ended there (then the return is just past it).
// `Masks::get(p)` classifies one block; inlined into each caller (one per instruction set).
template <class Masks>
[[gnu::always_inline]] inline const char* scan_blocks(const char* p, const char* e, ScanState& st, bool& done) {
  while (e - p >= 64) {
    const BlockMasks m = Masks::get(p);
    std::uint64_t prev_escaped = st.escape ? 1 : 0;
    const std::uint64_t escaped = find_escaped(m.backslash, prev_escaped);
    const std::uint64_t in_str = prefix_xor(m.quote & ~escaped) ^ (st.in_string ? ~std::uint64_t{0} : 0);
    const std::uint64_t open = m.open & ~in_str & ~escaped;
    std::uint64_t brackets = (m.open | m.close) & ~in_str & ~escaped;
    const std::uint64_t quotes_closing = m.quote & ~escaped & ~in_str;  // where a string value would end
    if (st.depth == 0 && quotes_closing != 0 &&
        (brackets == 0 || __builtin_ctzll(quotes_closing) < __builtin_ctzll(brackets))) {
      done = true;
      return p + __builtin_ctzll(quotes_closing) + 1;
    }
    while (brackets != 0) {
      const int i = __builtin_ctzll(brackets);
      if ((open >> i) & 1) {
        ++st.depth;
      } else if (--st.depth == 0) {
        done = true;
        return p + i + 1;
      }
      brackets &= brackets - 1;
    }
    st.in_string = (in_str >> 63) != 0;
    st.escape = prev_escaped != 0;
    p += 64;
  }
  return p;
}

struct BaselineMasks {
  static BlockMasks get(const char* p) { return block_masks(p); }
};

#if defined(SYNCSCOPE_SCAN_AVX2)
// The same masks from two 32-byte loads. '[' and '{' (0x5B, 0x7B) differ only in bit 0x20,
// as do ']' and '}' (0x5D, 0x7D): one compare of (byte | 0x20) finds both.
struct Avx2Masks {
  __attribute__((target("avx2"))) static std::uint64_t eq(__m256i lo, __m256i hi, __m256i c) {
    const auto a = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, c)));
    const auto b = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, c)));
    return a | static_cast<std::uint64_t>(b) << 32;
  }
  __attribute__((target("avx2"))) static BlockMasks get(const char* p) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i bit5 = _mm256_set1_epi8(0x20);
    const __m256i lo_f = _mm256_or_si256(lo, bit5), hi_f = _mm256_or_si256(hi, bit5);
    BlockMasks m;
    m.quote = eq(lo, hi, _mm256_set1_epi8('"'));
    m.backslash = eq(lo, hi, _mm256_set1_epi8('\\'));
    m.open = eq(lo_f, hi_f, _mm256_set1_epi8('{'));
    m.close = eq(lo_f, hi_f, _mm256_set1_epi8('}'));
    return m;
  }
};

__attribute__((target("avx2"))) const char* scan_blocks_avx2(const char* p, const char* e, ScanState& st, bool& done) {
  return scan_blocks<Avx2Masks>(p, e, st, done);
}

// Checked once, on first use: every x86-64 since 2013-2015 has AVX2, and the baseline build
// cannot assume it. Not a namespace-scope constant: a static initializer may run before
// libgcc's own CPU detection, where __builtin_cpu_supports answers false until
// __builtin_cpu_init has run (GCC manual, "x86 Built-in Functions").
bool has_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}
#endif

inline const char* scan_blocks_best(const char* p, const char* e, ScanState& st, bool& done) {
#if defined(SYNCSCOPE_SCAN_AVX2)
  if (has_avx2()) return scan_blocks_avx2(p, e, st, done);
#endif
  return scan_blocks<BaselineMasks>(p, e, st, done);
}

// Scans a string, object or array from `p` (its first byte, or the middle of it with `st`
// carried over from the previous chunk) up to `e`: returns where it stopped, with `done` set
// when the value ended there (the return is just past it).
const char* scan_in_chunk(const char* p, const char* e, ScanState& st, bool& done) {
  // Whole 64-byte blocks first; the scalar loop below finishes the chunk's tail with
  // the same state (in a string, next byte escaped, depth).
  p = scan_blocks_best(p, e, st, done);
  while (!done && p < e) {
    if (st.escape) {
      st.escape = false;
      ++p;
      continue;
    }
    if (st.in_string) {
      p = find_quote_or_backslash(p, e);
      if (p == e) break;
      if (*p == '\\') {
        st.escape = true;
        ++p;
        continue;
      }
      st.in_string = false;
      ++p;
      if (st.depth == 0) {
        done = true;
        break;
      }
      continue;
    }
    p = find_structural(p, e);
    if (p == e) break;
    const char ch = *p++;
    if (ch == '\\') {
      st.escape = true;
    } else if (ch == '"') {
      st.in_string = true;
    } else if (ch == '{' || ch == '[') {
      ++st.depth;
    } else if (--st.depth == 0) {
      done = true;
      break;
    }
  }
  return p;
}

}  // namespace

JsonPull::JsonPull(ByteSource& source, std::size_t chunk_bytes, std::string source_name)
    : source_(source),
      name_(std::move(source_name)),
      chunk_(std::clamp<std::size_t>(chunk_bytes, 1, std::size_t{1} << 28)),
      buf_(chunk_ + kJsonPadding + 1, '\0') {}

void JsonPull::fail(std::uint64_t offset, const std::string& what) const {
  throw InputError(name_ + ": " + std::string(source_.offset_unit()) + " " + std::to_string(offset) + ": " + what);
}

bool JsonPull::fill() {
  if (eof_) return false;
  base_ += end_;
  pos_ = 0;
  no_runs_until_fill_ = false;
  end_ = source_.read(buf_.data(), chunk_);
  if (end_ == 0) eof_ = true;
  return end_ > 0;
}

int JsonPull::peek() {
  for (;;) {
    while (pos_ < end_ && is_ws(buf_[pos_])) ++pos_;
    if (pos_ < end_) return static_cast<unsigned char>(buf_[pos_]);
    if (!fill()) return -1;
  }
}

bool JsonPull::open_run(std::size_t max_bytes, EventRun& run, bool exact) {
  if (run_open_ || no_runs_until_fill_ || pos_ == 0 || pos_ >= end_ || buf_[pos_] != '{') return false;
  char* const b = buf_.data();
  const std::size_t limit = std::min(end_, pos_ + max_bytes);
  std::size_t cut = 0;  // the last event's '}'
  if (exact) {
    // Each event's end found by our own scan (as scan_value does), the run cut after the
    // last one that ends before the limit.
    const char* p = b + pos_;
    for (;;) {
      ScanState st;
      bool done = false;
      const char* const q = scan_in_chunk(p, b + limit, st, done);
      if (!done) break;
      cut = static_cast<std::size_t>(q - b) - 1;
      const char* s = q;
      while (s < b + limit && is_ws(*s)) ++s;
      if (s == b + limit || *s != ',') break;
      ++s;
      while (s < b + limit && is_ws(*s)) ++s;
      if (s == b + limit || *s != '{') break;
      p = s;
    }
  } else {
    // The last "}" + whitespace + "," before the limit, preferring one followed by a line
    // break: a raw line break cannot be inside a JSON string, so in a pretty-printed trace
    // (Kineto's "  },\n  {") that cut is an event's end or a nested object's, never text in
    // a name (kernel names hold "}, " often: "...{lambda(int)#1}, ...").
    std::size_t any = 0;
    for (std::size_t i = limit; i-- > pos_ + 1;) {
      if (b[i] != ',') continue;
      std::size_t j = i;
      while (j > pos_ && is_ws(b[j - 1])) --j;
      if (b[j - 1] != '}') continue;
      if (any == 0) any = j - 1;
      std::size_t k = i + 1;
      while (k < end_ && is_ws(b[k]) && b[k] != '\n') ++k;
      if (k < end_ && b[k] == '\n') {
        cut = j - 1;
        break;
      }
      if (i + 4096 < limit && any != 0) break;  // no line breaks near the end: not pretty-printed
    }
    if (cut == 0) cut = any;
  }
  if (cut <= pos_) return false;
  run_open_ = true;
  run_lo_ = pos_ - 1;
  run_hi_ = cut + 1;  // <= end_: buf_ has a byte there and the padding after it
  saved_lo_ = b[run_lo_];
  saved_hi_ = b[run_hi_];
  b[run_lo_] = '[';
  b[run_hi_] = ']';
  run.data = b + run_lo_;
  run.size = run_hi_ + 1 - run_lo_;
  run.capacity = buf_.size() - run_lo_;
  return true;
}

void JsonPull::close_run() {
  if (!run_open_) return;
  close_run_after(nullptr);
  pos_ = run_hi_;
}

void JsonPull::close_run_after(const char* event) {
  if (!run_open_) return;
  buf_[run_lo_] = saved_lo_;
  buf_[run_hi_] = saved_hi_;
  run_open_ = false;
  pos_ = run_lo_ + 1;
  if (event == nullptr) return;
  ScanState st;
  bool done = false;
  const char* const end = scan_in_chunk(event, buf_.data() + end_, st, done);
  if (!done) fail(offset_of(event), "internal: an event read from a run does not end in its chunk");
  pos_ = static_cast<std::size_t>(end - buf_.data());
}

ValueView JsonPull::scan_value() {
  const int first = peek();
  const std::uint64_t start_offset = offset();
  if (first < 0) fail(start_offset, "the input ends where a JSON value was expected (truncated file?)");
  const char c0 = static_cast<char>(first);
  const bool scalar = c0 != '"' && c0 != '{' && c0 != '[';
  if (scalar && !(c0 == '-' || (c0 >= '0' && c0 <= '9') || c0 == 't' || c0 == 'f' || c0 == 'n')) {
    std::string shown = (first >= 0x20 && first < 0x7f) ? std::string("'") + c0 + "'" : "byte " + std::to_string(first);
    fail(start_offset, "expected a JSON value, found " + shown);
  }

  carry_.clear();
  bool carried = false;
  std::size_t s = pos_;
  ScanState st;  // carried from chunk to chunk
  for (;;) {
    const char* const b = buf_.data();
    const char* p = b + pos_;
    const char* const e = b + end_;
    bool done = false;
    if (scalar) {
      while (p < e && !ends_scalar(*p)) ++p;
      done = p < e;
    } else {
      p = scan_in_chunk(p, e, st, done);
    }
    pos_ = static_cast<std::size_t>(p - b);
    if (done) break;
    // The value continues in the next chunk: keep what we have and read on.
    carry_.insert(carry_.end(), b + s, b + end_);
    carried = true;
    if (carry_.size() > kMaxValueBytes)
      fail(start_offset, "a single JSON value is larger than " + std::to_string(kMaxValueBytes >> 20) +
                             " MiB; this is not a trace event (corrupt file?)");
    s = 0;
    if (!fill()) {
      if (scalar) break;
      fail(start_offset, std::string("the input ends inside this ") +
                             (c0 == '"'   ? "string"
                              : c0 == '{' ? "object"
                                          : "array") +
                             " (truncated file?)");
    }
  }

  ValueView v;
  v.offset = start_offset;
  if (!carried) {
    v.data = buf_.data() + s;
    v.size = pos_ - s;
    v.capacity = buf_.size() - s;
    return v;
  }
  carry_.insert(carry_.end(), buf_.data() + s, buf_.data() + pos_);
  v.size = carry_.size();
  carry_.resize(carry_.size() + kJsonPadding, '\0');
  v.data = carry_.data();
  v.capacity = carry_.size();
  return v;
}

}  // namespace syncscope::io_detail
