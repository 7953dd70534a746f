// Chrome trace JSON -> Trace. The scanner (json_stream) cuts the input into one event at a
// time; each event is parsed with simdjson On-Demand straight from the read buffer, its
// fields collected in one pass (keys may come in any order), then mapped by `cat` onto the
// trace model. Every value is visited, so malformed JSON anywhere in an event is reported.
// Times are kept relative to baseTimeNanoseconds until the end, because that key may come
// after traceEvents.
#include "chrome_reader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <unordered_map>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "json_stream.hpp"
#include "syncscope/core/error.hpp"
#include "text_util.hpp"

namespace syncscope::io_detail {
namespace {

namespace od = simdjson::ondemand;

// Records accumulate in fixed-size blocks and are copied into one exact-size vector at the
// end, so loading never holds a vector plus its doubled copy (peak ~ records + one block).
// Blocks and the final vector ask for transparent huge pages: first-touch page faults are
// a large part of loading time on some VMs (~40 us per 4 KiB page measured on ours).
void advise_huge(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto b = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const auto e = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);  // a hint: failure is harmless
#else
  (void)p;
  (void)bytes;
#endif
}

template <class T>
class ChunkedVec {
  static_assert(std::is_trivially_copyable_v<T>, "records are copied with memcpy");

 public:
  static constexpr std::size_t kBlockBytes = std::size_t{2} << 20;
  static constexpr std::size_t kBlock = kBlockBytes / sizeof(T);
  ChunkedVec() = default;
  ChunkedVec(const ChunkedVec&) = delete;
  ChunkedVec& operator=(const ChunkedVec&) = delete;
  ~ChunkedVec() {
    for (T* b : blocks_) std::free(b);
  }
  void push(const T& v) {
    if (fill_ == kBlock || blocks_.empty()) {
      void* p = std::aligned_alloc(kBlockBytes, kBlockBytes);
      if (p == nullptr) throw std::bad_alloc();
      // Huge pages from the second block on: a small trace then costs 4 KiB pages, not a
      // 2 MiB page per record kind (~19 MB of RSS for a trace of a few KB).
      if (!blocks_.empty()) advise_huge(p, kBlockBytes);
      blocks_.push_back(static_cast<T*>(p));
      fill_ = 0;
    }
    std::memcpy(static_cast<void*>(blocks_.back() + fill_), &v, sizeof(T));
    ++fill_;
    ++size_;
  }
  std::size_t size() const { return size_; }
  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const std::size_t n = i + 1 == blocks_.size() ? fill_ : kBlock;
      for (std::size_t j = 0; j < n; ++j) f(blocks_[i][j]);
    }
  }
  void move_into(std::vector<T>& out) {
    out.clear();
    out.shrink_to_fit();
    out.reserve(size_);
    advise_huge(out.data(), size_ * sizeof(T));
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const std::size_t n = i + 1 == blocks_.size() ? fill_ : kBlock;
      out.insert(out.end(), blocks_[i], blocks_[i] + n);
      std::free(blocks_[i]);
      blocks_[i] = nullptr;
    }
    blocks_.clear();
    size_ = 0;
    fill_ = 0;
  }

 private:
  std::vector<T*> blocks_;
  std::size_t fill_ = 0;
  std::size_t size_ = 0;
};

// Interning by a hash of a few sampled words instead of every byte: kernel names run to
// hundreds of characters and repeat millions of times. Equal strings are still compared
// in full, so collisions cost time, never correctness.
struct SampledHash {
  static std::uint64_t word(const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  std::size_t operator()(std::string_view s) const noexcept {
    std::uint64_t h = s.size() * 0x9E3779B97F4A7C15ull;
    auto mix = [&h](std::uint64_t w) { h = (h ^ w) * 0xff51afd7ed558ccdull; h ^= h >> 29; };
    const std::size_t n = s.size();
    if (n >= 8) {
      mix(word(s.data()));
      mix(word(s.data() + n - 8));
      mix(word(s.data() + std::min(n / 3, n - 8)));
      mix(word(s.data() + std::min((2 * n) / 3, n - 8)));
    } else {
      std::uint64_t w = 0;
      std::memcpy(&w, s.data(), n);
      mix(w);
    }
    return static_cast<std::size_t>(h);
  }
};

struct IdVal {
  enum Kind : std::uint8_t { None, Int, Str } kind = None;
  std::int64_t i = 0;
  std::string_view s;
};

struct Args {
  std::optional<std::int64_t> device, stream, cbid, registers, shared_memory, wait_on_stream, wait_on_corr, in_device,
      from_device, to_device;
  std::optional<std::uint64_t> context, correlation, external_id, bytes, wait_on_event_id, event_id, in_context;
  bool has_grid = false, has_block = false;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::optional<std::string_view> sync_kind, name;
  // Our own per-event block ("syncscope": {...}).
  std::optional<std::int64_t> ss_return_code, ss_device, ss_stream, ss_pid, ss_tid, ss_peer_device;
  std::optional<std::uint64_t> ss_value, ss_event_sync_id;
  std::optional<bool> ss_async, ss_is_query, ss_generated;
  std::optional<std::string_view> ss_range_kind, ss_domain;
  IdVal ss_track_tid;
};

struct Event {
  std::optional<std::string_view> ph, cat, name;
  IdVal pid, tid;
  std::optional<std::int64_t> ts, dur;
  Args args;
};

enum class Cat : std::uint8_t {
  Other,
  Kernel,
  Memcpy,
  Memset,
  Runtime,
  Driver,
  Sync,
  CudaEvent,
  UserAnnotation,
  GpuUserAnnotation,
  CpuOp,
  PythonFunction,
  Overhead,
};

Cat category_of(std::string_view c) {
  switch (c.size()) {
    case 6:
      if (c == "kernel") return Cat::Kernel;
      if (c == "cpu_op") return Cat::CpuOp;
      break;
    case 8:
      if (c == "overhead") return Cat::Overhead;
      break;
    case 9:
      if (c == "cuda_sync") return Cat::Sync;
      break;
    case 10:
      if (c == "gpu_memcpy") return Cat::Memcpy;
      if (c == "gpu_memset") return Cat::Memset;
      if (c == "cuda_event") return Cat::CudaEvent;
      break;
    case 11:
      if (c == "cuda_driver") return Cat::Driver;
      break;
    case 12:
      if (c == "cuda_runtime") return Cat::Runtime;
      break;
    case 15:
      if (c == "user_annotation") return Cat::UserAnnotation;
      if (c == "python_function") return Cat::PythonFunction;
      break;
    case 19:
      if (c == "gpu_user_annotation") return Cat::GpuUserAnnotation;
      break;
    default:
      break;
  }
  return Cat::Other;
}

const char* type_name(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "an unknown value";
}

enum class Key : std::uint8_t {
  Unknown, Ph, Cat, Name, Pid, Tid, Ts, Dur, Args,
};

// Key comparison after the switch on its length: a fixed-size memcmp the compiler inlines
// (string_view's == goes through a library memcmp of run-time length: ~4% of an import).
template <std::size_t N>
inline bool key_is(std::string_view k, const char (&lit)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), lit, N - 1) == 0;
}

Key event_key(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (key_is(k, "ph")) return Key::Ph;
      if (key_is(k, "ts")) return Key::Ts;
      break;
    case 3:
      if (key_is(k, "cat")) return Key::Cat;
      if (key_is(k, "pid")) return Key::Pid;
      if (key_is(k, "tid")) return Key::Tid;
      if (key_is(k, "dur")) return Key::Dur;
      break;
    case 4:
      if (key_is(k, "name")) return Key::Name;
      if (key_is(k, "args")) return Key::Args;
      break;
    default:
      break;
  }
  return Key::Unknown;
}

enum class ArgKey : std::uint8_t {
  Unknown, Device, Context, Stream, Correlation, ExternalId, Grid, Block, Registers, SharedMemory, Bytes, Cbid,
  SyncKind, WaitOnStream, WaitOnCorr, WaitOnEventId, EventId, InDevice, FromDevice, ToDevice, InContext, Name,
  Syncscope,
};

ArgKey arg_key(std::string_view k) {
  switch (k.size()) {
    case 4:
      if (key_is(k, "grid")) return ArgKey::Grid;
      if (key_is(k, "cbid")) return ArgKey::Cbid;
      if (key_is(k, "name")) return ArgKey::Name;
      break;
    case 5:
      if (key_is(k, "block")) return ArgKey::Block;
      if (key_is(k, "bytes")) return ArgKey::Bytes;
      break;
    case 6:
      if (key_is(k, "device")) return ArgKey::Device;
      if (key_is(k, "stream")) return ArgKey::Stream;
      break;
    case 7:
      if (key_is(k, "context")) return ArgKey::Context;
      break;
    case 8:
      if (key_is(k, "event_id")) return ArgKey::EventId;
      if (key_is(k, "inDevice")) return ArgKey::InDevice;
      if (key_is(k, "toDevice")) return ArgKey::ToDevice;
      break;
    case 9:
      if (key_is(k, "syncscope")) return ArgKey::Syncscope;
      if (key_is(k, "inContext")) return ArgKey::InContext;
      break;
    case 10:
      if (key_is(k, "fromDevice")) return ArgKey::FromDevice;
      break;
    case 11:
      if (key_is(k, "correlation")) return ArgKey::Correlation;
      if (key_is(k, "External id")) return ArgKey::ExternalId;
      break;
    case 13:
      if (key_is(k, "shared memory")) return ArgKey::SharedMemory;
      break;
    case 14:
      if (key_is(k, "cuda_sync_kind")) return ArgKey::SyncKind;
      if (key_is(k, "wait_on_stream")) return ArgKey::WaitOnStream;
      break;
    case 20:
      if (key_is(k, "registers per thread")) return ArgKey::Registers;
      break;
    case 21:
      if (key_is(k, "wait_on_cuda_event_id")) return ArgKey::WaitOnEventId;
      break;
    case 33:
      if (key_is(k, "wait_on_cuda_event_record_corr_id")) return ArgKey::WaitOnCorr;
      break;
    default:
      break;
  }
  return ArgKey::Unknown;
}

struct Block {  // the top-level "syncscope" object our writer adds
  bool present = false;
  std::int64_t schema_version = 0;
  std::optional<std::string> source_tool, source_version, trace_name;
  std::optional<std::int64_t> source_schema_version, base_time_ns;
  std::optional<std::uint64_t> dropped_records;
  std::optional<ClockBase> clock;
  std::optional<std::map<std::string, std::uint64_t>> unknown_categories;
  std::optional<std::map<std::string, std::string>> extra;
};

std::optional<ClockBase> parse_clock(std::string_view s) {
  for (auto c : {ClockBase::Unknown, ClockBase::UnixEpoch, ClockBase::Monotonic, ClockBase::Simulated})
    if (kind_name(c) == s) return c;
  return std::nullopt;
}

class ChromeReader {
 public:
  ChromeReader(ByteSource& source, const std::string& name, std::size_t chunk) : in_(source, chunk, name) {}

  Trace run();

 private:
  // ---- errors -------------------------------------------------------------------------
  std::string where() const {
    if (in_event_)
      return "traceEvents[" + std::to_string(ev_index_) + "] (" + std::string(in_.offset_unit()) + " " +
             std::to_string(ev_offset_) + ")";
    return "top-level key \"" + top_key_ + "\" (" + std::string(in_.offset_unit()) + " " + std::to_string(ev_offset_) +
           ")";
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(in_.name() + ": " + where() + ": " + what); }
  [[noreturn]] void fail_json(simdjson::error_code e) const {
    fail(std::string("malformed JSON (") + simdjson::error_message(e) + ")");
  }
  [[noreturn]] void fail_type(std::string_view field, const char* expected, od::json_type got) const {
    fail("field \"" + std::string(field) + "\": expected " + expected + ", got " + type_name(got));
  }
  void check(simdjson::error_code e) const {
    if (e) fail_json(e);
  }

  // ---- value helpers --------------------------------------------------------------------
  od::json_type type_of(od::value& v) const {
    od::json_type t{};
    check(v.type().get(t));
    return t;
  }
  std::string_view get_string(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::string) fail_type(field, "a string", t);
    std::string_view s;
    check(v.get_string().get(s));
    return s;
  }
  std::int64_t get_int(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::number) fail_type(field, "an integer", t);
    std::int64_t x = 0;
    if (v.get_int64().get(x)) fail("field \"" + std::string(field) + "\": expected an integer, got " + token(v));
    return x;
  }
  std::uint64_t get_uint(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::number) fail_type(field, "a non-negative integer", t);
    std::uint64_t x = 0;
    if (v.get_uint64().get(x))
      fail("field \"" + std::string(field) + "\": expected a non-negative integer, got " + token(v));
    return x;
  }
  bool get_bool(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    if (t != od::json_type::boolean) fail_type(field, "true or false", t);
    bool b = false;
    check(v.get_bool().get(b));
    return b;
  }
  static std::string token(od::value& v) {
    std::string_view raw = v.raw_json_token();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
      raw.remove_suffix(1);
    return std::string(raw.substr(0, 40));
  }
  // Microseconds (number or "us.nnn" string) as exact nanoseconds.
  std::int64_t get_time(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    std::string_view text;
    if (t == od::json_type::number) {
      text = v.raw_json_token();
      while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t'))
        text.remove_suffix(1);
    } else if (t == od::json_type::string) {
      check(v.get_string().get(text));
    } else {
      fail_type(field, "microseconds as a number or a \"us.nnn\" string", t);
    }
    auto ns = parse_us_as_ns(text);
    if (!ns)
      fail("field \"" + std::string(field) + "\": expected microseconds as a number or a \"us.nnn\" string, got \"" +
           std::string(text.substr(0, 40)) + "\" (or it is out of range)");
    return *ns;
  }
  IdVal get_id(od::value& v, std::string_view field) const {
    const auto t = type_of(v);
    IdVal id;
    if (t == od::json_type::number) {
      id.kind = IdVal::Int;
      id.i = get_int(v, field);
    } else if (t == od::json_type::string) {
      id.kind = IdVal::Str;
      check(v.get_string().get(id.s));
    } else {
      fail_type(field, "an integer or a string", t);
    }
    return id;
  }
  std::int32_t narrow32(std::int64_t x, std::string_view field) const {
    if (x < std::numeric_limits<std::int32_t>::min() || x > std::numeric_limits<std::int32_t>::max())
      fail("field \"" + std::string(field) + "\": " + std::to_string(x) + " is out of range for a 32-bit value");
    return static_cast<std::int32_t>(x);
  }
  std::uint32_t narrowu32(std::uint64_t x, std::string_view field) const {
    if (x > std::numeric_limits<std::uint32_t>::max())
      fail("field \"" + std::string(field) + "\": " + std::to_string(x) + " is out of range for a 32-bit value");
    return static_cast<std::uint32_t>(x);
  }
  // Visits every part of a value we do not use, so malformed JSON there is still reported.
  void validate(od::value& v, int depth = 0) const {
    if (depth > 256) fail("JSON nested more than 256 levels deep");
    switch (type_of(v)) {
      case od::json_type::array: {
        od::array a;
        check(v.get_array().get(a));
        for (auto er : a) {
          od::value e;
          check(std::move(er).get(e));
          validate(e, depth + 1);
        }
        break;
      }
      case od::json_type::object: {
        od::object o;
        check(v.get_object().get(o));
        for (auto fr : o) {
          od::field f;
          check(std::move(fr).get(f));
          std::string_view k;
          check(f.unescaped_key().get(k));
          validate(f.value(), depth + 1);
        }
        break;
      }
      case od::json_type::number: {
        double d = 0;
        if (v.get_double().get(d)) fail("malformed number " + token(v));
        break;
      }
      case od::json_type::string: {
        std::string_view s;
        check(v.get_string().get(s));
        break;
      }
      case od::json_type::boolean: {
        bool b = false;
        check(v.get_bool().get(b));
        break;
      }
      case od::json_type::null: {
        bool n = false;
        check(v.is_null().get(n));
        if (!n) fail("malformed literal (expected null)");
        break;
      }
    }
  }
  std::int64_t id_or(const IdVal& v, std::int64_t dflt) const {
    if (v.kind == IdVal::Int) return v.i;
    if (v.kind == IdVal::Str) return parse_int64(v.s).value_or(dflt);
    return dflt;
  }
  StringId intern(std::string_view s) {
    if (auto it = interned_.find(s); it != interned_.end()) return it->second;
    const StringId id = t_.intern(s);
    interned_.emplace(t_.str(id), id);  // the table's storage is stable
    return id;
  }
  StringId id_text(const IdVal& v) {
    if (v.kind == IdVal::Int) {
      char buf[24];
      auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v.i);
      return intern(std::string_view(buf, static_cast<std::size_t>(p - buf)));
    }
    if (v.kind == IdVal::Str) return intern(v.s);
    return kNoString;
  }

  // ---- parsing --------------------------------------------------------------------------
  void read_events_array();
  void handle_event(const ValueView& view);
  void parse_args(od::value& v, Args& a);
  void parse_ss_args(od::value& v, Args& a);
  void parse_triple(od::value& v, std::string_view field, std::int32_t (&out)[3]);
  void handle_top(const std::string& key, const ValueView& view);
  void parse_devices(od::value& v);
  void parse_block(od::value& v);
  void dispatch(Event& e);
  void handle_complete(Event& e);
  void handle_metadata(Event& e);
  void note_start(std::int64_t rel) {
    if (rel < min_rel_) {
      min_rel_ = rel;
      min_index_ = ev_index_;
      min_offset_ = ev_offset_;
    }
  }
  void note_end(std::int64_t rel) { max_rel_ = std::max(max_rel_, rel); }
  std::int64_t end_of(std::int64_t start, std::int64_t dur) const {
    std::int64_t end = 0;
    if (__builtin_add_overflow(start, dur, &end)) fail("ts + dur overflows 64-bit nanoseconds");
    return end;
  }
  void finish();

  JsonPull in_;
  od::parser parser_;
  Trace t_;
  ChunkedVec<ApiCall> api_;
  ChunkedVec<Kernel> kernels_;
  ChunkedVec<Memcpy> memcpys_;
  ChunkedVec<Memset> memsets_;
  ChunkedVec<SyncRecord> syncs_;
  ChunkedVec<CudaEventRecord> events_;
  ChunkedVec<Range> ranges_;
  ChunkedVec<OverheadRecord> overheads_;
  ChunkedVec<OtherEvent> others_;
  std::unordered_map<StringId, std::uint64_t> unknown_;
  std::unordered_map<std::string_view, StringId, SampledHash> interned_;

  bool in_event_ = false;
  std::uint64_t ev_index_ = 0;
  std::uint64_t ev_offset_ = 0;
  std::string top_key_;
  bool saw_events_ = false;
  bool kineto_ = false;
  std::optional<std::int64_t> base_ns_;
  Block block_;
  std::map<std::string, std::string> top_extra_;
  std::int64_t min_rel_ = std::numeric_limits<std::int64_t>::max();
  std::uint64_t min_index_ = 0;
  std::uint64_t min_offset_ = 0;
  std::int64_t max_rel_ = std::numeric_limits<std::int64_t>::min();
};

Trace ChromeReader::run() {
  int c = in_.peek();
  if (c < 0) throw InputError(in_.name() + ": empty file; expected Chrome trace JSON");
  if (c == 0xEF) {  // UTF-8 byte order mark
    for (int expect : {0xEF, 0xBB, 0xBF}) {
      const auto off = in_.offset();
      if (in_.peek() != expect) in_.fail(off, "invalid byte order mark");
      in_.consume();
    }
    c = in_.peek();
  }
  if (c == '[') {  // the JSON Array Format: just the events
    read_events_array();
  } else if (c == '{') {
    in_.consume();
    bool first = true;
    for (;;) {
      c = in_.peek();
      if (c == '}' && first) {
        in_.consume();
        break;
      }
      const auto key_offset = in_.offset();
      if (c != '"') in_.fail(key_offset, "expected a quoted key in the top-level object");
      ValueView kv = in_.scan_value();
      std::string key;
      {
        in_event_ = false;
        top_key_ = "?";
        ev_offset_ = key_offset;
        od::document doc;
        check(parser_.iterate(kv.data, kv.size, kv.capacity).get(doc));
        std::string_view k;
        check(doc.get_string().get(k));
        key.assign(k);
      }
      if (in_.peek() != ':') in_.fail(in_.offset(), "expected ':' after top-level key \"" + key + "\"");
      in_.consume();
      if (key == "traceEvents") {
        if (in_.peek() != '[') in_.fail(in_.offset(), "\"traceEvents\" must be an array of events");
        if (saw_events_) in_.fail(key_offset, "\"traceEvents\" appears twice");
        read_events_array();
      } else {
        ValueView v = in_.scan_value();
        handle_top(key, v);
      }
      first = false;
      c = in_.peek();
      if (c == ',') {
        in_.consume();
        continue;
      }
      if (c == '}') {
        in_.consume();
        break;
      }
      in_.fail(in_.offset(), c < 0 ? "the input ends inside the top-level object (truncated file?)"
                                   : "expected ',' or '}' after the value of top-level key \"" + key + "\"");
    }
    if (!saw_events_)
      throw InputError(in_.name() + ": no \"traceEvents\" array: not a Chrome trace (expected {\"traceEvents\": [...]})");
  } else {
    throw InputError(in_.name() + ": not a trace file: expected Chrome trace JSON (starting with '{' or '['), "
                                  "gzip-compressed JSON, or a syncscope trace");
  }
  if (in_.peek() >= 0) in_.fail(in_.offset(), "unexpected data after the end of the JSON document");
  finish();
  return std::move(t_);
}

void ChromeReader::read_events_array() {
  saw_events_ = true;
  in_.consume();  // '['
  int c = in_.peek();
  if (c == ']') {
    in_.consume();
    return;
  }
  for (std::uint64_t i = 0;; ++i) {
    ValueView v = in_.scan_value();
    ev_index_ = i;
    ev_offset_ = v.offset;
    in_event_ = true;
    handle_event(v);
    in_event_ = false;
    c = in_.peek();
    if (c == ',') {
      in_.consume();
      if (in_.peek() == ']') in_.fail(in_.offset(), "trailing ',' before ']' in traceEvents (not valid JSON)");
      continue;
    }
    if (c == ']') {
      in_.consume();
      return;
    }
    in_.fail(in_.offset(), c < 0 ? "the input ends inside traceEvents after event " + std::to_string(i) +
                                       " (truncated file?)"
                                 : "expected ',' or ']' after traceEvents[" + std::to_string(i) + "]");
  }
}

void ChromeReader::handle_event(const ValueView& view) {
  od::document doc;
  check(parser_.iterate(view.data, view.size, view.capacity).get(doc));
  od::json_type t{};
  check(doc.type().get(t));
  if (t != od::json_type::object) fail(std::string("expected an event object, got ") + type_name(t));
  od::object obj;
  check(doc.get_object().get(obj));
  Event e;
  for (auto fr : obj) {
    od::field f;
    check(std::move(fr).get(f));
    std::string_view key;
    check(f.unescaped_key().get(key));
    od::value& v = f.value();
    switch (event_key(key)) {
      case Key::Ph: e.ph = get_string(v, "ph"); break;
      case Key::Cat: e.cat = get_string(v, "cat"); break;
      case Key::Name: e.name = get_string(v, "name"); break;
      case Key::Pid: e.pid = get_id(v, "pid"); break;
      case Key::Tid: e.tid = get_id(v, "tid"); break;
      case Key::Ts: e.ts = get_time(v, "ts"); break;
      case Key::Dur: e.dur = get_time(v, "dur"); break;
      case Key::Args: {
        const auto at = type_of(v);
        if (at != od::json_type::object) fail_type("args", "an object", at);
        parse_args(v, e.args);
        break;
      }
      case Key::Unknown: validate(v); break;
    }
  }
  dispatch(e);
}

void ChromeReader::parse_triple(od::value& v, std::string_view field, std::int32_t (&out)[3]) {
  const auto t = type_of(v);
  if (t != od::json_type::array) fail_type(field, "an array of 3 integers", t);
  od::array a;
  check(v.get_array().get(a));
  int n = 0;
  for (auto er : a) {
    od::value x;
    check(std::move(er).get(x));
    if (n >= 3) fail("field \"" + std::string(field) + "\": expected an array of 3 integers, got more");
    out[n++] = narrow32(get_int(x, field), field);
  }
  if (n != 3) fail("field \"" + std::string(field) + "\": expected an array of 3 integers, got " + std::to_string(n));
}

void ChromeReader::parse_args(od::value& v, Args& a) {
  od::object o;
  check(v.get_object().get(o));
  for (auto fr : o) {
    od::field f;
    check(std::move(fr).get(f));
    std::string_view key;
    check(f.unescaped_key().get(key));
    od::value& x = f.value();
    switch (arg_key(key)) {
      case ArgKey::Device: a.device = get_int(x, "args.device"); break;
      case ArgKey::Context: a.context = get_uint(x, "args.context"); break;
      case ArgKey::Stream: a.stream = get_int(x, "args.stream"); break;
      case ArgKey::Correlation: a.correlation = get_uint(x, "args.correlation"); break;
      case ArgKey::ExternalId: a.external_id = get_uint(x, "args.External id"); break;
      case ArgKey::Grid:
        parse_triple(x, "args.grid", a.grid);
        a.has_grid = true;
        break;
      case ArgKey::Block:
        parse_triple(x, "args.block", a.block);
        a.has_block = true;
        break;
      case ArgKey::Registers: a.registers = get_int(x, "args.registers per thread"); break;
      case ArgKey::SharedMemory: a.shared_memory = get_int(x, "args.shared memory"); break;
      case ArgKey::Bytes: a.bytes = get_uint(x, "args.bytes"); break;
      case ArgKey::Cbid: a.cbid = get_int(x, "args.cbid"); break;
      case ArgKey::SyncKind: a.sync_kind = get_string(x, "args.cuda_sync_kind"); break;
      case ArgKey::WaitOnStream: a.wait_on_stream = get_int(x, "args.wait_on_stream"); break;
      case ArgKey::WaitOnCorr: a.wait_on_corr = get_int(x, "args.wait_on_cuda_event_record_corr_id"); break;
      case ArgKey::WaitOnEventId: a.wait_on_event_id = get_uint(x, "args.wait_on_cuda_event_id"); break;
      case ArgKey::EventId: a.event_id = get_uint(x, "args.event_id"); break;
      case ArgKey::InDevice: a.in_device = get_int(x, "args.inDevice"); break;
      case ArgKey::FromDevice: a.from_device = get_int(x, "args.fromDevice"); break;
      case ArgKey::ToDevice: a.to_device = get_int(x, "args.toDevice"); break;
      case ArgKey::InContext: a.in_context = get_uint(x, "args.inContext"); break;
      case ArgKey::Name:
        // "name" is the payload of process_name/thread_name metadata; elsewhere just data.
        if (type_of(x) == od::json_type::string) a.name = get_string(x, "args.name");
        else validate(x);
        break;
      case ArgKey::Syncscope: {
        const auto t = type_of(x);
        if (t != od::json_type::object) fail_type("args.syncscope", "an object", t);
        parse_ss_args(x, a);
        break;
      }
      case ArgKey::Unknown: validate(x); break;
    }
  }
}

void ChromeReader::parse_ss_args(od::value& v, Args& a) {
  od::object o;
  check(v.get_object().get(o));
  for (auto fr : o) {
    od::field f;
    check(std::move(fr).get(f));
    std::string_view key;
    check(f.unescaped_key().get(key));
    od::value& x = f.value();
    if (key == "track_tid") a.ss_track_tid = get_id(x, "args.syncscope.track_tid");
    else if (key == "return_code") a.ss_return_code = get_int(x, "args.syncscope.return_code");
    else if (key == "device") a.ss_device = get_int(x, "args.syncscope.device");
    else if (key == "stream") a.ss_stream = get_int(x, "args.syncscope.stream");
    else if (key == "pid") a.ss_pid = get_int(x, "args.syncscope.pid");
    else if (key == "tid") a.ss_tid = get_int(x, "args.syncscope.tid");
    else if (key == "peer_device") a.ss_peer_device = get_int(x, "args.syncscope.peer_device");
    else if (key == "value") a.ss_value = get_uint(x, "args.syncscope.value");
    else if (key == "event_sync_id") a.ss_event_sync_id = get_uint(x, "args.syncscope.event_sync_id");
    else if (key == "async") a.ss_async = get_bool(x, "args.syncscope.async");
    else if (key == "is_query") a.ss_is_query = get_bool(x, "args.syncscope.is_query");
    else if (key == "generated") a.ss_generated = get_bool(x, "args.syncscope.generated");
    else if (key == "range_kind") a.ss_range_kind = get_string(x, "args.syncscope.range_kind");
    else if (key == "domain") a.ss_domain = get_string(x, "args.syncscope.domain");
    else validate(x);
  }
}

void ChromeReader::dispatch(Event& e) {
  if (!e.ph) fail("missing required field \"ph\" (the event phase, e.g. \"X\")");
  if (e.ph->size() != 1) fail("field \"ph\": expected a one-letter event phase, got \"" + std::string(e.ph->substr(0, 20)) + "\"");
  const char ph = (*e.ph)[0];
  if (e.args.ss_track_tid.kind != IdVal::None) e.tid = e.args.ss_track_tid;  // undo our writer's overlap lanes
  switch (ph) {
    case 's':
    case 't':
    case 'f':
      // Flow arrows. Launch->GPU arrows ("ac2g") follow from correlation ids and are
      // re-created on write; other flow kinds are presentation only.
      return;
    case 'M':
      handle_metadata(e);
      return;
    case 'X':
      handle_complete(e);
      return;
    default:
      break;
  }
  if (!e.ts) fail("missing required field \"ts\"");
  if (!e.name && ph != 'E' && ph != 'e') fail("missing required field \"name\"");
  OtherEvent o;
  o.category = e.cat ? intern(*e.cat) : kNoString;
  o.name = e.name ? intern(*e.name) : kNoString;
  o.phase = ph;
  o.pid = id_text(e.pid);
  o.tid = id_text(e.tid);
  o.start = *e.ts;
  o.duration = 0;
  note_start(o.start);
  note_end(o.start);
  ++unknown_[o.category];
  others_.push(o);
}

void ChromeReader::handle_metadata(Event& e) {
  if (!e.name) fail("missing required field \"name\" in a metadata (\"M\") event");
  if (e.args.ss_generated.value_or(false)) return;  // names our writer made up for unnamed tracks
  if (!e.args.name) return;                          // sort indexes, labels: presentation only
  if (*e.name == "process_name") {
    t_.track_names.push_back({std::string(t_.str(id_text(e.pid))), std::string(), std::string(*e.args.name)});
  } else if (*e.name == "thread_name") {
    t_.track_names.push_back(
        {std::string(t_.str(id_text(e.pid))), std::string(t_.str(id_text(e.tid))), std::string(*e.args.name)});
  }
}

void ChromeReader::handle_complete(Event& e) {
  if (!e.name) fail("missing required field \"name\"");
  if (!e.ts) fail("missing required field \"ts\"");
  const Cat cat = e.cat ? category_of(*e.cat) : Cat::Other;
  if (!e.dur && cat != Cat::Other) fail("missing required field \"dur\" (an \"X\" event needs a duration)");
  const std::int64_t start = *e.ts;
  const std::int64_t dur = e.dur.value_or(0);
  if (dur < 0) fail("negative \"dur\" (" + std::to_string(dur) + " ns); durations must be >= 0");
  const std::int64_t end = end_of(start, dur);
  note_start(start);
  note_end(end);
  const Args& a = e.args;
  switch (cat) {
    case Cat::Runtime:
    case Cat::Driver: {
      ApiCall r;
      r.kind = cat == Cat::Runtime ? ApiKind::Runtime : ApiKind::Driver;
      r.name = intern(*e.name);
      r.cbid = a.cbid ? narrow32(*a.cbid, "args.cbid") : -1;
      r.pid = id_or(e.pid, -1);
      r.tid = id_or(e.tid, -1);
      r.start = start;
      r.end = end;
      r.correlation = a.correlation.value_or(0);
      r.external_id = a.external_id.value_or(0);
      r.return_code = a.ss_return_code ? narrow32(*a.ss_return_code, "args.syncscope.return_code") : 0;
      r.device = a.ss_device ? narrow32(*a.ss_device, "args.syncscope.device")
                             : a.device ? narrow32(*a.device, "args.device") : -1;
      api_.push(r);
      return;
    }
    case Cat::Kernel: {
      Kernel k;
      k.name = intern(*e.name);
      k.device = narrow32(a.device ? *a.device : id_or(e.pid, -1), "args.device");
      k.context = narrowu32(a.context.value_or(0), "args.context");
      k.stream = a.stream ? *a.stream : id_or(e.tid, -1);
      k.start = start;
      k.end = end;
      k.correlation = a.correlation.value_or(0);
      k.external_id = a.external_id.value_or(0);
      if (a.has_grid) std::copy(std::begin(a.grid), std::end(a.grid), k.grid);
      if (a.has_block) std::copy(std::begin(a.block), std::end(a.block), k.block);
      k.registers_per_thread = a.registers ? narrow32(*a.registers, "args.registers per thread") : 0;
      k.shared_memory_bytes = a.shared_memory ? narrow32(*a.shared_memory, "args.shared memory") : 0;
      kernels_.push(k);
      return;
    }
    case Cat::Memcpy: {
      Memcpy m;
      parse_memcpy_name(*e.name, m.kind, m.src_kind, m.dst_kind);
      m.async = a.ss_async.value_or(false);
      m.bytes = a.bytes.value_or(0);
      const std::int64_t dev = a.device ? *a.device : a.in_device ? *a.in_device : id_or(e.pid, -1);
      m.device = narrow32(dev, "args.device");
      if (a.ss_peer_device) {
        m.peer_device = narrow32(*a.ss_peer_device, "args.syncscope.peer_device");
      } else if (a.from_device && a.to_device) {
        // Kineto's peer-to-peer copies name source, executing and destination devices.
        m.peer_device = narrow32(*a.from_device != dev ? *a.from_device : *a.to_device, "args.fromDevice");
      }
      m.context = narrowu32(a.context ? *a.context : a.in_context.value_or(0), "args.context");
      m.stream = a.stream ? *a.stream : id_or(e.tid, -1);
      m.start = start;
      m.end = end;
      m.correlation = a.correlation.value_or(0);
      m.external_id = a.external_id.value_or(0);
      memcpys_.push(m);
      return;
    }
    case Cat::Memset: {
      Memset m;
      m.memory_kind = parse_memset_name(*e.name);
      m.bytes = a.bytes.value_or(0);
      m.value = a.ss_value ? narrowu32(*a.ss_value, "args.syncscope.value") : 0;
      m.async = a.ss_async.value_or(false);
      m.device = narrow32(a.device ? *a.device : id_or(e.pid, -1), "args.device");
      m.context = narrowu32(a.context.value_or(0), "args.context");
      m.stream = a.stream ? *a.stream : id_or(e.tid, -1);
      m.start = start;
      m.end = end;
      m.correlation = a.correlation.value_or(0);
      m.external_id = a.external_id.value_or(0);
      memsets_.push(m);
      return;
    }
    case Cat::Sync: {
      SyncRecord s;
      s.type = parse_kineto_sync_kind(a.sync_kind ? *a.sync_kind : *e.name);
      s.device = narrow32(a.device ? *a.device : id_or(e.pid, -1), "args.device");
      s.context = narrowu32(a.context.value_or(0), "args.context");
      // Kineto prints the stream's absolute value as tid (-1 becomes 1): only args are exact.
      s.stream = a.stream.value_or(-1);
      s.event_id = a.wait_on_event_id.value_or(0);
      s.event_sync_id = a.ss_event_sync_id.value_or(0);
      s.wait_on_stream = a.wait_on_stream.value_or(-1);
      s.start = start;
      s.end = end;
      s.correlation = a.correlation.value_or(0);
      s.external_id = a.external_id.value_or(0);
      s.return_code = a.ss_return_code ? narrow32(*a.ss_return_code, "args.syncscope.return_code") : 0;
      s.is_query = a.ss_is_query.value_or(false);
      s.wait_on_event_record_correlation = a.wait_on_corr.value_or(-1);
      syncs_.push(s);
      return;
    }
    case Cat::CudaEvent: {
      CudaEventRecord r;
      r.device = narrow32(a.device ? *a.device : id_or(e.pid, -1), "args.device");
      r.context = narrowu32(a.context.value_or(0), "args.context");
      r.stream = a.stream ? *a.stream : id_or(e.tid, -1);
      r.event_id = a.event_id.value_or(0);
      r.event_sync_id = a.ss_event_sync_id.value_or(0);
      r.timestamp = start;
      r.correlation = a.correlation.value_or(0);
      events_.push(r);
      return;
    }
    case Cat::UserAnnotation:
    case Cat::GpuUserAnnotation:
    case Cat::CpuOp:
    case Cat::PythonFunction: {
      Range r;
      r.kind = cat == Cat::UserAnnotation      ? RangeKind::UserAnnotation
               : cat == Cat::GpuUserAnnotation ? RangeKind::GpuUserAnnotation
               : cat == Cat::CpuOp             ? RangeKind::CpuOp
                                               : RangeKind::PythonFunction;
      if (a.ss_range_kind) {
        auto k = parse_range_kind(*a.ss_range_kind);
        if (!k) fail("field \"args.syncscope.range_kind\": unknown range kind \"" + std::string(*a.ss_range_kind) + "\"");
        r.kind = *k;
      }
      r.name = intern(*e.name);
      r.domain = a.ss_domain ? intern(*a.ss_domain) : kNoString;
      if (cat == Cat::GpuUserAnnotation) {
        // Kineto puts GPU annotations on the stream's track: pid = device, tid = stream.
        r.device = narrow32(a.device ? *a.device : id_or(e.pid, -1), "pid");
        r.stream = a.stream ? *a.stream : id_or(e.tid, -1);
        r.pid = a.ss_pid.value_or(-1);
        r.tid = a.ss_tid.value_or(-1);
      } else {
        r.pid = id_or(e.pid, -1);
        r.tid = id_or(e.tid, -1);
        r.device = a.ss_device ? narrow32(*a.ss_device, "args.syncscope.device") : -1;
        r.stream = a.ss_stream.value_or(-1);
      }
      r.start = start;
      r.end = end;
      r.external_id = a.external_id.value_or(0);
      r.correlation = a.correlation.value_or(0);
      ranges_.push(r);
      return;
    }
    case Cat::Overhead: {
      OverheadRecord o;
      o.name = intern(*e.name);
      o.pid = id_or(e.pid, -1);
      o.tid = id_or(e.tid, -1);
      o.start = start;
      o.end = end;
      overheads_.push(o);
      return;
    }
    case Cat::Other: {
      OtherEvent o;
      o.category = e.cat ? intern(*e.cat) : kNoString;
      o.name = intern(*e.name);
      o.phase = 'X';
      o.pid = id_text(e.pid);
      o.tid = id_text(e.tid);
      o.start = start;
      o.duration = dur;
      ++unknown_[o.category];
      others_.push(o);
      return;
    }
  }
}

void ChromeReader::handle_top(const std::string& key, const ValueView& view) {
  top_key_ = key;
  ev_offset_ = view.offset;
  od::document doc;
  check(parser_.iterate(view.data, view.size, view.capacity).get(doc));
  od::json_type t{};
  check(doc.type().get(t));
  const bool scalar = t != od::json_type::object && t != od::json_type::array;
  auto want = [&](od::json_type w, const char* what) {
    if (t != w) fail(std::string("expected ") + what + ", got " + type_name(t));
  };
  if (key == "schemaVersion") {
    want(od::json_type::number, "an integer");
    std::int64_t x = 0;
    if (doc.get_int64().get(x)) fail("expected an integer schema version");
    t_.meta.source_schema_version = narrow32(x, "schemaVersion");
    kineto_ = true;
  } else if (key == "baseTimeNanoseconds") {
    want(od::json_type::number, "an integer number of nanoseconds");
    std::int64_t x = 0;
    if (doc.get_int64().get(x) || x < 0) fail("expected a non-negative integer number of nanoseconds");
    base_ns_ = x;
    kineto_ = true;
  } else if (key == "traceName") {
    want(od::json_type::string, "a string");
    std::string_view s;
    check(doc.get_string().get(s));
    t_.meta.trace_name.assign(s);
  } else if (key == "displayTimeUnit") {
    want(od::json_type::string, "a string");  // presentation only: ts is always microseconds
    std::string_view s;
    check(doc.get_string().get(s));
  } else if (key == "deviceProperties" || key == kSyncscopeKey) {
    want(key == kSyncscopeKey ? od::json_type::object : od::json_type::array,
         key == kSyncscopeKey ? "an object" : "an array of device objects");
    od::value v;
    check(doc.get_value().get(v));
    if (key == kSyncscopeKey) parse_block(v);
    else parse_devices(v);
  } else if (t == od::json_type::string) {
    std::string_view s;
    check(doc.get_string().get(s));
    top_extra_[key] = std::string(s);
  } else {
    if (scalar) {
      // Numbers and literals: check them, keep their text.
      if (t == od::json_type::number) {
        double d = 0;
        if (doc.get_double().get(d)) fail("malformed number");
      } else if (t == od::json_type::boolean) {
        bool b = false;
        check(doc.get_bool().get(b));
      } else {
        bool n = false;
        check(doc.is_null().get(n));
        if (!n) fail("malformed literal");
      }
    } else {
      od::value v;
      check(doc.get_value().get(v));
      validate(v);
    }
    std::string_view raw = view.text();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
      raw.remove_suffix(1);
    top_extra_[key] = std::string(raw);
  }
}

void ChromeReader::parse_devices(od::value& v) {
  kineto_ = true;
  od::array arr;
  check(v.get_array().get(arr));
  for (auto er : arr) {
    od::value dv;
    check(std::move(er).get(dv));
    const auto t = type_of(dv);
    if (t != od::json_type::object) fail_type("deviceProperties[]", "an object", t);
    od::object o;
    check(dv.get_object().get(o));
    DeviceProperties d;
    for (auto fr : o) {
      od::field f;
      check(std::move(fr).get(f));
      std::string_view k;
      check(f.unescaped_key().get(k));
      od::value& x = f.value();
      if (k == "id") d.id = narrow32(get_int(x, "id"), "id");
      else if (k == "name") d.name = std::string(get_string(x, "name"));
      else if (k == "totalGlobalMem") d.total_memory_bytes = get_uint(x, "totalGlobalMem");
      else if (k == "computeMajor") d.compute_major = narrow32(get_int(x, "computeMajor"), "computeMajor");
      else if (k == "computeMinor") d.compute_minor = narrow32(get_int(x, "computeMinor"), "computeMinor");
      else if (k == "maxThreadsPerBlock") d.max_threads_per_block = narrow32(get_int(x, k), "maxThreadsPerBlock");
      else if (k == "maxThreadsPerMultiprocessor")
        d.max_threads_per_sm = narrow32(get_int(x, k), "maxThreadsPerMultiprocessor");
      else if (k == "regsPerBlock") d.regs_per_block = narrow32(get_int(x, k), "regsPerBlock");
      else if (k == "regsPerMultiprocessor") d.regs_per_sm = narrow32(get_int(x, k), "regsPerMultiprocessor");
      else if (k == "warpSize") d.warp_size = narrow32(get_int(x, k), "warpSize");
      else if (k == "sharedMemPerBlock") d.shared_mem_per_block = get_int(x, k);
      else if (k == "sharedMemPerBlockOptin") d.shared_mem_per_block_optin = get_int(x, k);
      else if (k == "sharedMemPerMultiprocessor") d.shared_mem_per_sm = get_int(x, k);
      else if (k == "numSms") d.sm_count = narrow32(get_int(x, k), "numSms");
      else validate(x);
    }
    t_.devices.push_back(std::move(d));
  }
}

void ChromeReader::parse_block(od::value& v) {
  block_.present = true;
  od::object o;
  check(v.get_object().get(o));
  for (auto fr : o) {
    od::field f;
    check(std::move(fr).get(f));
    std::string_view k;
    check(f.unescaped_key().get(k));
    od::value& x = f.value();
    const std::string field = "syncscope." + std::string(k);
    if (k == "schema_version") {
      block_.schema_version = get_int(x, field);
    } else if (k == "source_tool") {
      block_.source_tool = std::string(get_string(x, field));
    } else if (k == "source_version") {
      block_.source_version = std::string(get_string(x, field));
    } else if (k == "trace_name") {
      block_.trace_name = std::string(get_string(x, field));
    } else if (k == "source_schema_version") {
      block_.source_schema_version = narrow32(get_int(x, field), field);
    } else if (k == "base_time_ns") {
      block_.base_time_ns = get_int(x, field);
    } else if (k == "dropped_records") {
      block_.dropped_records = get_uint(x, field);
    } else if (k == "clock") {
      auto s = get_string(x, field);
      block_.clock = parse_clock(s);
      if (!block_.clock) fail("field \"syncscope.clock\": unknown clock \"" + std::string(s) + "\"");
    } else if (k == "unknown_categories" || k == "extra") {
      const auto t = type_of(x);
      if (t != od::json_type::object) fail_type(field, "an object", t);
      od::object m;
      check(x.get_object().get(m));
      if (k == "extra") block_.extra.emplace();
      else block_.unknown_categories.emplace();
      for (auto mr : m) {
        od::field mf;
        check(std::move(mr).get(mf));
        std::string_view mk;
        check(mf.unescaped_key().get(mk));
        if (k == "extra") (*block_.extra)[std::string(mk)] = std::string(get_string(mf.value(), field + "." + std::string(mk)));
        else (*block_.unknown_categories)[std::string(mk)] = get_uint(mf.value(), field + "." + std::string(mk));
      }
    } else {
      validate(x);
    }
  }
  if (block_.schema_version < 1)
    fail("field \"syncscope.schema_version\": missing or not a positive integer");
  if (block_.schema_version > kTraceSchemaVersion)
    fail("written with trace schema_version " + std::to_string(block_.schema_version) + ", newer than this build's " +
         std::to_string(kTraceSchemaVersion) + "; upgrade syncscope to read it");
}

void ChromeReader::finish() {
  in_event_ = false;
  auto& meta = t_.meta;
  const std::int64_t base = base_ns_.value_or(0);
  if (min_rel_ != std::numeric_limits<std::int64_t>::max()) {
    std::int64_t first = 0;
    std::int64_t last = 0;
    if (__builtin_add_overflow(base, min_rel_, &first) || __builtin_add_overflow(base, max_rel_, &last))
      throw InputError(in_.name() + ": baseTimeNanoseconds " + std::to_string(base) +
                       " plus the event times overflows 64-bit nanoseconds");
    if (first < 0)
      throw InputError(in_.name() + ": traceEvents[" + std::to_string(min_index_) + "] (" +
                       std::string(in_.offset_unit()) + " " + std::to_string(min_offset_) +
                       "): negative timestamp (ts " + std::to_string(min_rel_) + " ns + baseTimeNanoseconds " +
                       std::to_string(base) + "); timestamps must be >= 0");
  }
  if (base != 0) {
    auto shift = [base](auto& v, auto... members) {
      v.for_each([&](auto& r) { ((r.*members += base), ...); });
    };
    shift(api_, &ApiCall::start, &ApiCall::end);
    shift(kernels_, &Kernel::start, &Kernel::end);
    shift(memcpys_, &Memcpy::start, &Memcpy::end);
    shift(memsets_, &Memset::start, &Memset::end);
    shift(syncs_, &SyncRecord::start, &SyncRecord::end);
    shift(events_, &CudaEventRecord::timestamp);
    shift(ranges_, &Range::start, &Range::end);
    shift(overheads_, &OverheadRecord::start, &OverheadRecord::end);
    shift(others_, &OtherEvent::start);
  }
  api_.move_into(t_.api_calls);
  kernels_.move_into(t_.kernels);
  memcpys_.move_into(t_.memcpys);
  memsets_.move_into(t_.memsets);
  syncs_.move_into(t_.syncs);
  events_.move_into(t_.cuda_events);
  ranges_.move_into(t_.ranges);
  overheads_.move_into(t_.overheads);
  others_.move_into(t_.others);

  meta.base_time_ns = base;
  if (base_ns_) meta.clock = ClockBase::UnixEpoch;
  for (const auto& [cat, n] : unknown_) meta.unknown_categories[cat == kNoString ? "(none)" : std::string(t_.str(cat))] += n;
  const bool kineto_cats = !t_.kernels.empty() || !t_.api_calls.empty() || !t_.ranges.empty() || !t_.memcpys.empty();
  if (kineto_ || kineto_cats) meta.source_tool = "torch.profiler";
  std::string version;
  auto add_version = [&](const char* key, const char* label) {
    if (auto it = top_extra_.find(key); it != top_extra_.end()) {
      if (!version.empty()) version += ", ";
      version += label + it->second;
    }
  };
  add_version("cupti_version", "CUPTI ");
  add_version("cuda_driver_version", "CUDA driver ");
  add_version("cuda_runtime_version", "CUDA runtime ");
  meta.source_version = version;
  meta.extra = std::move(top_extra_);

  if (block_.present) {  // our own file: its block is the exact model metadata
    meta.schema_version = static_cast<int>(block_.schema_version);
    if (block_.source_tool) meta.source_tool = *block_.source_tool;
    if (block_.source_version) meta.source_version = *block_.source_version;
    if (block_.trace_name) meta.trace_name = *block_.trace_name;
    if (block_.source_schema_version) meta.source_schema_version = static_cast<int>(*block_.source_schema_version);
    if (block_.dropped_records) meta.dropped_records = *block_.dropped_records;
    if (block_.clock) meta.clock = *block_.clock;
    if (block_.base_time_ns) meta.base_time_ns = *block_.base_time_ns;
    if (block_.unknown_categories) meta.unknown_categories = std::move(*block_.unknown_categories);
    if (block_.extra) meta.extra = std::move(*block_.extra);
  }
  t_.finalize();
}

}  // namespace

Trace read_chrome_json(ByteSource& source, const std::string& source_name, std::size_t chunk_bytes) {
  ChromeReader reader(source, source_name, chunk_bytes);
  return reader.run();
}

}  // namespace syncscope::io_detail
