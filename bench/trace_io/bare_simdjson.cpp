// The bare simdjson On-Demand pass (see bare_simdjson.hpp). Built with the compiler's
// -march=native where it has one (CMakeLists.txt), so that simdjson's inlined On-Demand
// iteration uses the best kernel for the machine running the benchmark, as a user of
// simdjson tuning for speed would build it.
#include "bare_simdjson.hpp"

#include <simdjson.h>

#include <time.h>

#include <chrono>

#include "syncscope/core/file_io.hpp"

namespace syncscope::bench {
namespace {

namespace od = simdjson::ondemand;
using Clock = std::chrono::steady_clock;

std::uint64_t touch(od::value v, std::uint64_t& sum);

std::uint64_t touch_object(od::object o, std::uint64_t& sum) {
  std::uint64_t n = 0;
  for (auto f : o) {
    std::string_view k = f.unescaped_key().value();
    sum += k.size();
    n += touch(f.value(), sum);
  }
  return n;
}

std::uint64_t touch(od::value v, std::uint64_t& sum) {
  switch (v.type().value()) {
    case od::json_type::object: return touch_object(v.get_object().value(), sum);
    case od::json_type::array: {
      std::uint64_t n = 0;
      for (auto e : v.get_array()) n += touch(e.value(), sum);
      return n;
    }
    case od::json_type::number: sum += static_cast<std::uint64_t>(v.get_double().value()); return 1;
    case od::json_type::string: sum += v.get_string().value().size(); return 1;
    case od::json_type::boolean: sum += v.get_bool().value(); return 1;
    case od::json_type::null: return 1;
  }
  return 0;
}

}  // namespace

// The whole (decompressed) file in one padded buffer, then one On-Demand pass.
BarePass bare_simdjson_pass(const std::string& path) {
  BarePass r;
  const auto t0 = Clock::now();
  const double c0 = process_cpu_seconds();
  // The bare pass holds the whole (gunzipped) file by design: bounded by the machine's
  // memory here, not by read_file's 1 GiB default for user inputs.
  std::string text = syncscope::read_file(path, std::uint64_t{64} << 30);  // gunzips .gz content
  text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  od::parser parser;
  od::document doc = parser.iterate(simdjson::padded_string_view(text.data(), text.size(), text.capacity()));
  std::uint64_t sum = 0;
  for (auto ev : doc["traceEvents"].get_array()) {
    touch_object(ev.get_object().value(), sum);
    ++r.events;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.cpu_seconds = process_cpu_seconds() - c0;
  // The same pass again: no file read, no first-touch page faults. The parser's own speed.
  const double c1 = thread_cpu_seconds();
  const auto t1 = Clock::now();
  od::document again = parser.iterate(simdjson::padded_string_view(text.data(), text.size(), text.capacity()));
  for (auto ev : again["traceEvents"].get_array()) touch_object(ev.get_object().value(), sum);
  r.warm_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  r.warm_cpu_seconds = thread_cpu_seconds() - c1;
  r.json_bytes = text.size();
  r.checksum = sum;
  return r;
}

const char* bare_ondemand_kernel() { return SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION); }

std::string bare_stage1_kernel() { return std::string(simdjson::get_active_implementation()->name()); }

namespace {
double cpu_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

double process_cpu_seconds() { return cpu_clock(CLOCK_PROCESS_CPUTIME_ID); }
double thread_cpu_seconds() { return cpu_clock(CLOCK_THREAD_CPUTIME_ID); }

const char* bare_simdjson_version() { return SIMDJSON_STRINGIFY(SIMDJSON_VERSION); }

}  // namespace syncscope::bench
