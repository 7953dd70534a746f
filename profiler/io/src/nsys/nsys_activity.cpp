// GPU activity (kernels, copies, memsets), CUPTI synchronization and CUDA event records, and
// what is learnt by joining them to the API calls that caused them.
#include <algorithm>
#include <map>
#include <set>

#include "nsys_reader.hpp"
#include "syncscope/trace/api_classes.hpp"

namespace syncscope::nsys_detail {
namespace {

std::uint64_t bytes_of(std::int64_t v) {
  // More than 1 PiB in one operation is not a copy any GPU makes: damage.
  return v > 0 && v < (std::int64_t{1} << 50) ? static_cast<std::uint64_t>(v) : 0;
}

// CUPTI's 64-bit "not applicable" (all ones) reads back from SQLite as -1; 32-bit as
// 4294967295. Either, and NULL, mean none.
std::uint64_t id64(const Stmt& s, int col) {
  if (s.is_null(col)) return 0;
  const std::int64_t v = s.i64(col);
  return v > 0 && v != kNotApplicable32 ? static_cast<std::uint64_t>(v) : 0;
}

}  // namespace

bool Reader::read_activity(const Stmt& s, const char* table, GpuActivity& a, std::int32_t& pid) {
  if (!s.integer_row()) {
    skip(table, "text or a blob where an integer belongs");
    return false;
  }
  if (s.is_null(0) || s.is_null(1) || !plausible_interval(s.i64(0), s.i64(1))) {
    skip(table, "start or end missing or impossible");
    return false;
  }
  pid = s.is_null(6) ? -1 : static_cast<std::int32_t>(pid_of(s.i64(6)));
  a.start = at(s.i64(0));
  a.end = at(s.i64(1));
  a.device = s.is_null(2) ? -1 : device_of(pid, s.i64(2));
  a.context = id32(s.i64(3));
  a.stream = s.is_null(4) ? -1 : stream_id(s.i64(4));
  a.correlation = id32(s.i64(5));
  return true;
}

void Reader::read_kernels() {
  const Columns cols(db_, kKernelTable);
  if (!cols.present()) return;
  reserve_rows(kKernelTable, t_.kernels, &kernel_pid_);
  Stmt s =
      db_.prepare(cols.select({"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                               "demangledName", "shortName", "mangledName", "gridX", "gridY", "gridZ", "blockX",
                               "blockY", "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory"}),
                  "reading CUPTI_ACTIVITY_KIND_KERNEL");
  while (s.step()) {
    Kernel k;
    std::int32_t pid = -1;
    if (!read_activity(s, kKernelTable, k, pid)) continue;
    // demangledName is the full name with templates (what Kineto shows); shortName the
    // base name, for exports that lack the former.
    k.name = strings_.get(s.i64(7));
    if (k.name == kNoString) k.name = strings_.get(s.i64(8));
    const StringId mangled = s.is_null(9) ? kNoString : strings_.get(s.i64(9));
    if (mangled != k.name) k.mangled_name = mangled;
    for (int i = 0; i < 3; ++i) {
      k.grid[i] = dim32(s.i64(10 + i));
      k.block[i] = dim32(s.i64(13 + i));
    }
    k.registers_per_thread = dim32(s.i64(16));
    k.shared_memory_bytes = dim32(std::int64_t{dim32(s.i64(17))} + dim32(s.i64(18)));
    t_.kernels.push_back(k);
    kernel_pid_.push_back(pid);
  }
}

void Reader::read_memcpys() {
  const Columns cols(db_, kMemcpyTable);
  if (!cols.present()) return;
  reserve_rows(kMemcpyTable, t_.memcpys, &memcpy_pid_);
  Stmt s = db_.prepare(cols.select({"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                    "bytes", "copyKind", "srcKind", "dstKind", "srcDeviceId", "dstDeviceId"}),
                       "reading CUPTI_ACTIVITY_KIND_MEMCPY");
  std::uint64_t unified = 0;
  while (s.step()) {
    Memcpy m;
    std::int32_t pid = -1;
    if (!read_activity(s, kMemcpyTable, m, pid)) continue;
    m.bytes = bytes_of(s.i64(7));
    const CopyKindInfo kind = s.is_null(8) ? CopyKindInfo{} : enums_.copy_kind(s.i64(8));
    m.kind = kind.kind;
    m.src_kind = s.is_null(9) ? MemoryKind::Unknown : enums_.memory_kind(s.i64(9));
    m.dst_kind = s.is_null(10) ? MemoryKind::Unknown : enums_.memory_kind(s.i64(10));
    if (kind.unified) {
      // A unified-memory migration (page faults or prefetch): managed memory moving
      // between host and device, caused by no API call.
      ++unified;
      if (m.src_kind == MemoryKind::Unknown) m.src_kind = MemoryKind::Managed;
      if (m.dst_kind == MemoryKind::Unknown) m.dst_kind = MemoryKind::Managed;
    }
    if (m.kind == CopyKind::PtoP) {
      const std::int32_t src = s.is_null(11) ? -1 : device_of(pid, s.i64(11));
      const std::int32_t dst = s.is_null(12) ? -1 : device_of(pid, s.i64(12));
      m.peer_device = dst >= 0 && dst != m.device ? dst : src;
    }
    t_.memcpys.push_back(m);
    memcpy_pid_.push_back(pid);
  }
  if (unified > 0) t_.meta.extra["nsys.unified_memory_copies"] = std::to_string(unified);
}

void Reader::read_memsets() {
  const Columns cols(db_, kMemsetTable);
  if (!cols.present()) return;
  reserve_rows(kMemsetTable, t_.memsets, &memset_pid_);
  Stmt s = db_.prepare(cols.select({"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                    "bytes", "value", "memKind"}),
                       "reading CUPTI_ACTIVITY_KIND_MEMSET");
  while (s.step()) {
    Memset m;
    std::int32_t pid = -1;
    if (!read_activity(s, kMemsetTable, m, pid)) continue;
    m.bytes = bytes_of(s.i64(7));
    m.value = static_cast<std::uint32_t>(s.i64(8) & 0xffffffff);
    m.memory_kind = s.is_null(9) ? MemoryKind::Unknown : enums_.memory_kind(s.i64(9));
    t_.memsets.push_back(m);
    memset_pid_.push_back(pid);
  }
}

void Reader::read_syncs() {
  const Columns cols(db_, kSyncTable);
  if (!cols.present()) return;
  reserve_rows(kSyncTable, t_.syncs, &sync_pid_);
  // syncType is not read: its numbering changed between releases (device, stream and event
  // syncs swapped values; newer exports renumber it and keep the old value in
  // deprecatedSyncType), so a record's kind comes from the API call it correlates with.
  Stmt s = db_.prepare(cols.select({"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                    "eventId", "eventSyncId"}),
                       "reading CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
  while (s.step()) {
    if (!s.integer_row()) {
      skip(kSyncTable, "text or a blob where an integer belongs");
      continue;
    }
    if (s.is_null(0) || s.is_null(1) || !plausible_interval(s.i64(0), s.i64(1))) {
      skip(kSyncTable, "start or end missing or impossible");
      continue;
    }
    const std::int32_t pid = s.is_null(6) ? -1 : static_cast<std::int32_t>(pid_of(s.i64(6)));
    SyncRecord r;
    r.start = at(s.i64(0));
    r.end = at(s.i64(1));
    r.device = s.is_null(2) ? -1 : device_of(pid, s.i64(2));
    r.context = id32(s.i64(3));
    r.stream = s.is_null(4) ? -1 : stream_id(s.i64(4));
    r.correlation = id32(s.i64(5));
    r.event_id = id64(s, 7);
    r.event_sync_id = id64(s, 8);
    t_.syncs.push_back(r);
    sync_pid_.push_back(pid);
  }
}

void Reader::read_cuda_events() {
  const Columns cols(db_, kCudaEventTable);
  if (!cols.present()) return;
  reserve_rows(kCudaEventTable, t_.cuda_events, &event_pid_);
  Stmt s = db_.prepare(cols.select({"timestamp", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                    "eventId", "eventSyncId"}),
                       "reading CUPTI_ACTIVITY_KIND_CUDA_EVENT");
  while (s.step()) {
    if (!s.integer_row()) {
      skip(kCudaEventTable, "text or a blob where an integer belongs");
      continue;
    }
    const std::int32_t pid = s.is_null(5) ? -1 : static_cast<std::int32_t>(pid_of(s.i64(5)));
    CudaEventRecord e;
    // The device timestamp is 0 unless collected; the record call's time is filled in when
    // joined to its API call below.
    const std::int64_t ts = s.i64(0);
    e.timestamp = ts > 0 && ts <= kMaxAbsTimeNs ? at(ts) : 0;
    e.device = s.is_null(1) ? -1 : device_of(pid, s.i64(1));
    e.context = id32(s.i64(2));
    e.stream = s.is_null(3) ? -1 : stream_id(s.i64(3));
    e.correlation = id32(s.i64(4));
    e.event_id = id64(s, 6);
    e.event_sync_id = id64(s, 7);
    t_.cuda_events.push_back(e);
    event_pid_.push_back(pid);
  }
}

void Reader::give_syncs_their_contexts_device() {
  // A CUDA context belongs to one device, and CUPTI numbers contexts per process: the device of
  // (process, context) is the one its kernels, copies, memsets and event records ran on. The
  // 2-GPU torchrun exports of Nsight Systems 2026.2 (bench/replay/pairs) write deviceId 0 on
  // the second rank's sync records, whose context and streams are device 1's; left so, its
  // stream syncs find no work on their stream.
  constexpr std::int32_t kSeveral = -2;
  std::map<std::pair<std::int32_t, std::uint32_t>, std::int32_t> device_of_context;
  auto note = [&](std::int32_t pid, const auto& r) {
    if (r.context == 0 || r.device < 0) return;
    auto [it, added] = device_of_context.emplace(std::pair{pid, r.context}, r.device);
    if (!added && it->second != r.device) it->second = kSeveral;
  };
  for (std::size_t i = 0; i < t_.kernels.size(); ++i) note(kernel_pid_[i], t_.kernels[i]);
  for (std::size_t i = 0; i < t_.memcpys.size(); ++i) note(memcpy_pid_[i], t_.memcpys[i]);
  for (std::size_t i = 0; i < t_.memsets.size(); ++i) note(memset_pid_[i], t_.memsets[i]);
  for (std::size_t i = 0; i < t_.cuda_events.size(); ++i) note(event_pid_[i], t_.cuda_events[i]);
  std::map<std::int32_t, std::uint64_t> moved;  // by process
  for (std::size_t i = 0; i < t_.syncs.size(); ++i) {
    SyncRecord& r = t_.syncs[i];
    if (r.context == 0) continue;
    const auto it = device_of_context.find({sync_pid_[i], r.context});
    if (it == device_of_context.end() || it->second == kSeveral || it->second == r.device) continue;
    r.device = it->second;
    ++moved[sync_pid_[i]];
  }
  for (const auto& [pid, n] : moved)
    notes_.add(std::string(kSyncTable) + " rows of pid " + std::to_string(pid) +
                   " whose deviceId is not the device its kernels, copies and events ran on in the same CUDA "
                   "context (contextId): given that device",
               n);
}

void Reader::make_correlations_unique() {
  // CUPTI numbers correlations per process: an export of several processes (torchrun
  // ranks under one `nsys profile`) has the same ids in each. The model keys on correlation
  // alone, so there it becomes (pid << 32) | id, which keeps ids of one process in order.
  std::set<std::int64_t> pids;  // of records with a correlation
  std::int64_t last = -2;       // runs of one process are the rule: skip the set for them
  auto add = [&](std::int64_t pid) {
    if (pid != last) pids.insert(last = pid);
  };
  for (const auto& c : t_.api_calls)
    if (c.correlation != 0) add(c.pid);
  for (const auto* v : {&kernel_pid_, &memcpy_pid_, &memset_pid_, &sync_pid_, &event_pid_})
    for (std::int32_t pid : *v) add(pid);
  pids.erase(-1);  // a record without globalPid names no process (it joins in a one-process export)
  if (pids.size() <= 1) return;
  auto unique = [](std::uint64_t corr, std::int64_t pid) -> std::uint64_t {
    return corr == 0 ? 0 : (static_cast<std::uint64_t>(pid < 0 ? 0xFFFFFF : pid) << 32) | corr;
  };
  for (auto& c : t_.api_calls) c.correlation = unique(c.correlation, c.pid);
  for (std::size_t i = 0; i < t_.kernels.size(); ++i)
    t_.kernels[i].correlation = unique(t_.kernels[i].correlation, kernel_pid_[i]);
  for (std::size_t i = 0; i < t_.memcpys.size(); ++i)
    t_.memcpys[i].correlation = unique(t_.memcpys[i].correlation, memcpy_pid_[i]);
  for (std::size_t i = 0; i < t_.memsets.size(); ++i)
    t_.memsets[i].correlation = unique(t_.memsets[i].correlation, memset_pid_[i]);
  for (std::size_t i = 0; i < t_.syncs.size(); ++i)
    t_.syncs[i].correlation = unique(t_.syncs[i].correlation, sync_pid_[i]);
  for (std::size_t i = 0; i < t_.cuda_events.size(); ++i)
    t_.cuda_events[i].correlation = unique(t_.cuda_events[i].correlation, event_pid_[i]);
  t_.meta.extra["nsys.correlation"] = "(pid << 32) | correlationId: the export holds " + std::to_string(pids.size()) +
                                      " processes, each numbering its own correlation ids";
}

void Reader::link_to_api_calls() {
  for (auto* v : {&kernel_pid_, &memcpy_pid_, &memset_pid_, &sync_pid_, &event_pid_})
    std::vector<std::int32_t>().swap(*v);
  // The API call of each correlation the model's records need joined (copies, memsets,
  // sync and event records): a sorted list of those ids and one pass over the calls, so the
  // index is the size of those records, not of the millions of calls.
  std::vector<std::uint64_t> wanted;
  wanted.reserve(t_.memcpys.size() + t_.memsets.size() + t_.syncs.size() + t_.cuda_events.size());
  for (const auto& m : t_.memcpys) wanted.push_back(m.correlation);
  for (const auto& m : t_.memsets) wanted.push_back(m.correlation);
  for (const auto& r : t_.syncs) wanted.push_back(r.correlation);
  for (const auto& e : t_.cuda_events) wanted.push_back(e.correlation);
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::vector<std::uint32_t> call(wanted.size(), kNone);
  for (std::uint32_t i = 0; i < t_.api_calls.size(); ++i) {
    const std::uint64_t corr = t_.api_calls[i].correlation;
    auto it = std::lower_bound(wanted.begin(), wanted.end(), corr);
    if (corr != 0 && it != wanted.end() && *it == corr) call[static_cast<std::size_t>(it - wanted.begin())] = i;
  }
  auto call_of = [&](std::uint64_t corr) -> const ApiCall* {
    if (corr == 0) return nullptr;
    auto it = std::lower_bound(wanted.begin(), wanted.end(), corr);
    if (it == wanted.end() || *it != corr) return nullptr;
    const std::uint32_t i = call[static_cast<std::size_t>(it - wanted.begin())];
    return i == kNone ? nullptr : &t_.api_calls[i];
  };
  auto is_async = [&](const ApiCall* c) {
    return c != nullptr && api_base_name(t_.str(c->name)).find("Async") != std::string_view::npos;
  };
  // The table has no flags column: a copy or memset is asynchronous when its call is.
  for (auto& m : t_.memcpys) m.async = is_async(call_of(m.correlation));
  for (auto& m : t_.memsets) m.async = is_async(call_of(m.correlation));

  std::uint64_t unmatched = 0;
  for (auto& r : t_.syncs) {
    const ApiCall* c = call_of(r.correlation);
    const ApiClass cls = c == nullptr ? ApiClass::Other : classify_api(c->kind, t_.str(c->name), -1);
    const std::string_view base = c == nullptr ? std::string_view() : api_base_name(t_.str(c->name));
    switch (cls) {
      case ApiClass::StreamSync: r.type = SyncType::StreamSync; break;
      case ApiClass::DeviceSync: r.type = SyncType::ContextSync; break;
      case ApiClass::EventSync: r.type = SyncType::EventSync; break;
      case ApiClass::StreamWaitEvent: r.type = SyncType::StreamWaitEvent; break;
      case ApiClass::Query:
        r.is_query = true;
        r.type = base.find("Stream") != std::string_view::npos ? SyncType::StreamSync : SyncType::EventSync;
        break;
      default: ++unmatched; break;
    }
    if (r.type == SyncType::ContextSync) r.stream = -1;
  }
  if (unmatched > 0)
    notes_.add(
        "synchronization records have no synchronizing API call with their correlation id (were CUDA API "
        "calls traced?): their kind is unknown; syncType is not trusted, its values changed between nsys "
        "releases",
        unmatched);

  for (auto& e : t_.cuda_events)
    if (e.timestamp == 0)
      if (const ApiCall* c = call_of(e.correlation)) e.timestamp = c->start;
}

}  // namespace syncscope::nsys_detail
