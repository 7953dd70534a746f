// Chrome trace JSON -> Trace: one event's fields, collected in one pass (keys may come in any
// order; every value is visited, so malformed JSON anywhere in an event is reported).
//
// Generous where we do not need a value, exact where we do: an argument of a type we do not
// read is kept out of the record and counted once per (category, field) with its first
// value; when the event's category cannot place the event without it (a kernel's device or
// stream), the event is skipped and counted. What fails the whole trace is structural: invalid
// JSON, a non-numeric "ts" or "dur", an event that is not an object, no "ph"/"name". A key
// given twice in one event is a counted warning naming the first such event and its offset;
// the first value is kept (refusing would reject real traces over one odd event; keeping the
// last let a planted second "dur" win).
#include <algorithm>
#include <cstring>
#include <limits>

#include "chrome_reader_impl.hpp"
#include "text_util.hpp"

namespace syncscope::io_detail {

using schema::Arg;
using schema::ArgType;
using schema::Cat;
using schema::SsArg;

namespace {

// "args." + a key, for messages, without allocating: built for every field read.
class FieldName {
 public:
  FieldName(std::string_view prefix, std::string_view key) {
    const std::size_t p = std::min(prefix.size(), sizeof buf_);
    const std::size_t k = std::min(key.size(), sizeof buf_ - p);
    std::memcpy(buf_, prefix.data(), p);
    std::memcpy(buf_ + p, key.data(), k);
    size_ = p + k;
  }
  operator std::string_view() const { return {buf_, size_}; }

 private:
  char buf_[80];
  std::size_t size_;
};

bool fits(std::uint64_t bits, ArgType type, bool negative_text) {
  const auto v = static_cast<std::int64_t>(bits);
  switch (type) {
    case ArgType::Int32:
      return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
    case ArgType::UInt32: return !negative_text && bits <= std::numeric_limits<std::uint32_t>::max();
    case ArgType::UInt64: return !negative_text;
    default: return true;
  }
}

}  // namespace

void ChromeReader::handle_event(const ValueView& view) {
  od::document doc;
  check(parser_.iterate(view.data, view.size, view.capacity).get(doc));
  od::json_type t{};
  check(doc.type().get(t));
  if (t != od::json_type::object) fail(std::string("expected an event object, got ") + type_name(t));
  od::object obj;
  check(doc.get_object().get(obj));
  handle_event_object(obj);
}

void ChromeReader::handle_event_object(od::object& obj) {
  Event e;
  bad_.clear();
  event_keys_.clear();
  arg_keys_.clear();
  duplicate_.reset();
  // Written through `out`, not returned: a returned IdVal was copied back with a wide load
  // over narrow stores (a store-forwarding stall, ~2% of read_trace in perf).
  auto id = [&](od::value& v, const char* field, IdVal& out) {
    const auto vt = type_of(v);
    if (vt == od::json_type::string) {
      out = get_id(v, field);
      return;
    }
    if (vt == od::json_type::number) {
      std::int64_t i = 0;
      if (!v.get_int64().get(i)) {
        out.kind = IdVal::Int;
        out.i = i;
        out.s = {};
        return;
      }
    }
    if (vt == od::json_type::number) check_number(v);
    else validate(v);
    note_bad(Arg::Unknown, field, "an integer or a string", example_of(v, vt));
    e.bad_fields = true;
    out = IdVal{};
  };
  each_field(obj, [&](std::string_view key, od::value& v) {
    const schema::Key k = schema::event_key(key);
    if (!(k == schema::Key::Unknown ? event_keys_.add_other(key) : event_keys_.add_known(static_cast<int>(k)))) {
      // A key given twice: the first value is kept and the event counted (issue 39: a second
      // "dur" of 1e15 must not become a kernel of 1e9 s); the value is still checked as JSON.
      note_duplicate(key);
      validate(v);
      return;
    }
    switch (k) {
      case schema::Key::Ph: e.ph = get_string(v, "ph"); break;
      case schema::Key::Cat: e.cat = get_string(v, "cat"); break;
      case schema::Key::Name: e.name = get_string(v, "name"); break;
      case schema::Key::Pid: id(v, "pid", e.pid); break;
      case schema::Key::Tid: id(v, "tid", e.tid); break;
      case schema::Key::Ts: e.ts = get_time(v, "ts"); break;
      case schema::Key::Dur: e.dur = get_time(v, "dur"); break;
      case schema::Key::Id: id(v, "id", e.id); break;
      case schema::Key::Bp: e.bp = get_string(v, "bp"); break;
      case schema::Key::Args:
        if (type_of(v) == od::json_type::object) {
          parse_args(v, e.args);
        } else {
          const auto at = type_of(v);
          validate(v);
          note_bad(Arg::Unknown, "args", "an object", example_of(v, at));
          e.bad_fields = true;
        }
        break;
      case schema::Key::Unknown: validate(v); break;
    }
  });
  dispatch(e);
}

// The value's JSON text for a message (a container: its type). raw_json_token() looks at
// where the value started, so it works after the value was read.
std::string ChromeReader::example_of(od::value& v, od::json_type t) {
  if (t == od::json_type::array || t == od::json_type::object) return type_name(t);
  return std::string(trim_right(v.raw_json_token()).substr(0, 40));
}

void ChromeReader::note_bad(Arg arg, std::string_view field, std::string_view expected, std::string example) {
  bad_.push_back({arg, std::string(field), expected, std::move(example)});
}

void ChromeReader::note_duplicate(std::string_view field) {
  if (!duplicate_) duplicate_ = std::string(field);
}

// A number simdjson would not give as an integer: still valid JSON (a fraction, an
// exponent)? Malformed numbers fail the trace wherever they are.
void ChromeReader::check_number(od::value& v) const {
  double d = 0;
  if (v.get_double().get(d)) fail("malformed number " + token(v));
}

std::optional<std::uint64_t> ChromeReader::read_integer(od::value& v, ArgType type, std::string_view field, Arg arg) {
  const auto t = type_of(v);
  const bool is_signed = type == ArgType::Int32 || type == ArgType::Int64;
  if (t == od::json_type::number) {
    std::uint64_t bits = 0;
    bool ok = false;
    if (is_signed) {
      std::int64_t x = 0;
      ok = !v.get_int64().get(x);
      bits = static_cast<std::uint64_t>(x);
    } else {
      ok = !v.get_uint64().get(bits);
    }
    if (!ok) check_number(v);
    else if (fits(bits, type, false)) return bits;
  } else if (t == od::json_type::string) {
    std::string_view text;
    text = string_text(v);
    if (auto bits = parse_integer_text(text)) {
      const bool negative = text.find('-') != std::string_view::npos;
      if (fits(*bits, type, negative) && (is_signed || !negative)) return *bits;
    }
  } else {
    validate(v);
  }
  note_bad(arg, field, schema::expected_text(type), example_of(v, t));
  return std::nullopt;
}

bool ChromeReader::read_triple(od::value& v, std::string_view field, Arg arg, std::int32_t (&out)[3]) {
  const auto t = type_of(v);
  std::string example;
  if (t == od::json_type::array) {
    // Read into a copy: a bad array leaves the record's grid/block untouched.
    std::int32_t tmp[3] = {0, 0, 0};
    int n = 0;
    bool ok = true;
    each_element(v, [&](od::value& x) {
      std::int64_t i = 0;
      if (type_of(x) != od::json_type::number) {
        ok = false;
        validate(x);
      } else if (x.get_int64().get(i)) {
        ok = false;
        check_number(x);
      } else if (n < 3 && i >= std::numeric_limits<std::int32_t>::min() &&
                 i <= std::numeric_limits<std::int32_t>::max()) {
        tmp[n] = static_cast<std::int32_t>(i);
      } else {
        ok = false;
      }
      ++n;
    });
    if (ok && n == 3) {
      std::copy(std::begin(tmp), std::end(tmp), out);
      return true;
    }
    example = "an array of " + std::to_string(n) + (ok ? " integers" : " values, not all 32-bit integers");
  } else {
    example = example_of(v, t);
    validate(v);
  }
  note_bad(arg, field, schema::expected_text(ArgType::Triple), std::move(example));
  return false;
}

void ChromeReader::parse_args(od::value& v, Args& a) {
  each_field(v, [&](std::string_view key, od::value& x) {
    const int index = schema::find_name(schema::kArgs, schema::kArgIndex, key);
    if (!(index < 0 ? arg_keys_.add_other(key) : arg_keys_.add_known(index))) {
      note_duplicate(FieldName("args.", key));
      return validate(x);  // the first value is kept
    }
    if (index < 0) return validate(x);
    const schema::ArgSpec& spec = schema::kArgs[index];
    const FieldName field("args.", key);
    const Arg arg = spec.value;
    const std::uint32_t bad_before = static_cast<std::uint32_t>(bad_.size());
    switch (spec.type) {
      case ArgType::Int32:
      case ArgType::UInt32:
      case ArgType::Int64:
      case ArgType::UInt64:
        if (auto n = read_integer(x, spec.type, field, arg)) a.set(arg, *n);
        break;
      case ArgType::Triple:
        if (read_triple(x, field, arg, arg == Arg::Grid ? a.grid : a.block)) a.set(arg, 1);
        break;
      case ArgType::CopyKind: {
        const auto t = type_of(x);
        std::optional<CopyKind> kind;
        std::int64_t n = 0;
        std::string_view text;
        if (t == od::json_type::number) {
          if (!x.get_int64().get(n)) kind = copy_kind_from_number(n);
          else check_number(x);
        } else if (t == od::json_type::string) {
          text = string_text(x);
          kind = copy_kind_from_text(text);
        } else {
          validate(x);
        }
        if (kind) a.set(arg, static_cast<std::uint64_t>(*kind));
        else note_bad(arg, field, schema::expected_text(spec.type), example_of(x, t));
        break;
      }
      case ArgType::String: {
        const auto t = type_of(x);
        if (t == od::json_type::string) {
          (arg == Arg::SyncKind         ? a.sync_kind
           : arg == Arg::Labels         ? a.labels
           : arg == Arg::ProcessGroup   ? a.process_group
           : arg == Arg::GroupDesc      ? a.group_desc
           : arg == Arg::GroupRanks     ? a.group_ranks
           : arg == Arg::CollectiveName ? a.collective
           : arg == Arg::Dtype          ? a.dtype
                                        : a.name) = get_string(x, field);
          break;
        }
        validate(x);
        // "name" and "labels" are payloads of track metadata; elsewhere just data.
        if (arg != Arg::Name && arg != Arg::Labels)
          note_bad(arg, field, schema::expected_text(spec.type), example_of(x, t));
        break;
      }
      case ArgType::Object: {  // our own block: exact, it is ours
        const auto t = type_of(x);
        if (t != od::json_type::object) fail_type(field, "an object", t);
        parse_ss_args(x, a);
        break;
      }
      case ArgType::Ignored: validate(x); break;
    }
    if (bad_.size() != bad_before) a.bad |= schema::bit(arg);
  });
}

void ChromeReader::parse_ss_args(od::value& v, Args& a) {
  each_field(v, [&](std::string_view key, od::value& x) {
    const FieldName field("args.syncscope.", key);
    switch (schema::value_of(schema::kSsArgs, schema::kSsArgIndex, key, SsArg::Unknown)) {
      case SsArg::TrackTid: a.ss_track_tid = get_id(x, field); break;
      case SsArg::ReturnCode: a.ss_return_code = get_int(x, field); break;
      case SsArg::Device: a.ss_device = get_int(x, field); break;
      case SsArg::Stream: a.ss_stream = get_int(x, field); break;
      case SsArg::Pid: a.ss_pid = get_int(x, field); break;
      case SsArg::Tid: a.ss_tid = get_int(x, field); break;
      case SsArg::PeerDevice: a.ss_peer_device = get_int(x, field); break;
      case SsArg::Value: a.ss_value = get_uint(x, field); break;
      case SsArg::EventSyncId: a.ss_event_sync_id = get_uint(x, field); break;
      case SsArg::Async: a.ss_async = get_bool(x, field); break;
      case SsArg::IsQuery: a.ss_is_query = get_bool(x, field); break;
      case SsArg::Generated: a.ss_generated = get_bool(x, field); break;
      case SsArg::RangeKind: a.ss_range_kind = get_string(x, field); break;
      case SsArg::Domain: a.ss_domain = get_string(x, field); break;
      case SsArg::Unknown: validate(x); break;
    }
  });
}

void ChromeReader::warn(ReadWarning::Kind kind, std::string_view category, const std::string& field,
                        std::string_view expected, const std::string& example) {
  auto [it, fresh] = warnings_.try_emplace({static_cast<int>(kind), std::string(category), field});
  ReadWarning& w = it->second;
  if (fresh) {
    w.kind = kind;
    w.category = std::string(category);
    w.field = field;
    w.expected = std::string(expected);
    w.example = example;
    w.first_event = pos.event_index;
  }
  ++w.count;
}

bool ChromeReader::accept_fields(const Event& e, Cat cat) {
  const std::string_view category = e.cat.value_or("");
  if (duplicate_)
    warn(ReadWarning::Kind::DuplicateKey, category, *duplicate_, "", "offset " + std::to_string(pos.offset));
  if (!e.bad_fields && e.args.bad == 0) return true;
  const auto c = static_cast<std::size_t>(cat);
  const std::uint64_t read = schema::kArgMasks.read[c], needed = schema::kArgMasks.needed[c];
  const BadField* skip = nullptr;
  for (const BadField& b : bad_) {
    const std::uint64_t m = b.arg == Arg::Unknown ? 0 : schema::bit(b.arg);
    if (m != 0 && (needed & m) != 0) {
      if (skip == nullptr) skip = &b;
    } else if (m == 0 || (read & m) != 0) {
      warn(ReadWarning::Kind::ArgumentType, category, b.field, b.expected, b.example);
    }
  }
  if (skip == nullptr) return true;
  warn(ReadWarning::Kind::SkippedEvent, category, skip->field, skip->expected, skip->example);
  return false;
}

}  // namespace syncscope::io_detail
