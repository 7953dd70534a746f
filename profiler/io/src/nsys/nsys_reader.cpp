#include "nsys_reader.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <tuple>

#include "syncscope/core/error.hpp"

namespace syncscope::nsys_detail {
namespace {

constexpr const char* kCudaTables[] = {kRuntimeTable, kDriverTable, kKernelTable,
                                       kMemcpyTable,  kMemsetTable, kSyncTable};

// Metadata tables: META_DATA_EXPORT in current exports, EXPORT_META_DATA in older ones, none
// in the oldest.
constexpr const char* kMetaTables[] = {"META_DATA_EXPORT", "EXPORT_META_DATA"};

}  // namespace

Reader::Reader(const Db& db, Trace& trace) : db_(db), t_(trace), strings_(db, trace) {}

void Reader::check_is_export() const {
  bool cupti = false;
  for (const auto& table : db_.tables()) cupti = cupti || table.starts_with("CUPTI_ACTIVITY_KIND_");
  const bool meta = db_.has_table(kMetaTables[0]) || db_.has_table(kMetaTables[1]);
  if (!db_.has_table(kStringTable) && !cupti && !meta)
    throw InputError(db_.name() + ": no " + kRuntimeTable + " or " + kStringTable +
                     " table: not an Nsight Systems export (make one with `nsys export --type sqlite "
                     "REPORT.nsys-rep`)");
  if (!db_.has_table(kStringTable) && cupti)
    throw InputError(db_.name() + ": has CUPTI_ACTIVITY_KIND_* tables but no " + kStringTable +
                     " table, which names their calls and kernels: the export is incomplete; re-export the report "
                     "with `nsys export --type sqlite REPORT.nsys-rep`");
  // A table the reader needs must have the columns it needs: an nsys table without them is
  // not the layout of any release, and a guess would give wrong figures.
  struct Required {
    const char* table;
    std::array<const char*, 3> columns;  // nullptr-padded
  };
  static constexpr Required required[] = {
      {kRuntimeTable, {"start", "end", "nameId"}},   {kDriverTable, {"start", "end", "nameId"}},
      {kKernelTable, {"start", "end", nullptr}},     {kMemcpyTable, {"start", "end", "copyKind"}},
      {kMemsetTable, {"start", "end", nullptr}},     {kSyncTable, {"start", "end", nullptr}},
      {kNvtxTable, {"start", "eventType", nullptr}}, {kStringTable, {"id", "value", nullptr}}};
  for (const auto& [table, cols] : required) {
    const Columns have(db_, table);
    if (!have.present()) continue;
    for (const char* c : cols)
      if (c != nullptr && !have.has(c))
        throw InputError(db_.name() + ": table " + table + " has no column \"" + c +
                         "\": not a layout of any Nsight Systems release this reader knows; please report the "
                         "nsys version that wrote it");
  }
}

void Reader::read_metadata() {
  auto& m = t_.meta;
  m.source_tool = "nsys";
  m.clock = ClockBase::Monotonic;  // session-relative until the session's UTC start is known
  std::string which = "none";
  for (const char* table : kMetaTables) {
    const Columns cols(db_, table);
    if (!cols.has("name") || !cols.has("value")) continue;
    which = table;
    Stmt s = db_.prepare(cols.select({"name", "value"}), std::string("reading ") + table);
    for (int rows = 0; s.step() && rows < 256; ++rows) {
      const std::string key(s.text(0).substr(0, 128));
      const std::string value(s.text(1).substr(0, 1024));
      m.extra["nsys." + key] = value;
      if (key == "EXPORT_PRODUCT_VERSION") m.source_version = value;
    }
    break;
  }
  m.extra["nsys.metadata_table"] = which;

  const Columns start(db_, "TARGET_INFO_SESSION_START_TIME");
  if (start.has("utcEpochNs")) {
    Stmt s = db_.prepare(start.select({"utcEpochNs"}, "LIMIT 1"), "reading TARGET_INFO_SESSION_START_TIME");
    if (s.step() && !s.is_null(0)) {
      const std::int64_t utc = s.i64(0);
      // Event times are nanoseconds since this instant (UTC = utcEpochNs + time). A value
      // outside 1970..2116 is damage: stay session-relative rather than overflow.
      if (utc > 0 && utc < (std::int64_t{1} << 62)) {
        base_ = utc;
        m.clock = ClockBase::UnixEpoch;
        m.base_time_ns = utc;
      } else {
        notes_.note(db_.name() + ": TARGET_INFO_SESSION_START_TIME.utcEpochNs " + std::to_string(utc) +
                    " is not a plausible time: times stay relative to the session start");
      }
    }
  }
}

void Reader::read_devices() {
  const Columns map(db_, "TARGET_INFO_CUDA_DEVICE");
  if (map.has("gpuId") && map.has("cudaId") && map.has("pid")) {
    Stmt s = db_.prepare(map.select({"pid", "cudaId", "gpuId"}), "reading TARGET_INFO_CUDA_DEVICE");
    while (s.step()) {
      const std::int32_t gpu = s.is_null(2) ? -1 : device_index(s.i64(2));
      if (gpu >= 0 && gpu_of_.size() < 65536) gpu_of_.emplace(std::make_pair(s.i64(0), s.i64(1)), gpu);
    }
  }

  const Columns cols(db_, "TARGET_INFO_GPU");
  if (!cols.has("id")) return;
  Stmt s = db_.prepare(cols.select({"id", "name", "totalMemory", "smCount", "computeMajor", "computeMinor",
                                    "maxThreadsPerBlock", "threadsPerWarp", "maxRegistersPerBlock", "maxRegistersPerSm",
                                    "maxShmemPerBlock", "maxShmemPerBlockOptin", "maxShmemPerSm", "maxWarpsPerSm",
                                    "isDiscrete", "chipName"}),
                       "reading TARGET_INFO_GPU");
  auto small = [&](int col) { return s.is_null(col) ? 0 : dim32(s.i64(col)); };
  while (s.step()) {
    const std::int32_t id = s.is_null(0) ? -1 : device_index(s.i64(0));
    if (id < 0) continue;
    const bool seen = std::any_of(t_.devices.begin(), t_.devices.end(), [&](const auto& d) { return d.id == id; });
    if (seen) continue;  // one row per GPU and VM; the first names it
    DeviceProperties d;
    d.id = id;
    d.name = std::string(s.text(1).substr(0, 256));
    const std::int64_t mem = s.i64(2);
    d.total_memory_bytes = mem > 0 && mem < (std::int64_t{1} << 50) ? static_cast<std::uint64_t>(mem) : 0;
    d.sm_count = small(3);
    d.compute_major = small(4);
    d.compute_minor = small(5);
    d.max_threads_per_block = small(6);
    d.warp_size = small(7);
    d.regs_per_block = small(8);
    d.regs_per_sm = small(9);
    d.shared_mem_per_block = small(10);
    d.shared_mem_per_block_optin = small(11);
    d.shared_mem_per_sm = small(12);
    const std::int64_t threads_per_sm = std::int64_t{small(13)} * d.warp_size;
    d.max_threads_per_sm = threads_per_sm <= 0x7fffffff ? static_cast<std::int32_t>(threads_per_sm) : 0;
    // Integrated GPUs (Jetson, DGX Spark/GB10) share memory with the host: copies there are
    // not PCIe transfers, which matters when reading copy times.
    if (!s.is_null(14))
      t_.meta.extra["nsys.gpu" + std::to_string(id) + ".integrated"] = s.i64(14) == 0 ? "true" : "false";
    if (!s.is_null(15))
      t_.meta.extra["nsys.gpu" + std::to_string(id) + ".chip"] = std::string(s.text(15).substr(0, 64));
    if (t_.devices.size() < 4096) t_.devices.push_back(std::move(d));
  }
}

std::int32_t Reader::device_of(std::int64_t pid, std::int64_t device_id) const {
  if (!gpu_of_.empty())
    if (auto it = gpu_of_.find({pid, device_id}); it != gpu_of_.end()) return it->second;
  return device_index(device_id);
}

void Reader::read_processes_and_threads() {
  const Columns procs(db_, "PROCESSES");
  if (procs.has("globalPid") || procs.has("pid")) {
    Stmt s = db_.prepare(procs.select({"globalPid", "pid", "name"}), "reading PROCESSES");
    while (s.step()) {
      const std::int64_t pid = !s.is_null(0) ? pid_of(s.i64(0)) : s.i64(1);
      if (s.text(2).empty()) continue;
      t_.track_names.push_back(TrackName{std::to_string(pid), "", std::string(s.text(2).substr(0, 1024))});
    }
  }
  const Columns threads(db_, "ThreadNames");
  if (threads.has("globalTid") && threads.has("nameId")) {
    Stmt s = db_.prepare(threads.select({"globalTid", "nameId"}), "reading ThreadNames");
    while (s.step()) {
      if (s.is_null(0)) continue;
      const StringId name = strings_.get(s.i64(1));
      if (name == kNoString) continue;
      t_.track_names.push_back(
          TrackName{std::to_string(pid_of(s.i64(0))), std::to_string(tid_of(s.i64(0))), std::string(t_.str(name))});
    }
  }
}

void Reader::read_api_calls(const char* table) {
  const Columns cols(db_, table);
  if (!cols.present()) return;
  reserve_rows(table, t_.api_calls);
  Stmt s =
      db_.prepare(cols.select({"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"}),
                  std::string("reading ") + table);
  // Names and classes per StringIds id: a trace has millions of calls of a few hundred names.
  struct Named {
    StringId name = kNoString;
    bool driver = false;
  };
  std::map<std::int64_t, Named> named;
  std::uint64_t backtraces = 0;
  while (s.step()) {
    if (!s.integer_row()) {
      skip(table, "text or a blob where an integer belongs");
      continue;
    }
    if (s.is_null(0) || s.is_null(1) || !plausible_interval(s.i64(0), s.i64(1))) {
      skip(table, "start or end missing or impossible");
      continue;
    }
    const EventClass cls = s.is_null(2) ? EventClass::Other : enums_.event_class(s.i64(2));
    // With --cudabacktrace, nsys writes a call's backtrace as a second row with the same
    // correlation id and event class TRACE_PROCESS_EVENT_CUDABACKTRACE: not a call.
    if (cls == EventClass::Backtrace) {
      ++backtraces;
      continue;
    }
    auto it = named.find(s.i64(5));
    if (it == named.end()) {
      Named n;
      const StringId raw = strings_.get(s.i64(5));
      const std::string_view full = t_.str(raw);
      n.name = t_.intern(display_api_name(full));
      // The class says runtime or driver; where it is missing or something else, the name
      // does ("cuda..." is the runtime, "cu..." the driver).
      n.driver = cls == EventClass::Driver ||
                 (cls != EventClass::Runtime && full.starts_with("cu") && !full.starts_with("cuda"));
      it = named.emplace(s.i64(5), n).first;
    }
    if (cls == EventClass::Other && !s.is_null(2))
      notes_.add(std::string(table) + " rows of an unexpected eventClass read by their name");
    if (it->second.name == kNoString)
      notes_.add(std::string(table) + " rows whose nameId is not in StringIds kept without a name");
    ApiCall c;
    c.kind = it->second.driver ? ApiKind::Driver : ApiKind::Runtime;
    c.name = it->second.name;
    if (!s.is_null(3)) {
      c.pid = pid_of(s.i64(3));
      c.tid = tid_of(s.i64(3));
    }
    c.start = at(s.i64(0));
    c.end = at(s.i64(1));
    c.correlation = id32(s.i64(4));
    const std::int64_t rv = s.i64(6);
    c.return_code = rv >= INT32_MIN && rv <= INT32_MAX ? static_cast<std::int32_t>(rv) : -1;
    t_.api_calls.push_back(c);
  }
  if (backtraces > 0) t_.meta.extra["nsys.backtrace_rows"] = std::to_string(backtraces);
}

void Reader::drop_duplicate_calls() {
  // A call recorded twice (same process, correlation id and name: a backtrace row written
  // under the call's own event class by some releases) is one call. Correlation ids are
  // unique per call within a process, so the first row of each is kept.
  auto& calls = t_.api_calls;
  std::vector<std::uint32_t> order;
  order.reserve(calls.size());
  for (std::uint32_t i = 0; i < calls.size(); ++i)
    if (calls[i].correlation != 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(calls[a].pid, calls[a].correlation, calls[a].name, a) <
           std::tie(calls[b].pid, calls[b].correlation, calls[b].name, b);
  });
  std::vector<bool> drop(calls.size(), false);
  std::uint64_t dropped = 0;
  for (std::size_t k = 1; k < order.size(); ++k) {
    const auto &prev = calls[order[k - 1]], &cur = calls[order[k]];
    if (prev.pid == cur.pid && prev.correlation == cur.correlation && prev.name == cur.name) {
      drop[order[k]] = true;
      ++dropped;
    }
  }
  if (dropped == 0) return;
  std::size_t w = 0;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (!drop[i]) calls[w++] = calls[i];
  calls.resize(w);
  t_.meta.extra["nsys.duplicate_calls_dropped"] = std::to_string(dropped);
}

// Trace::finalize() wants every vector in (start, longer first) order and stable-sorts what
// is not, with a temporary buffer of half the vector: for millions of NVTX ranges (nsys
// writes a push/pop range when it ends, and since 2025.6 rows come in no promised order)
// that buffer is the peak of the whole import. Sorting here in place, ties broken by fields
// that make the order total (table order means nothing in an export), spares it.
void Reader::sort_records() {
  auto sort = [](auto& v, auto key) {
    auto less = [&](const auto& a, const auto& b) { return key(a) < key(b); };
    if (!std::is_sorted(v.begin(), v.end(), less)) std::sort(v.begin(), v.end(), less);
  };
  sort(t_.api_calls, [](const ApiCall& c) { return std::make_tuple(c.start, -c.end, c.pid, c.tid, c.correlation); });
  sort(t_.kernels, [](const Kernel& k) { return std::make_tuple(k.start, -k.end, k.device, k.stream, k.correlation); });
  sort(t_.memcpys, [](const Memcpy& m) { return std::make_tuple(m.start, -m.end, m.device, m.stream, m.correlation); });
  sort(t_.memsets, [](const Memset& m) { return std::make_tuple(m.start, -m.end, m.device, m.stream, m.correlation); });
  sort(t_.syncs,
       [](const SyncRecord& r) { return std::make_tuple(r.start, -r.end, r.device, r.stream, r.correlation); });
  sort(t_.ranges, [](const Range& r) {
    return std::make_tuple(r.start, -r.end, r.pid, r.tid, static_cast<int>(r.kind), r.name, r.domain);
  });
}

void Reader::run() {
  check_is_export();
  read_metadata();
  enums_ = read_enums(db_);
  read_devices();
  read_processes_and_threads();
  read_api_calls(kRuntimeTable);
  read_api_calls(kDriverTable);
  drop_duplicate_calls();
  read_kernels();
  read_memcpys();
  read_memsets();
  read_syncs();
  read_cuda_events();
  give_syncs_their_contexts_device();
  read_nvtx();
  make_correlations_unique();
  link_to_api_calls();

  bool cuda = false;
  for (const char* table : kCudaTables) cuda = cuda || db_.has_table(table);
  if (!cuda)
    notes_.note(db_.name() +
                ": the export has no CUDA data (no CUPTI_ACTIVITY_KIND_* table): profile with "
                "`nsys profile --trace=cuda` (on by default) to record CUDA API calls and GPU work");
  if (strings_.cut() > 0) notes_.add("StringIds names longer than 1 MiB cut to 1 MiB", strings_.cut());
  if (strings_.missing() > 0)
    notes_.add("StringIds ids referenced by rows but missing from StringIds (names left empty)", strings_.missing());
  for (const auto& w : db_.open_warnings()) t_.meta.warnings.push_back(w);
  for (auto& w : notes_.render()) t_.meta.warnings.push_back(std::move(w));
  sort_records();
  t_.finalize();
}

}  // namespace syncscope::nsys_detail
