// What the reader knows about the Nsight Systems SQLite export schema, and how it copes with
// the differences between releases (2021 to 2026; the Nsight Systems documentation, "SQLite
// Export Schema Reference" and "SQLite Schema Event Values", schema versions up to 3.28.1):
// - tables exist only when there was data for them, so any may be missing;
// - columns appear over time (greenContextId, eventSyncId, copyCount, deprecatedSyncType,
//   mangledName, endGlobalTid, domainId...): a SELECT names a column only when PRAGMA
//   table_info lists it, NULL otherwise, so every version reads with the same code;
// - enumerations are read from the file's ENUM_* tables by symbol name when present (their
//   numbering is the file's own), else the documented numbering is used.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite_db.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::nsys_detail {

// Table names (CUPTI_ACTIVITY_KIND_RUNTIME holds runtime and driver calls alike).
inline constexpr const char* kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr const char* kDriverTable =
    "CUPTI_ACTIVITY_KIND_DRIVER";  // not in any documented schema; read if there
inline constexpr const char* kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr const char* kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr const char* kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr const char* kSyncTable = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
inline constexpr const char* kCudaEventTable = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
inline constexpr const char* kNvtxTable = "NVTX_EVENTS";
inline constexpr const char* kStringTable = "StringIds";

// CUPTI's "not applicable" for 32-bit stream, event and context ids (CUPTI_SYNCHRONIZATION_
// INVALID_VALUE, CUPTI_INVALID_STREAM_ID...), as nsys stores it; -1 for 64-bit ids.
inline constexpr std::int64_t kNotApplicable32 = 4294967295;

// "Serialized GlobalId" (globalTid, globalPid): the documented extraction is
// PID = globalTid / 0x1000000 % 0x1000000, TID = globalTid % 0x1000000 (higher bits hold the
// VM and hardware ids).
inline std::int64_t pid_of(std::int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
inline std::int64_t tid_of(std::int64_t global_id) { return global_id & 0xFFFFFF; }

// A table's columns and a SELECT over them that keeps fixed positions whatever the version.
class Columns {
 public:
  Columns(const Db& db, std::string table);
  const std::string& table() const { return table_; }
  bool present() const { return !names_.empty(); }
  bool has(std::string_view column) const { return names_.count(std::string(column)) > 0; }
  // "SELECT a, b, NULL, ... FROM table": absent columns read as NULL. Column names are
  // quoted ("end" is an SQL keyword).
  std::string select(std::initializer_list<std::string_view> columns, std::string_view tail = {}) const;

 private:
  std::string table_;
  std::set<std::string> names_;
};

struct CopyKindInfo {
  CopyKind kind = CopyKind::Unknown;
  bool unified = false;  // a unified-memory migration (CUDA_MEMCPY_KIND_UVM_*)
};

enum class EventClass : std::uint8_t { Runtime, Driver, Backtrace, Other };

// Enumerations as this file numbers them.
struct Enums {
  std::map<std::int64_t, CopyKindInfo> copy_kinds;   // ENUM_CUDA_MEMCPY_OPER
  std::map<std::int64_t, MemoryKind> memory_kinds;   // ENUM_CUDA_MEM_KIND
  std::map<std::int64_t, EventClass> event_classes;  // ENUM_NSYS_EVENT_CLASS
  std::int64_t nvtx_push_pop = 59;                   // ENUM_NSYS_EVENT_TYPE
  std::int64_t nvtx_start_end = 60;
  std::int64_t nvtx_domain_create = 75;

  CopyKindInfo copy_kind(std::int64_t id) const;
  MemoryKind memory_kind(std::int64_t id) const;
  EventClass event_class(std::int64_t id) const;
};
Enums read_enums(const Db& db);

// Names a file's StringIds ids by interned trace strings, looking each id up once
// (StringIds.id is the table's INTEGER PRIMARY KEY: one b-tree probe per distinct id), so
// memory grows with the names the trace uses, not with the table.
class StringIds {
 public:
  StringIds(const Db& db, Trace& trace);
  // kNoString for NULL, 0 or an id the table does not have.
  StringId get(std::int64_t id);
  std::size_t missing() const { return missing_; }
  std::size_t cut() const { return cut_; }  // names longer than 1 MiB, cut to it

 private:
  Trace& trace_;
  std::optional<Stmt> lookup_;
  std::map<std::int64_t, StringId> cache_;
  std::size_t missing_ = 0;
  std::size_t cut_ = 0;
};

// Counted warnings: each distinct sentence once, with how often it happened.
class Notes {
 public:
  void add(const std::string& what, std::uint64_t n = 1) { counts_[what] += n; }
  void note(std::string text) { once_.push_back(std::move(text)); }
  std::vector<std::string> render() const;

 private:
  std::map<std::string, std::uint64_t> counts_;
  std::vector<std::string> once_;
};

// Bounds by physical sense on values the analyses use.
inline constexpr std::int64_t kMaxAbsTimeNs = std::int64_t{1} << 52;  // ~52 days from the session start
bool plausible_interval(std::int64_t start, std::int64_t end);
// A device index, or -1 when out of range (no machine has more than 4096 GPUs).
std::int32_t device_index(std::int64_t v);
// A stream id (0..2^32-2), -1 for "not applicable" or nonsense.
std::int64_t stream_id(std::int64_t v);
// A 32-bit CUPTI id (correlation, context, event), 0 when out of range or not applicable.
std::uint32_t id32(std::int64_t v);
// Kernel launch dimensions and per-thread resources: 0..2^31-1, else 0.
std::int32_t dim32(std::int64_t v);

// The name nsys's own `cuda_api_trace` report shows: a runtime call's "_vNNNN" version suffix
// ("cudaLaunchKernel_v7000", "cudaMemcpyAsync_ptsz_v7000") removed, as Kineto names calls;
// driver names keep their real "_v2".
std::string_view display_api_name(std::string_view name);

}  // namespace syncscope::nsys_detail
