// libFuzzer target for the Chrome trace JSON reader. Properties checked on every input:
// - it never crashes, hangs or trips ASan/UBSan;
// - it either throws InputError or returns a trace, and does the same (same message, same
//   trace) when read in tiny chunks, so the streaming scanner cannot depend on where reads
//   split the input (for gzip input only the outcome must agree: see below);
// - a trace it returns writes and reads back equal (the writer's output is always valid).
// Inputs starting with the gzip magic bytes go through the streaming inflater.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "byte_source.hpp"
#include "chrome_reader.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"
#include "trace_compare.hpp"

namespace {

using namespace syncscope;

struct Outcome {
  bool ok = false;
  std::string error;
  Trace trace;
};

Outcome load(std::string_view in, std::size_t chunk) {
  Outcome o;
  try {
    io_detail::MemorySource mem(in);
    const bool gz =
        in.size() >= 2 && static_cast<unsigned char>(in[0]) == 0x1f && static_cast<unsigned char>(in[1]) == 0x8b;
    if (gz) {
      io_detail::GzipSource src(std::make_unique<io_detail::MemorySource>(in), "fuzz", chunk);
      o.trace = io_detail::read_chrome_json(src, "fuzz", chunk);
    } else {
      o.trace = io_detail::read_chrome_json(mem, "fuzz", chunk);
    }
    o.ok = true;
  } catch (const InputError& e) {
    o.error = e.what();
  }
  return o;
}

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_chrome_json: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const Outcome whole = load(in, std::size_t{1} << 20);
  const Outcome chunked = load(in, 1 + (size % 7));
  // Corrupt gzip data may surface as a CRC error or as the malformed JSON it inflates to,
  // depending on how far inflation ran ahead: only the outcome must agree there.
  const bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (whole.ok != chunked.ok || (!gz && whole.error != chunked.error))
    die("chunked read differs", whole.error + " | " + chunked.error);
  if (!whole.ok) return 0;
  if (auto d = test::diff_traces(whole.trace, chunked.trace); !d.empty()) die("chunked trace differs", d);
  const std::string json = chrome_json_string(whole.trace);
  Outcome back = load(json, std::size_t{1} << 20);
  if (!back.ok) die("our own output does not read back", back.error);
  if (auto d = test::diff_traces(whole.trace, back.trace); !d.empty()) die("round trip differs", d);
  return 0;
}
