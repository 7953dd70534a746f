// The Chrome trace reader's state, shared by its three parts: chrome_reader.cpp walks the
// document (top-level keys, the events array, deviceProperties, our "syncscope" block, the
// final time shift), event_fields.cpp reads one event's fields (generous where a value has a
// type we do not read: kept as text, counted) and event_mapping.cpp turns the event into a
// model record.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "json_stream.hpp"
#include "kineto_schema.hpp"
#include "reader_values.hpp"
#include "record_blocks.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::io_detail {

// The args fields the mapping uses, as read: integers by schema::Arg, plus the few others.
struct Args {
  std::uint64_t present = 0;  // bit per schema::Arg read
  std::uint64_t bad = 0;      // bit per schema::Arg present with a value of another type (ChromeReader::bad_)
  // Integer arguments (signed ones as two's complement; Kind holds a CopyKind). Read only
  // under `present`, so not cleared per event.
  std::array<std::uint64_t, schema::kArgCount> num;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::optional<std::string_view> sync_kind, name, labels, process_group;
  // A collective's (CollectiveArgs): "Process Group Description", "Process Group Ranks", "Collective name", "dtype".
  std::optional<std::string_view> group_desc, group_ranks, collective, dtype;
  // Our own per-event block ("syncscope": {...}).
  std::optional<std::int64_t> ss_return_code, ss_device, ss_stream, ss_pid, ss_tid, ss_peer_device;
  std::optional<std::uint64_t> ss_value, ss_event_sync_id;
  std::optional<bool> ss_async, ss_is_query, ss_generated;
  std::optional<std::string_view> ss_range_kind, ss_domain;
  IdVal ss_track_tid;

  static constexpr std::uint64_t bit(schema::Arg x) { return schema::bit(x); }
  void set(schema::Arg x, std::uint64_t v) {
    num[static_cast<std::size_t>(x)] = v;
    present |= bit(x);
  }
  bool has(schema::Arg x) const { return (present & bit(x)) != 0; }
  std::int64_t i(schema::Arg x, std::int64_t missing) const {
    return has(x) ? static_cast<std::int64_t>(num[static_cast<std::size_t>(x)]) : missing;
  }
  std::uint64_t u(schema::Arg x, std::uint64_t missing) const {
    return has(x) ? num[static_cast<std::size_t>(x)] : missing;
  }
};

struct Event {
  std::optional<std::string_view> ph, cat, name;
  IdVal pid, tid;
  std::optional<std::int64_t> ts, dur;
  IdVal id;                            // flow events: the arrow's id
  std::optional<std::string_view> bp;  // flow events: the binding point
  Args args;
  bool bad_fields = false;  // pid, tid or args of a type we do not read (ChromeReader::bad_)
};

// A value of a type the reader does not read there, kept as text for the warning.
struct BadField {
  schema::Arg arg = schema::Arg::Unknown;  // Unknown: an event-level field (`field`)
  std::string field;
  std::string_view expected;
  std::string example;  // the JSON text, at most 40 bytes
};

// The keys of one JSON object seen so far, to count keys given twice: known keys by their
// table index, others by name (up to 24 of them, behind a one-word filter).
class KeySet {
 public:
  void clear() {
    known_ = 0;
    filter_ = 0;
    n_ = 0;
  }
  bool add_known(int index) {  // false when seen before
    const std::uint64_t b = std::uint64_t{1} << (index & 63);
    const bool fresh = (known_ & b) == 0;
    known_ |= b;
    return fresh;
  }
  bool add_other(std::string_view key) {
    const std::uint64_t b = std::uint64_t{1}
                            << ((key.size() * 7 + (key.empty() ? 0 : static_cast<unsigned char>(key.back()))) & 63);
    if ((filter_ & b) != 0)
      for (std::size_t i = 0; i < n_; ++i)
        if (keys_[i] == key) return false;
    filter_ |= b;
    if (n_ < keys_.size()) keys_[n_++] = key;
    return true;
  }

 private:
  std::uint64_t known_ = 0;
  std::uint64_t filter_ = 0;
  std::size_t n_ = 0;
  std::array<std::string_view, 24> keys_;
};

struct Block {  // the top-level "syncscope" object our writer adds
  bool present = false;
  std::int64_t schema_version = 0;
  std::optional<std::string> source_tool, source_version, trace_name;
  std::optional<std::int64_t> source_schema_version, base_time_ns;
  std::optional<std::uint64_t> dropped_records;
  std::optional<ClockBase> clock;
  std::optional<std::map<std::string, std::uint64_t>> unknown_categories;
  std::optional<std::map<std::string, std::string>> extra;
  std::optional<std::optional<std::int64_t>> rank;  // outer: the key is there; inner: null is "unknown"
};

class ChromeReader : private ValueReader {
 public:
  ChromeReader(ByteSource& source, const std::string& name, std::size_t chunk) : in_(source, chunk, name) {
    pos.source_name = name;
    pos.offset_unit = source.offset_unit();
  }

  Trace run();

 private:
  // ---- the document (chrome_reader.cpp) ---------------------------------------------------
  void read_events_array();
  void handle_top(const std::string& key, const ValueView& view);
  void parse_devices(od::value& v);
  void parse_block(od::value& v);
  void finish();

  void parse_distributed_info(od::value& v);

  // ---- one event's fields (event_fields.cpp) --------------------------------------------------
  void handle_event(const ValueView& view);
  void handle_event_object(od::object& obj);
  // A run of events from the scanner (json_stream.hpp, open_run), parsed as one array: the
  // number of events read in full (the scanner is then just past the last), 0 when none.
  std::size_t handle_run(std::uint64_t first_index);
  // Reserves each record kind's final vector from the counts so far (record_blocks.hpp).
  void reserve_estimate();
  void parse_args(od::value& v, Args& a);
  void parse_ss_args(od::value& v, Args& a);
  // A value we read as an integer (a number, or text holding one: "0x1f"); nullopt, with the
  // value noted in bad_, when it is something else or out of range for `type`.
  std::optional<std::uint64_t> read_integer(od::value& v, schema::ArgType type, std::string_view field,
                                            schema::Arg arg);
  bool read_triple(od::value& v, std::string_view field, schema::Arg arg, std::int32_t (&out)[3]);
  static std::string example_of(od::value& v, od::json_type t);
  void note_bad(schema::Arg arg, std::string_view field, std::string_view expected, std::string example);
  void check_number(od::value& v) const;
  void note_duplicate(std::string_view field);
  // Turns the event's bad values and duplicate keys into counted warnings for its category;
  // false when a value the category needs was bad (the event is skipped).
  bool accept_fields(const Event& e, schema::Cat cat);
  void warn(ReadWarning::Kind kind, std::string_view category, const std::string& field, std::string_view expected,
            const std::string& example);

  // ---- one event onto the model (event_mapping.cpp) -----------------------------------------
  void dispatch(Event& e);
  void handle_complete(Event& e);
  void complete_memcpy(const Event& e, Ns start, Ns end);
  void complete_sync(const Event& e, std::int64_t device, Ns start, Ns end);
  void complete_range(const Event& e, schema::Cat cat, std::int64_t device, Ns start, Ns end);
  // A kernel's or CPU op's collective identity (PyTorch's record_param_comms args), when it has any.
  void collective_args(const Args& a, CollectiveArgs::On on, std::uint64_t correlation);
  void handle_metadata(Event& e);
  // A profile_memory "[memory]" instant (memory_events.cpp).
  void memory_event(const Event& e);
  // A kernel, copy or memset with the fields every GPU activity has (and its External id).
  template <class Record>
  Record activity(const Event& e, std::int64_t device, Ns start, Ns end) const;

  std::int64_t id_or(const IdVal& v, std::int64_t dflt) const;
  std::int64_t stream_of(const IdVal& tid) const;
  StringId intern(std::string_view s) {
    if (auto it = interned_.find(s); it != interned_.end()) return it->second;
    const StringId id = t_.intern(s);
    interned_.emplace(t_.str(id), id);  // the table's storage is stable
    return id;
  }
  StringId id_text(const IdVal& v);
  void note_start(std::int64_t rel) {
    if (rel < min_rel_) {
      min_rel_ = rel;
      min_index_ = pos.event_index;
      min_offset_ = pos.offset;
    }
  }
  void note_end(std::int64_t rel) { max_rel_ = std::max(max_rel_, rel); }
  std::int64_t end_of(std::int64_t start, std::int64_t dur) const {
    std::int64_t end = 0;
    if (__builtin_add_overflow(start, dur, &end)) fail("ts + dur overflows 64-bit nanoseconds");
    return end;
  }

  JsonPull in_;
  od::parser parser_;
  od::parser run_parser_;  // one per reader: its buffers are sized for a run once
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
  ChunkedVec<MemoryEvent> memory_;
  std::unordered_map<StringId, std::uint64_t> unknown_;
  std::unordered_map<std::string_view, StringId, SampledHash> interned_;

  // Per event: bad values and keys seen (reused), the first key given twice.
  std::vector<BadField> bad_;
  KeySet event_keys_, arg_keys_;
  std::optional<std::string> duplicate_;
  std::map<std::tuple<int, std::string, std::string>, ReadWarning> warnings_;

  bool saw_events_ = false;
  bool estimated_ = false;
  std::optional<std::int64_t> rank_;
  bool kineto_ = false;
  std::optional<std::int64_t> base_ns_;
  Block block_;
  std::map<std::string, std::string> top_extra_;
  std::int64_t min_rel_ = std::numeric_limits<std::int64_t>::max();
  std::uint64_t min_index_ = 0;
  std::uint64_t min_offset_ = 0;
  std::int64_t max_rel_ = std::numeric_limits<std::int64_t>::min();
};

}  // namespace syncscope::io_detail
