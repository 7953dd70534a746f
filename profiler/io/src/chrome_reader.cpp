// Chrome trace JSON -> Trace, the document half. The scanner (json_stream) cuts the input
// into one top-level value at a time, and the events into runs parsed as one array each
// (handle_run), or one event at a time where no run can be cut; all are parsed with simdjson
// On-Demand straight from the read buffer (event_mapping.cpp maps events onto the model). Times are
// kept relative to baseTimeNanoseconds until the end, because that key may come after
// traceEvents.
#include "chrome_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <limits>

#include "chrome_reader_impl.hpp"
#include "kineto_schema.hpp"
#include "text_util.hpp"

namespace syncscope::io_detail {
namespace {

constexpr std::uint64_t kEstimateAfter = std::uint64_t{4} << 20;  // bytes of input

std::optional<ClockBase> parse_clock(std::string_view s) {
  for (auto c : {ClockBase::Unknown, ClockBase::UnixEpoch, ClockBase::Monotonic, ClockBase::Simulated})
    if (kind_name(c) == s) return c;
  return std::nullopt;
}

}  // namespace

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
        pos.in_event = false;
        pos.top_key = "?";
        pos.offset = key_offset;
        od::document doc;
        check(parser_.iterate(kv.data, kv.size, kv.capacity).get(doc));
        std::string_view k;
        check(doc.get_string().get(k));
        key.assign(k);
      }
      if (in_.peek() != ':') in_.fail(in_.offset(), "expected ':' after top-level key \"" + key + "\"");
      in_.consume();
      if (schema::top_key(key) == schema::TopKey::TraceEvents) {
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
      throw InputError(in_.name() +
                       ": no \"traceEvents\" array: not a Chrome trace (expected {\"traceEvents\": [...]})");
  } else {
    throw InputError(in_.name() +
                     ": not a trace file: expected Chrome trace JSON (starting with '{' or '['), "
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
  for (std::uint64_t next = 0;;) {  // the index of the next event
    if (const std::size_t n = c == '{' ? handle_run(next) : 0; n > 0) {
      next += n;
    } else {
      ValueView v = in_.scan_value();
      pos.event_index = next;
      pos.offset = v.offset;
      pos.in_event = true;
      handle_event(v);
      pos.in_event = false;
      ++next;
    }
    const std::uint64_t i = next - 1;  // the last event read
    if (!estimated_ && in_.offset() >= kEstimateAfter) reserve_estimate();
    c = in_.peek();
    if (c == ',') {
      in_.consume();
      c = in_.peek();
      if (c == ']') in_.fail(in_.offset(), "trailing ',' before ']' in traceEvents (not valid JSON)");
      continue;
    }
    if (c == ']') {
      in_.consume();
      return;
    }
    in_.fail(in_.offset(),
             c < 0 ? "the input ends inside traceEvents after event " + std::to_string(i) + " (truncated file?)"
                   : "expected ',' or ']' after traceEvents[" + std::to_string(i) + "]");
  }
}

// Once this many bytes of events are read, each record kind's count so far, scaled to the
// input's size (a regular file's; a .json.gz's, extrapolated) and a quarter more, is
// reserved for it, so records go straight into their final vectors (record_blocks.hpp). A
// kind that grows faster later on spills into blocks, as without an estimate.
void ChromeReader::reserve_estimate() {
  estimated_ = true;
  const std::uint64_t total = in_.size_hint();
  const std::uint64_t done = in_.offset();
  if (done == 0 || total <= done) return;
  const double scale = 1.25 * static_cast<double>(total) / static_cast<double>(done);
  // Address space, not memory, but bounded all the same: no reservation above a quarter of
  // the machine's memory (a wrong hint, or a trace this machine could not hold anyway).
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t cap = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) / 4 * static_cast<std::size_t>(page)
                                                : std::size_t{1} << 30;
  auto one = [scale, cap](auto& records) {
    const double n = static_cast<double>(records.size()) * scale + 1024;
    if (records.size() > 0 && n < 1e15) records.reserve(static_cast<std::size_t>(n), cap);
  };
  one(api_);
  one(kernels_);
  one(memcpys_);
  one(memsets_);
  one(syncs_);
  one(events_);
  one(ranges_);
  one(overheads_);
  one(others_);
  one(memory_);
}

// Events that lie in the scanner's chunk, parsed as one array (json_stream.hpp, EventRun):
// simdjson's stage 1 runs once over the run rather than once per event (about 300 bytes each
// in a Kineto trace), and our own scan for each event's end is skipped; together ~20% of
// read_trace (perf). Each event is read exactly as handle_event reads it, with its own index
// and offset in messages. Whatever simdjson rejects (invalid UTF-8, a run cut inside a
// string or inside its last event, a malformed event or separator) is left to the exact
// path: the run stops after the last event read in full, and the main loop reads on from
// there one event at a time, reporting a real error as it always did. Events read in full
// are never read twice: an event's fields are only collected until its closing brace, and
// an event cut short cannot reach it (its braces do not balance before the run's ']').
std::size_t ChromeReader::handle_run(std::uint64_t first_index) {
  // Up to 64 KiB of events per run: stage 1's structural index for the run (about one
  // 4-byte entry per 4-5 bytes of text) then stays in the core's L2 cache while the events
  // are read from it.
  constexpr std::size_t kRunBytes = std::size_t{64} << 10;
  if (run_parser_.capacity() == 0 &&
      run_parser_.allocate(kRunBytes + 4096, simdjson::DEFAULT_MAX_DEPTH + 1) != simdjson::SUCCESS)
    throw std::bad_alloc();
  od::document doc;
  od::array events;
  // First cut without scanning; when stage 1 rejects that run (the cut fell inside a string,
  // or the run holds invalid UTF-8), once more cut where our own scan says an event ends;
  // when that is rejected too, event by event for the rest of the chunk.
  for (const bool exact : {false, true}) {
    EventRun run;
    if (!in_.open_run(kRunBytes, run, exact)) return 0;
    if (run_parser_.iterate(run.data, run.size, run.capacity).get(doc) == simdjson::SUCCESS &&
        doc.get_array().get(events) == simdjson::SUCCESS)
      break;
    in_.close_run_after(nullptr);
    if (exact) {
      in_.run_failed();
      return 0;
    }
  }
  std::size_t k = 0;
  const char* last = nullptr;  // the '{' of the last event read in full
  try {
    for (auto element : events) {
      od::value v;
      check(element.get(v));
      const char* const at = v.raw_json_token().data();
      pos.event_index = first_index + k;
      pos.offset = in_.offset_of(at);
      pos.in_event = true;
      od::object obj;
      check(v.get_object().get(obj));
      handle_event_object(obj);
      pos.in_event = false;
      last = at;
      ++k;
    }
  } catch (const InputError&) {
    pos.in_event = false;
    in_.close_run_after(last);
    if (k == 0) in_.run_failed();
    return k;
  }
  // The array must end at the run's own ']': a ']' earlier in the run (traceEvents closed
  // early) ends simdjson's iteration without an error, with tokens left after it.
  const char* left = nullptr;
  if (doc.current_location().get(left) == simdjson::SUCCESS) {
    in_.close_run_after(last);
    return k;
  }
  in_.close_run();
  return k;
}

void ChromeReader::handle_top(const std::string& key, const ValueView& view) {
  pos.top_key = key;
  pos.offset = view.offset;
  od::document doc;
  check(parser_.iterate(view.data, view.size, view.capacity).get(doc));
  od::json_type t{};
  check(doc.type().get(t));
  const bool scalar = t != od::json_type::object && t != od::json_type::array;
  auto want = [&](od::json_type w, const char* what) {
    if (t != w) fail(std::string("expected ") + what + ", got " + type_name(t));
  };
  using schema::TopKey;
  const TopKey which = schema::top_key(key);
  if (which == TopKey::SchemaVersion && (t == od::json_type::number || t == od::json_type::string)) {
    // An integer, or integer text (some tools write "1"); anything else is kept as text.
    std::int64_t x = 0;
    std::string_view text;
    std::optional<std::int64_t> version;
    if (t == od::json_type::string) {
      check(doc.get_string().get(text));
      version = parse_int64(text);
    } else if (!doc.get_int64().get(x)) {
      version = x;
    } else {
      double d = 0;
      if (doc.get_double().get(d)) fail("malformed number");
    }
    if (version && *version >= 0 && *version <= std::numeric_limits<std::int32_t>::max()) {
      t_.meta.source_schema_version = static_cast<int>(*version);
      kineto_ = true;
    } else {
      top_extra_[key] = std::string(t == od::json_type::string ? text : trim_right(view.text()));
    }
  } else if (which == TopKey::BaseTimeNanoseconds) {
    want(od::json_type::number, "an integer number of nanoseconds");
    std::int64_t x = 0;
    if (doc.get_int64().get(x) || x < 0) fail("expected a non-negative integer number of nanoseconds");
    base_ns_ = x;
    kineto_ = true;
  } else if (which == TopKey::TraceName || which == TopKey::DisplayTimeUnit) {
    want(od::json_type::string, "a string");  // displayTimeUnit: presentation only, ts is always microseconds
    std::string_view s;
    check(doc.get_string().get(s));
    if (which == TopKey::TraceName) t_.meta.trace_name.assign(s);
  } else if (which == TopKey::DeviceProperties || which == TopKey::Syncscope) {
    const bool block = which == TopKey::Syncscope;
    want(block ? od::json_type::object : od::json_type::array, block ? "an object" : "an array of device objects");
    od::value v;
    check(doc.get_value().get(v));
    if (block) parse_block(v);
    else parse_devices(v);
  } else if (which == TopKey::DistributedInfo && t == od::json_type::object) {
    od::value v;
    check(doc.get_value().get(v));
    parse_distributed_info(v);
    top_extra_[key] = std::string(trim_right(view.text()));  // the other members are written back as they were
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
    top_extra_[key] = std::string(trim_right(view.text()));
  }
}

void ChromeReader::parse_devices(od::value& v) {
  kineto_ = true;
  each_element(v, [&](od::value& dv) {
    const auto t = type_of(dv);
    if (t != od::json_type::object) fail_type("deviceProperties[]", "an object", t);
    DeviceProperties d;
    each_field(dv, [&](std::string_view k, od::value& x) {
      using schema::DeviceKey;
      switch (schema::value_of(schema::kDeviceKeys, schema::kDeviceKeyIndex, k, DeviceKey::Unknown)) {
        case DeviceKey::Id: d.id = narrow32(get_int(x, k), k); break;
        case DeviceKey::Name: d.name = std::string(get_string(x, k)); break;
        case DeviceKey::TotalGlobalMem: d.total_memory_bytes = get_uint(x, k); break;
        case DeviceKey::ComputeMajor: d.compute_major = narrow32(get_int(x, k), k); break;
        case DeviceKey::ComputeMinor: d.compute_minor = narrow32(get_int(x, k), k); break;
        case DeviceKey::MaxThreadsPerBlock: d.max_threads_per_block = narrow32(get_int(x, k), k); break;
        case DeviceKey::MaxThreadsPerSm: d.max_threads_per_sm = narrow32(get_int(x, k), k); break;
        case DeviceKey::RegsPerBlock: d.regs_per_block = narrow32(get_int(x, k), k); break;
        case DeviceKey::WarpSize: d.warp_size = narrow32(get_int(x, k), k); break;
        case DeviceKey::SharedMemPerBlock: d.shared_mem_per_block = get_int(x, k); break;
        case DeviceKey::NumSms: d.sm_count = narrow32(get_int(x, k), k); break;
        case DeviceKey::RegsPerSm: d.regs_per_sm = narrow32(get_int(x, k), k); break;
        case DeviceKey::SharedMemPerBlockOptin: d.shared_mem_per_block_optin = get_int(x, k); break;
        case DeviceKey::SharedMemPerSm: d.shared_mem_per_sm = get_int(x, k); break;
        case DeviceKey::Unknown: validate(x); break;
      }
    });
    t_.devices.push_back(std::move(d));
  });
}

// Kineto's {"backend": "nccl", "rank": 0, "world_size": 8, ...}: the rank, generously (a
// rank that is not an integer is no rank).
void ChromeReader::parse_distributed_info(od::value& v) {
  each_field(v, [&](std::string_view k, od::value& x) {
    const auto t = type_of(x);
    std::int64_t r = 0;
    std::string_view text;
    if (k != schema::kRank) {
      validate(x);
    } else if (t == od::json_type::number) {
      if (!x.get_int64().get(r)) rank_ = r;
      else check_number(x);
    } else if (t == od::json_type::string) {
      check(x.get_string().get(text));
      if (auto i = parse_int64(text)) rank_ = *i;
    } else {
      validate(x);
    }
  });
}

void ChromeReader::parse_block(od::value& v) {
  block_.present = true;
  each_field(v, [&](std::string_view k, od::value& x) {
    const std::string field = "syncscope." + std::string(k);
    using schema::BlockKey;
    const BlockKey which = schema::value_of(schema::kBlockKeys, schema::kBlockKeyIndex, k, BlockKey::Unknown);
    switch (which) {
      case BlockKey::SchemaVersion: block_.schema_version = get_int(x, field); break;
      case BlockKey::SourceTool: block_.source_tool = std::string(get_string(x, field)); break;
      case BlockKey::SourceVersion: block_.source_version = std::string(get_string(x, field)); break;
      case BlockKey::TraceName: block_.trace_name = std::string(get_string(x, field)); break;
      case BlockKey::SourceSchemaVersion: block_.source_schema_version = narrow32(get_int(x, field), field); break;
      case BlockKey::BaseTimeNs: block_.base_time_ns = get_int(x, field); break;
      case BlockKey::DroppedRecords: block_.dropped_records = get_uint(x, field); break;
      case BlockKey::Clock: {
        auto s = get_string(x, field);
        block_.clock = parse_clock(s);
        if (!block_.clock) fail("field \"syncscope.clock\": unknown clock \"" + std::string(s) + "\"");
        break;
      }
      case BlockKey::UnknownCategories:
      case BlockKey::Extra: {
        const auto t = type_of(x);
        if (t != od::json_type::object) fail_type(field, "an object", t);
        const bool extra = which == BlockKey::Extra;
        if (extra) block_.extra.emplace();
        else block_.unknown_categories.emplace();
        each_field(x, [&](std::string_view mk, od::value& mv) {
          const std::string sub = field + "." + std::string(mk);
          if (extra) (*block_.extra)[std::string(mk)] = std::string(get_string(mv, sub));
          else (*block_.unknown_categories)[std::string(mk)] = get_uint(mv, sub);
        });
        break;
      }
      case BlockKey::Rank:
        if (type_of(x) == od::json_type::null) {
          validate(x);
          block_.rank.emplace();
        } else {
          block_.rank.emplace(get_int(x, field));
        }
        break;
      case BlockKey::Unknown: validate(x); break;
    }
  });
  if (block_.schema_version < 1) fail("field \"syncscope.schema_version\": missing or not a positive integer");
  if (block_.schema_version > kTraceSchemaVersion)
    fail("written with trace schema_version " + std::to_string(block_.schema_version) + ", newer than this build's " +
         std::to_string(kTraceSchemaVersion) + "; upgrade syncscope to read it");
}

void ChromeReader::finish() {
  pos.in_event = false;
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
    auto shift = [base](auto& v, auto... members) { v.for_each([&](auto& r) { ((r.*members += base), ...); }); };
    shift(api_, &ApiCall::start, &ApiCall::end);
    shift(kernels_, &Kernel::start, &Kernel::end);
    shift(memcpys_, &Memcpy::start, &Memcpy::end);
    shift(memsets_, &Memset::start, &Memset::end);
    shift(syncs_, &SyncRecord::start, &SyncRecord::end);
    shift(events_, &CudaEventRecord::timestamp);
    shift(ranges_, &Range::start, &Range::end);
    shift(overheads_, &OverheadRecord::start, &OverheadRecord::end);
    shift(others_, &OtherEvent::start);
    shift(memory_, &MemoryEvent::timestamp);
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
  memory_.move_into(t_.memory);

  meta.base_time_ns = base;
  if (base_ns_) meta.clock = ClockBase::UnixEpoch;
  for (const auto& [cat, n] : unknown_)
    meta.unknown_categories[cat == kNoString ? "(none)" : std::string(t_.str(cat))] += n;
  const bool kineto_cats = !t_.kernels.empty() || !t_.api_calls.empty() || !t_.ranges.empty() || !t_.memcpys.empty();
  if (kineto_ || kineto_cats) meta.source_tool = "torch.profiler";
  std::string version;
  for (const auto& key_label : schema::kVersionKeys) {
    if (auto it = top_extra_.find(std::string(key_label[0])); it != top_extra_.end()) {
      if (!version.empty()) version += ", ";
      version += std::string(key_label[1]) + it->second;
    }
  }
  meta.source_version = version;
  meta.extra = std::move(top_extra_);
  meta.rank = rank_;
  for (auto& [key, w] : warnings_) meta.read_warnings.push_back(std::move(w));

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
    if (block_.rank) meta.rank = *block_.rank;
  }
  t_.finalize();
}

Trace read_chrome_json(ByteSource& source, const std::string& source_name, std::size_t chunk_bytes) {
  ChromeReader reader(source, source_name, chunk_bytes);
  return reader.run();
}

}  // namespace syncscope::io_detail
