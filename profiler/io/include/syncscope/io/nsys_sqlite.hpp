// Reading Nsight Systems SQLite exports (`nsys export --type sqlite report.nsys-rep`) into the
// trace model. read_trace() picks this reader by the file's content (the SQLite header), so
// `analyze`, `predict --trace` and `convert` take .sqlite files as they take JSON.
//
// What is read: CUDA runtime and driver calls (CUPTI_ACTIVITY_KIND_RUNTIME, both domains,
// told apart by eventClass; a backtrace's repeated row dropped), kernels, copies (direction;
// pageable, pinned, device and managed memory; unified-memory migrations), memsets, CUPTI
// synchronization records (their kind from the API call they correlate with, never from
// syncType, whose numbering changed between releases), CUDA event records, NVTX push/pop and
// start/end ranges (emit_nvtx's "aten::op, seq = N" ranges as CPU ops), process and thread
// names, GPUs and their names. Times become UTC (TARGET_INFO_SESSION_START_TIME) when the
// export has the session's start. Exports of nsys 2021 to 2026 read with the same code:
// missing tables are empty, missing columns NULL (see profiler/io/src/nsys/nsys_schema.hpp).
//
// The file is opened read-only and immutable: never written, no lock taken, no side file
// created. Bad input throws InputError naming the file and what is wrong: not SQLite, not an
// nsys export, truncated, corrupt, locked by a writer, unreadable. Oddities that do not stop
// the reading (rows with impossible times, unknown enum values, no CUDA data at all) are
// counted in Trace::meta.warnings.
#pragma once

#include <filesystem>
#include <string_view>

#include "syncscope/trace/trace.hpp"

namespace syncscope {

// True when the file starts with SQLite's 16-byte header "SQLite format 3\0" (the name
// does not matter). False for unreadable or short files.
bool is_sqlite_file(const std::filesystem::path& path);

// Reads an export from a regular file. `display_name` is what messages call it (the path
// when empty): read_trace passes the user's name for a pipe copied to a temporary file.
Trace read_nsys_sqlite(const std::filesystem::path& path, std::string_view display_name = {});

// The same from a database image held in memory (sqlite3_deserialize): tests and fuzzing.
Trace read_nsys_sqlite_memory(std::string_view image, std::string_view source_name = "<memory>");

}  // namespace syncscope
