#include "nsys_schema.hpp"

#include <cctype>

namespace syncscope::nsys_detail {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Reads an ENUM_* table (id, name, label) into id -> name; empty when the table or its
// `name` column is missing (the oldest exports have no ENUM tables).
std::map<std::int64_t, std::string> enum_names(const Db& db, const std::string& table) {
  std::map<std::int64_t, std::string> out;
  const Columns cols(db, table);
  if (!cols.has("id") || !cols.has("name")) return out;
  Stmt s = db.prepare(cols.select({"id", "name"}), "reading " + table);
  while (s.step())
    if (!s.is_null(0) && out.size() < 4096) out.emplace(s.i64(0), std::string(s.text(1)));
  return out;
}

// Symbol names of ENUM_CUDA_MEMCPY_OPER (CUDA_MEMCPY_KIND_*): arrays are device memory, so
// host<->array copies count as host<->device and array<->device ones as device-to-device.
CopyKindInfo copy_kind_from_symbol(std::string_view s) {
  constexpr std::string_view kPrefix = "CUDA_MEMCPY_KIND_";
  if (!starts_with(s, kPrefix)) return {};
  s.remove_prefix(kPrefix.size());
  CopyKindInfo info;
  if (starts_with(s, "UVM_")) {
    info.unified = true;
    s.remove_prefix(4);
  }
  if (s == "HTOD" || s == "HTOA") info.kind = CopyKind::HtoD;
  else if (s == "DTOH" || s == "ATOH") info.kind = CopyKind::DtoH;
  else if (s == "DTOD" || s == "ATOA" || s == "ATOD" || s == "DTOA") info.kind = CopyKind::DtoD;
  else if (s == "HTOH") info.kind = CopyKind::HtoH;
  else if (s == "PTOP") info.kind = CopyKind::PtoP;
  return info;
}

// ENUM_CUDA_MEM_KIND symbols (CUDA_MEMOPR_MEMORY_KIND_*).
MemoryKind memory_kind_from_symbol(std::string_view s) {
  constexpr std::string_view kPrefix = "CUDA_MEMOPR_MEMORY_KIND_";
  if (!starts_with(s, kPrefix)) return MemoryKind::Unknown;
  s.remove_prefix(kPrefix.size());
  if (s == "PAGEABLE") return MemoryKind::Pageable;
  if (s == "PINNED") return MemoryKind::Pinned;
  if (s == "DEVICE" || s == "ARRAY" || s == "DEVICE_STATIC") return MemoryKind::Device;
  if (s == "MANAGED" || s == "MANAGED_STATIC") return MemoryKind::Managed;
  return MemoryKind::Unknown;
}

EventClass event_class_from_symbol(std::string_view s) {
  if (s == "TRACE_PROCESS_EVENT_CUDA_RUNTIME") return EventClass::Runtime;
  if (s == "TRACE_PROCESS_EVENT_CUDA_DRIVER" || s == "TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER") return EventClass::Driver;
  if (s == "TRACE_PROCESS_EVENT_CUDABACKTRACE") return EventClass::Backtrace;
  return EventClass::Other;
}

// The documented numbering ("SQLite Schema Event Values"), for files without ENUM tables.
constexpr const char* kDefaultCopySymbols[] = {"CUDA_MEMCPY_KIND_UNKNOWN",  "CUDA_MEMCPY_KIND_HTOD",
                                               "CUDA_MEMCPY_KIND_DTOH",     "CUDA_MEMCPY_KIND_HTOA",
                                               "CUDA_MEMCPY_KIND_ATOH",     "CUDA_MEMCPY_KIND_ATOA",
                                               "CUDA_MEMCPY_KIND_ATOD",     "CUDA_MEMCPY_KIND_DTOA",
                                               "CUDA_MEMCPY_KIND_DTOD",     "CUDA_MEMCPY_KIND_HTOH",
                                               "CUDA_MEMCPY_KIND_PTOP",     "CUDA_MEMCPY_KIND_UVM_HTOD",
                                               "CUDA_MEMCPY_KIND_UVM_DTOH", "CUDA_MEMCPY_KIND_UVM_DTOD"};
constexpr const char* kDefaultMemSymbols[] = {
    "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE",       "CUDA_MEMOPR_MEMORY_KIND_PINNED",
    "CUDA_MEMOPR_MEMORY_KIND_DEVICE",         "CUDA_MEMOPR_MEMORY_KIND_ARRAY",
    "CUDA_MEMOPR_MEMORY_KIND_MANAGED",        "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC",
    "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN"};

}  // namespace

Columns::Columns(const Db& db, std::string table) : table_(std::move(table)) {
  for (auto& c : db.columns(table_)) names_.insert(std::move(c));
}

std::string Columns::select(std::initializer_list<std::string_view> columns, std::string_view tail) const {
  std::string sql = "SELECT ";
  bool first = true;
  for (std::string_view c : columns) {
    if (!first) sql += ", ";
    first = false;
    if (has(c)) {
      sql += '"';
      sql += c;
      sql += '"';
    } else {
      sql += "NULL";
    }
  }
  sql += " FROM \"" + table_ + "\"";
  if (!tail.empty()) {
    sql += ' ';
    sql += tail;
  }
  return sql;
}

CopyKindInfo Enums::copy_kind(std::int64_t id) const {
  auto it = copy_kinds.find(id);
  return it == copy_kinds.end() ? CopyKindInfo{} : it->second;
}

MemoryKind Enums::memory_kind(std::int64_t id) const {
  auto it = memory_kinds.find(id);
  return it == memory_kinds.end() ? MemoryKind::Unknown : it->second;
}

EventClass Enums::event_class(std::int64_t id) const {
  auto it = event_classes.find(id);
  return it == event_classes.end() ? EventClass::Other : it->second;
}

Enums read_enums(const Db& db) {
  Enums e;
  auto copies = enum_names(db, "ENUM_CUDA_MEMCPY_OPER");
  if (copies.empty())
    for (std::size_t i = 0; i < std::size(kDefaultCopySymbols); ++i)
      copies.emplace(static_cast<std::int64_t>(i), kDefaultCopySymbols[i]);
  for (const auto& [id, sym] : copies) e.copy_kinds[id] = copy_kind_from_symbol(sym);

  auto mems = enum_names(db, "ENUM_CUDA_MEM_KIND");
  if (mems.empty())
    for (std::size_t i = 0; i < std::size(kDefaultMemSymbols); ++i)
      mems.emplace(static_cast<std::int64_t>(i), kDefaultMemSymbols[i]);
  for (const auto& [id, sym] : mems) e.memory_kinds[id] = memory_kind_from_symbol(sym);

  auto classes = enum_names(db, "ENUM_NSYS_EVENT_CLASS");
  if (classes.empty()) {
    classes = {{0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME"},
               {1, "TRACE_PROCESS_EVENT_CUDA_DRIVER"},
               {13, "TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER"},
               {67, "TRACE_PROCESS_EVENT_CUDABACKTRACE"}};
  }
  for (const auto& [id, sym] : classes) e.event_classes[id] = event_class_from_symbol(sym);

  for (const auto& [id, sym] : enum_names(db, "ENUM_NSYS_EVENT_TYPE")) {
    if (sym == "NvtxPushPopRange") e.nvtx_push_pop = id;
    else if (sym == "NvtxStartEndRange") e.nvtx_start_end = id;
    else if (sym == "NvtxDomainCreate") e.nvtx_domain_create = id;
  }
  return e;
}

StringIds::StringIds(const Db& db, Trace& trace) : trace_(trace) {
  const Columns cols(db, kStringTable);
  if (cols.has("id") && cols.has("value"))
    lookup_.emplace(db.prepare("SELECT \"value\" FROM \"StringIds\" WHERE \"id\" = ?", "reading StringIds"));
}

StringId StringIds::get(std::int64_t id) {
  if (id == 0 || !lookup_) return kNoString;
  if (auto it = cache_.find(id); it != cache_.end()) return it->second;
  lookup_->reset();
  lookup_->bind(1, id);
  StringId sid = kNoString;
  if (lookup_->step()) {
    std::string_view v = lookup_->text(0);
    // No real name is this long (the longest C++ template kernel names are ~10 kB); a
    // longer one is damage, kept short so one row cannot exhaust memory through copies.
    if (v.size() > (std::size_t{1} << 20)) {
      v = v.substr(0, std::size_t{1} << 20);
      ++cut_;  // said in the trace's warnings (nsys_reader.cpp), not silently
    }
    sid = trace_.intern(v);
  } else {
    ++missing_;
  }
  cache_.emplace(id, sid);
  return sid;
}

std::vector<std::string> Notes::render() const {
  std::vector<std::string> out = once_;
  for (const auto& [what, n] : counts_) out.push_back(std::to_string(n) + " " + what);
  return out;
}

bool plausible_interval(std::int64_t start, std::int64_t end) {
  return start >= -kMaxAbsTimeNs && end <= kMaxAbsTimeNs && start <= end;
}

std::int32_t device_index(std::int64_t v) { return v >= 0 && v < 4096 ? static_cast<std::int32_t>(v) : -1; }

std::int64_t stream_id(std::int64_t v) { return v >= 0 && v < kNotApplicable32 ? v : -1; }

std::uint32_t id32(std::int64_t v) { return v > 0 && v < kNotApplicable32 ? static_cast<std::uint32_t>(v) : 0u; }

std::int32_t dim32(std::int64_t v) { return v >= 0 && v <= 0x7fffffff ? static_cast<std::int32_t>(v) : 0; }

std::string_view display_api_name(std::string_view name) {
  if (!starts_with(name, "cuda")) return name;
  std::size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  const std::size_t digits = name.size() - i;
  if ((digits == 4 || digits == 5) && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_') return name.substr(0, i - 2);
  return name;
}

}  // namespace syncscope::nsys_detail
