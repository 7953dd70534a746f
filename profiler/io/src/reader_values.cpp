#include "reader_values.hpp"

#include "text_util.hpp"

namespace syncscope::io_detail {

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

std::string ValueReader::where() const {
  const std::string at = " (" + std::string(pos.offset_unit) + " " + std::to_string(pos.offset) + ")";
  if (pos.in_event) return "traceEvents[" + std::to_string(pos.event_index) + "]" + at;
  return "top-level key \"" + pos.top_key + "\"" + at;
}

void ValueReader::fail(const std::string& what) const {
  throw InputError(pos.source_name + ": " + where() + ": " + what);
}

void ValueReader::fail_json(simdjson::error_code e) const {
  fail(std::string("malformed JSON (") + simdjson::error_message(e) + ")");
}

void ValueReader::fail_type(std::string_view field, const char* expected, od::json_type got) const {
  fail("field \"" + std::string(field) + "\": expected " + expected + ", got " + type_name(got));
}

std::string_view ValueReader::trim_right(std::string_view raw) {
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
    raw.remove_suffix(1);
  return raw;
}

std::string ValueReader::token(od::value& v) { return std::string(trim_right(v.raw_json_token()).substr(0, 40)); }

std::int64_t ValueReader::get_time(od::value& v, std::string_view field) const {
  const auto t = type_of(v);
  std::string_view text;
  if (t == od::json_type::number) {
    text = trim_right(v.raw_json_token());
  } else if (t == od::json_type::string) {
    text = string_text(v);
  } else {
    fail_type(field, "microseconds as a number or a \"us.nnn\" string", t);
  }
  auto ns = parse_us_as_ns(text);
  if (!ns)
    fail("field \"" + std::string(field) + "\": expected microseconds as a number or a \"us.nnn\" string, got \"" +
         std::string(text.substr(0, 40)) + "\" (or it is out of range)");
  return *ns;
}

IdVal ValueReader::get_id(od::value& v, std::string_view field) const {
  const auto t = type_of(v);
  IdVal id;
  if (t == od::json_type::number) {
    id.kind = IdVal::Int;
    id.i = get_int(v, field);
  } else if (t == od::json_type::string) {
    id.kind = IdVal::Str;
    id.s = string_text(v);
  } else {
    fail_type(field, "an integer or a string", t);
  }
  return id;
}

namespace {

// -?(0|[1-9][0-9]*)(.[0-9]+)? in at most 300 characters: JSON's number grammar (RFC 8259,
// section 6) without an exponent, so below 1e300 and finite as a double: what get_double()
// would accept, checked without converting (validate() needs only the verdict; the
// conversion was ~2% of read_trace in perf). Anything else is left to get_double().
bool plain_json_number(std::string_view t) {
  if (t.empty() || t.size() > 300) return false;
  std::size_t i = t[0] == '-' ? 1 : 0;
  auto digit = [&](std::size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
  if (!digit(i)) return false;
  if (t[i] == '0') ++i;
  else
    while (digit(i)) ++i;
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == t.size();
}

}  // namespace

void ValueReader::validate(od::value& v, int depth) const {
  if (depth > 256) fail("JSON nested more than 256 levels deep");
  switch (type_of(v)) {
    case od::json_type::array: each_element(v, [&](od::value& e) { validate(e, depth + 1); }); break;
    case od::json_type::object: each_field(v, [&](std::string_view, od::value& x) { validate(x, depth + 1); }); break;
    case od::json_type::number: {
      if (plain_json_number(trim_right(v.raw_json_token()))) break;  // valid, and finite as a double
      double d = 0;
      if (v.get_double().get(d)) fail("malformed number " + token(v));
      break;
    }
    case od::json_type::string: (void)string_text(v); break;  // a bad escape fails there
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

}  // namespace syncscope::io_detail
