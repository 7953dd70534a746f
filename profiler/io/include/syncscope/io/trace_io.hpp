// Reading and writing traces. Chrome trace JSON in the conventions of PyTorch's profiler
// (Kineto) is the interchange format: a torch.profiler trace loads unchanged, and what we
// write opens in Perfetto UI (one track per stream, launch->kernel flow arrows) and loads
// in PyTorch's own tooling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "syncscope/core/file_io.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope {

enum class TraceFormat { Auto, ChromeJson, Binary };

struct ReadOptions {
  TraceFormat format = TraceFormat::Auto;  // Auto: decided by content, not by name
  // Bytes read (or inflated) per step. Memory use does not depend on it beyond one chunk;
  // tests set tiny values (1..7) so every token gets split across chunk boundaries.
  std::size_t chunk_bytes = std::size_t{1} << 20;
};

// Reads .json or .json.gz by streaming: memory stays proportional to the records kept, not
// to the file. The input is opened once and its format recognized from its first bytes (gzip
// by its magic bytes, not the name), so "-" (standard input), pipes, FIFOs and process
// substitution work. Generous with values it does not need (counted in meta.read_warnings),
// exact with those it does. Bad input throws
// InputError whose message names the file and the byte offset or event index, and what was
// expected. Input: Kineto's conventions (cat -> record type, baseTimeNanoseconds, "us.nnn"
// strings, absolute microseconds of older traces, the JSON Array Format) and everything our
// writer emits. The binary form (.sstrace) is not implemented (bench/trace_io/README.md):
// TraceFormat::Binary throws InputError.
Trace read_trace(const std::filesystem::path& path, const ReadOptions& options = {});

// Parses Chrome trace JSON held in memory; `source_name` names it in errors.
Trace parse_chrome_json(std::string_view json, std::string_view source_name = "<memory>");
Trace parse_chrome_json(std::string_view json, std::string_view source_name, const ReadOptions& options);

// How times are written: exactly (integer ns, "ts" with up to three decimals), or moved onto
// the whole-microsecond grid (on_microsecond_grid below) for readers that round fractional
// microseconds away (Holistic Trace Analysis by default; docs/analysis.md, "Traces HTA reads").
enum class TimeGrid { Exact, WholeMicrosecond };

struct WriteOptions {
  TraceFormat format = TraceFormat::ChromeJson;  // Auto: from the extension (.sstrace = binary)
  bool overwrite = false;
  TimeGrid time_grid = TimeGrid::Exact;
};

// The provenance entry (TraceMetadata::extra, a top-level key in the file) that labels a
// trace whose times were moved onto the microsecond grid.
inline constexpr std::string_view kTimeGridKey = "syncscope_time_grid";

// The trace with every record's times rounded to the nearest whole microsecond from the
// writer's base (so every "ts" and "dur" it writes is an integer), labelled with
// kTimeGridKey. Monotone: order, nesting and stream order are kept; each duration moves by at
// most 1 us and a sub-microsecond activity can become 0 us long. Not the recorded times.
Trace on_microsecond_grid(const Trace& trace);

// Writes atomically (temporary file + rename); gzip when the name ends in ".gz". The JSON
// follows Kineto's field names (PyTorch tooling reads it), opens in Perfetto with one track
// per GPU stream, slices nested per track (overlaps move to "(overlap N)" lanes) and
// launch->GPU flow arrows; fields Kineto has no name for go into args "syncscope" objects
// and a top-level "syncscope" block (with schema_version), so read_trace gives back every
// field. Times: baseTimeNanoseconds + microseconds with three decimals (exact ns).
void write_trace(const Trace& trace, const std::filesystem::path& path, const WriteOptions& options = {});
void write_chrome_json(const Trace& trace, const Sink& sink);

// The whole Chrome JSON text in memory (tests, small traces).
std::string chrome_json_string(const Trace& trace);

}  // namespace syncscope
