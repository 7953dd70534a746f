#include "syncscope/io/trace_io.hpp"

#include "byte_source.hpp"
#include "chrome_reader.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/nsys_sqlite.hpp"
#include "syncscope/io/seekable_input.hpp"

namespace syncscope {
namespace {

// A compact binary form (.sstrace) was considered and left out: see bench/trace_io/README.md
// for the measurements that decided it.
[[noreturn]] void no_binary(const std::string& name) {
  throw InputError(name + ": the binary trace format (.sstrace) is not supported by this build; "
                          "use Chrome trace JSON (.json or .json.gz)");
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Trace read_trace(const std::filesystem::path& path, const ReadOptions& options) {
  if (options.format == TraceFormat::Binary) no_binary(path.string());
  const SeekableInput input(path);  // a pipe or stdin is copied to a temporary file first
  if (is_sqlite_file(input.path())) return read_nsys_sqlite(input.path(), path.string());  // Nsight Systems export
  auto source = io_detail::open_file_source(input.path(), options.chunk_bytes);
  return io_detail::read_chrome_json(*source, path.string(), options.chunk_bytes);
}

Trace parse_chrome_json(std::string_view json, std::string_view source_name, const ReadOptions& options) {
  io_detail::MemorySource source(json);
  return io_detail::read_chrome_json(source, std::string(source_name), options.chunk_bytes);
}

Trace parse_chrome_json(std::string_view json, std::string_view source_name) {
  return parse_chrome_json(json, source_name, ReadOptions{});
}

void write_trace(const Trace& trace, const std::filesystem::path& path, const WriteOptions& options) {
  const bool binary = options.format == TraceFormat::Binary ||
                      (options.format == TraceFormat::Auto && ends_with(path.string(), ".sstrace"));
  if (binary) no_binary(path.string());
  write_file_atomic(path, [&](const Sink& sink) { write_chrome_json(trace, sink); }, options.overwrite);
}

}  // namespace syncscope
