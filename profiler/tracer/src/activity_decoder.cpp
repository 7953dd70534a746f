#include "activity_decoder.hpp"

#include <cxxabi.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <tuple>

namespace syncscope::cupti_detail {
namespace {

constexpr std::uint32_t kInvalid32 = CUPTI_SYNCHRONIZATION_INVALID_VALUE;

Ns ns(std::uint64_t t) { return static_cast<Ns>(t); }

CopyKind copy_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyKind::HtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyKind::DtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return CopyKind::DtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyKind::HtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return CopyKind::PtoP;
    default: return CopyKind::Unknown;
  }
}

MemoryKind memory_kind(unsigned k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return MemoryKind::Pageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return MemoryKind::Pinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return MemoryKind::Device;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return MemoryKind::Managed;
    default: return MemoryKind::Unknown;
  }
}

SyncType sync_type(unsigned t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return SyncType::EventSync;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return SyncType::StreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return SyncType::StreamSync;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return SyncType::ContextSync;
    default: return SyncType::Unknown;
  }
}

const char* overhead_name(unsigned k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "Runtime triggered module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "Lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "Command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "Activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "UVM activity init";
    default: return "Unknown overhead";
  }
}

// Callback ids of the query calls (cupti_runtime_cbid.h / cupti_driver_cbid.h, CUDA 13.0).
bool is_query_call(ApiKind kind, std::int32_t cbid) {
  if (kind == ApiKind::Runtime) {
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000;
  }
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamQuery || cbid == CUPTI_DRIVER_TRACE_CBID_cuEventQuery ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz;
}

std::int64_t stream_id(std::uint32_t s) { return s == kInvalid32 ? -1 : static_cast<std::int64_t>(s); }

// The fields every GPU activity has, from a CUPTI kernel, memcpy or memset record.
template <class Record>
GpuActivity activity_of(const Record& r) {
  return {static_cast<std::int32_t>(r.deviceId), r.contextId, r.streamId, ns(r.start), ns(r.end), r.correlationId};
}

}  // namespace

std::uint64_t now_unix_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string runtime_api_display_name(const char* cupti_name) {
  std::string s = cupti_name ? cupti_name : "";
  // CUPTI names runtime calls after their callback-id enum: "<name>_v<version>".
  auto pos = s.rfind("_v");
  if (pos != std::string::npos && pos + 2 < s.size() &&
      std::all_of(s.begin() + static_cast<std::ptrdiff_t>(pos) + 2, s.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    s.resize(pos);
  }
  return s;
}

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = (status == 0 && out != nullptr) ? std::string(out) : std::string(name);
  std::free(out);
  return result;
}

TraceBuilder::TraceBuilder() = default;

const DecodeStats& TraceBuilder::stats() const {
  stats_.by_kind.clear();
  for (const auto& [k, n] : kind_counts_) stats_.by_kind[k] = n;
  return stats_;
}

StringId TraceBuilder::api_name(ApiKind kind, std::uint32_t cbid) {
  const std::uint64_t key = (static_cast<std::uint64_t>(kind) << 32) | cbid;
  if (auto it = api_names_.find(key); it != api_names_.end()) return it->second;
  const char* raw = nullptr;
  const auto domain = kind == ApiKind::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  std::string name;
  if (cuptiGetCallbackName(domain, cbid, &raw) == CUPTI_SUCCESS && raw != nullptr) {
    name = kind == ApiKind::Runtime ? runtime_api_display_name(raw) : std::string(raw);
  } else {
    name = (kind == ApiKind::Runtime ? "runtime_cbid_" : "driver_cbid_") + std::to_string(cbid);
  }
  StringId id = trace_.intern(name);
  api_names_.emplace(key, id);
  return id;
}

void TraceBuilder::add(const CUpti_Activity& record) {
  ++stats_.records;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: add_kernel(reinterpret_cast<const KernelRecord&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: add_memcpy(reinterpret_cast<const MemcpyRecord&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2: add_peer_copy(reinterpret_cast<const PeerCopyRecord&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: add_memset(reinterpret_cast<const MemsetRecord&>(record)); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME: add_api(reinterpret_cast<const ApiRecord&>(record), ApiKind::Runtime); break;
    case CUPTI_ACTIVITY_KIND_DRIVER: add_api(reinterpret_cast<const ApiRecord&>(record), ApiKind::Driver); break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: add_sync(reinterpret_cast<const SyncRecordT&>(record)); break;
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: add_cuda_event(reinterpret_cast<const CudaEventRecordT&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MARKER: add_marker(reinterpret_cast<const MarkerRecord&>(record)); break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: add_overhead(reinterpret_cast<const OverheadRecordT&>(record)); break;
    case CUPTI_ACTIVITY_KIND_DEVICE: add_device(reinterpret_cast<const DeviceRecord&>(record)); break;
    case CUPTI_ACTIVITY_KIND_CONTEXT: add_context(reinterpret_cast<const ContextRecord&>(record)); break;
    default:
      ++stats_.unknown;
      ++trace_.meta.unknown_categories["cupti:kind_" + std::to_string(static_cast<int>(record.kind))];
      break;
  }
}

void TraceBuilder::add_kernel(const KernelRecord& r) {
  count("kernel");
  note_context(r.contextId, r.deviceId);
  if (r.start == 0 && r.end == 0) {
    ++stats_.no_timestamp;
    return;
  }
  Kernel k;
  const StringId raw = trace_.intern(r.name ? r.name : "");
  auto it = demangled_.find(raw);
  if (it == demangled_.end()) {
    const std::string display = demangle(r.name);
    it = demangled_.emplace(raw, trace_.intern(display)).first;
  }
  k.name = it->second;
  k.mangled_name = it->second == raw ? kNoString : raw;
  static_cast<GpuActivity&>(k) = activity_of(r);
  k.grid[0] = r.gridX;
  k.grid[1] = r.gridY;
  k.grid[2] = r.gridZ;
  k.block[0] = r.blockX;
  k.block[1] = r.blockY;
  k.block[2] = r.blockZ;
  k.registers_per_thread = r.registersPerThread;
  k.shared_memory_bytes = r.staticSharedMemory + r.dynamicSharedMemory;
  trace_.kernels.push_back(k);
}

void TraceBuilder::add_memcpy(const MemcpyRecord& r) {
  count("memcpy");
  note_context(r.contextId, r.deviceId);
  if (r.start == 0 && r.end == 0) {
    ++stats_.no_timestamp;
    return;
  }
  Memcpy m;
  m.kind = copy_kind(r.copyKind);
  m.src_kind = memory_kind(r.srcKind);
  m.dst_kind = memory_kind(r.dstKind);
  m.async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  m.bytes = r.bytes;
  static_cast<GpuActivity&>(m) = activity_of(r);
  if (r.runtimeCorrelationId != 0) m.correlation = r.runtimeCorrelationId;
  trace_.memcpys.push_back(m);
}

void TraceBuilder::add_peer_copy(const PeerCopyRecord& r) {
  count("memcpy2");
  note_context(r.contextId, r.deviceId);
  if (r.start == 0 && r.end == 0) {
    ++stats_.no_timestamp;
    return;
  }
  Memcpy m;
  m.kind = copy_kind(r.copyKind);
  if (m.kind == CopyKind::Unknown || m.kind == CopyKind::DtoD) {
    if (r.srcDeviceId != r.dstDeviceId) m.kind = CopyKind::PtoP;
  }
  m.src_kind = memory_kind(r.srcKind);
  m.dst_kind = memory_kind(r.dstKind);
  m.async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  m.bytes = r.bytes;
  static_cast<GpuActivity&>(m) = activity_of(r);
  m.peer_device = static_cast<std::int32_t>(r.srcDeviceId == r.deviceId ? r.dstDeviceId : r.srcDeviceId);
  trace_.memcpys.push_back(m);
}

void TraceBuilder::add_memset(const MemsetRecord& r) {
  count("memset");
  note_context(r.contextId, r.deviceId);
  if (r.start == 0 && r.end == 0) {
    ++stats_.no_timestamp;
    return;
  }
  Memset m;
  m.bytes = r.bytes;
  m.value = r.value;
  m.memory_kind = memory_kind(r.memoryKind);
  m.async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
  static_cast<GpuActivity&>(m) = activity_of(r);
  trace_.memsets.push_back(m);
}

void TraceBuilder::add_api(const ApiRecord& r, ApiKind kind) {
  count(kind == ApiKind::Runtime ? "runtime" : "driver");
  ApiCall a;
  a.kind = kind;
  a.name = api_name(kind, r.cbid);
  a.cbid = static_cast<std::int32_t>(r.cbid);
  a.pid = r.processId;
  a.tid = r.threadId;
  a.start = ns(r.start);
  a.end = ns(r.end);
  a.correlation = r.correlationId;
  a.return_code = static_cast<std::int32_t>(r.returnValue);
  trace_.api_calls.push_back(a);
}

void TraceBuilder::add_sync(const SyncRecordT& r) {
  count("sync");
  if (r.start == 0 && r.end == 0) {
    // "Timestamps could not be collected" (cupti_activity.h): counted, not placed at 0.
    ++stats_.no_timestamp;
    return;
  }
  SyncRecord s;
  s.type = sync_type(r.type);
  s.context = r.contextId == kInvalid32 ? 0 : r.contextId;
  s.stream = stream_id(r.streamId);
  s.event_id = r.cudaEventId == kInvalid32 ? 0 : r.cudaEventId;
  s.event_sync_id = (r.cudaEventSyncId == kInvalid32 || r.cudaEventSyncId == ~std::uint64_t{0}) ? 0 : r.cudaEventSyncId;
  s.start = ns(r.start);
  s.end = ns(r.end);
  s.correlation = r.correlationId;
  s.return_code = static_cast<std::int32_t>(r.returnValue);
  trace_.syncs.push_back(s);
}

void TraceBuilder::add_cuda_event(const CudaEventRecordT& r) {
  count("cuda_event");
  note_context(r.contextId, r.deviceId);
  CudaEventRecord e;
  e.device = static_cast<std::int32_t>(r.deviceId);
  e.context = r.contextId;
  e.stream = stream_id(r.streamId);
  e.event_id = r.eventId;
  e.event_sync_id = r.cudaEventSyncId;
  e.timestamp = ns(r.deviceTimestamp);  // 0 unless device timestamps were enabled
  e.correlation = r.correlationId;
  trace_.cuda_events.push_back(e);
}

void TraceBuilder::add_marker(const MarkerRecord& r) {
  count("marker");
  const auto flags = static_cast<std::uint32_t>(r.flags);
  const bool thread_scope = r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    PendingMarker p;
    p.name = trace_.intern(r.name ? r.name : "");
    p.domain = trace_.intern(r.domain ? r.domain : "");
    p.timestamp = ns(r.timestamp);
    p.thread_scope = thread_scope;
    if (r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || r.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
      p.pid = r.objectId.pt.processId;
      if (thread_scope || r.objectId.pt.threadId != 0) p.tid = r.objectId.pt.threadId;
    }
    if (auto end = early_marker_ends_.find(r.id); end != early_marker_ends_.end()) {
      Range range;
      range.kind = p.thread_scope ? RangeKind::NvtxPushPop : RangeKind::NvtxStartEnd;
      range.name = p.name;
      range.domain = p.domain;
      range.pid = p.pid;
      range.tid = p.tid;
      range.start = p.timestamp;
      range.end = end->second;
      trace_.ranges.push_back(range);
      early_marker_ends_.erase(end);
    } else {
      open_markers_[r.id] = p;
    }
  } else if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_markers_.find(r.id);
    if (it == open_markers_.end()) {
      early_marker_ends_[r.id] = ns(r.timestamp);
      return;
    }
    const PendingMarker& p = it->second;
    Range range;
    range.kind = p.thread_scope ? RangeKind::NvtxPushPop : RangeKind::NvtxStartEnd;
    range.name = p.name;
    range.domain = p.domain;
    range.pid = p.pid;
    range.tid = p.tid;
    range.start = p.timestamp;
    range.end = std::max(p.timestamp, ns(r.timestamp));
    trace_.ranges.push_back(range);
    open_markers_.erase(it);
  } else {
    ++stats_.instant_markers;
  }
}

void TraceBuilder::add_overhead(const OverheadRecordT& r) {
  count("overhead");
  OverheadRecord o;
  o.name = trace_.intern(overhead_name(static_cast<unsigned>(r.overheadKind)));
  if (r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || r.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    o.pid = r.objectId.pt.processId;
    if (r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) o.tid = r.objectId.pt.threadId;
  }
  o.start = ns(r.start);
  o.end = ns(r.end);
  trace_.overheads.push_back(o);
}

void TraceBuilder::add_device(const DeviceRecord& r) {
  count("device");
  for (const auto& d : trace_.devices)
    if (d.id == static_cast<std::int32_t>(r.id)) return;
  DeviceProperties d;
  d.id = static_cast<std::int32_t>(r.id);
  d.name = r.name ? r.name : "";
  d.compute_major = static_cast<std::int32_t>(r.computeCapabilityMajor);
  d.compute_minor = static_cast<std::int32_t>(r.computeCapabilityMinor);
  d.total_memory_bytes = r.globalMemorySize;
  d.sm_count = static_cast<std::int32_t>(r.numMultiprocessors);
  d.max_threads_per_block = static_cast<std::int32_t>(r.maxThreadsPerBlock);
  d.warp_size = static_cast<std::int32_t>(r.numThreadsPerWarp);
  d.max_threads_per_sm = static_cast<std::int32_t>(r.maxWarpsPerMultiprocessor * r.numThreadsPerWarp);
  d.regs_per_block = static_cast<std::int32_t>(r.maxRegistersPerBlock);
  d.regs_per_sm = static_cast<std::int32_t>(r.maxRegistersPerMultiprocessor);
  d.shared_mem_per_block = r.maxSharedMemoryPerBlock;
  d.shared_mem_per_sm = r.maxSharedMemoryPerMultiprocessor;
  trace_.devices.push_back(std::move(d));
}

void TraceBuilder::add_context(const ContextRecord& r) {
  count("context");
  context_device_[r.contextId] = r.deviceId;
}

Trace TraceBuilder::finish() {
  Trace& t = trace_;

  // Driver calls made by the runtime inside one of its own calls (same thread, interval
  // inside the runtime call's): dropped, their correlation ids mapped to the runtime call's.
  std::unordered_map<std::uint64_t, std::uint64_t> remap;
  {
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<Ns, Ns>>> runtime_by_thread;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint64_t>> runtime_corr;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < t.api_calls.size(); ++i)
      if (t.api_calls[i].kind == ApiKind::Runtime) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(t.api_calls[a].start, t.api_calls[a].end) < std::tie(t.api_calls[b].start, t.api_calls[b].end);
    });
    for (std::size_t i : order) {
      const auto& a = t.api_calls[i];
      runtime_by_thread[{a.pid, a.tid}].emplace_back(a.start, a.end);
      runtime_corr[{a.pid, a.tid}].push_back(a.correlation);
    }
    std::vector<ApiCall> kept;
    kept.reserve(t.api_calls.size());
    for (const auto& a : t.api_calls) {
      if (a.kind == ApiKind::Driver) {
        auto it = runtime_by_thread.find({a.pid, a.tid});
        if (it != runtime_by_thread.end()) {
          const auto& iv = it->second;
          // Runtime calls on one thread do not overlap: the candidate is the last one
          // starting at or before the driver call.
          auto pos = std::upper_bound(iv.begin(), iv.end(), std::make_pair(a.start, std::numeric_limits<Ns>::max()));
          if (pos != iv.begin()) {
            --pos;
            if (pos->first <= a.start && a.end <= pos->second) {
              const auto idx = static_cast<std::size_t>(pos - iv.begin());
              const std::uint64_t outer = runtime_corr[{a.pid, a.tid}][idx];
              if (a.correlation != 0 && a.correlation != outer) remap[a.correlation] = outer;
              ++stats_.nested_driver_calls;
              continue;
            }
          }
        }
      }
      kept.push_back(a);
    }
    t.api_calls = std::move(kept);
  }
  if (!remap.empty()) {
    auto fix = [&](std::uint64_t& c) {
      if (auto it = remap.find(c); it != remap.end()) c = it->second;
    };
    for (auto& k : t.kernels) fix(k.correlation);
    for (auto& m : t.memcpys) fix(m.correlation);
    for (auto& m : t.memsets) fix(m.correlation);
    for (auto& s : t.syncs) fix(s.correlation);
    for (auto& e : t.cuda_events) fix(e.correlation);
  }

  // Correlation id -> API call (runtime ids and driver ids come from one counter).
  std::unordered_map<std::uint64_t, const ApiCall*> api_by_corr;
  api_by_corr.reserve(t.api_calls.size());
  for (const auto& a : t.api_calls)
    if (a.correlation != 0) api_by_corr.emplace(a.correlation, &a);

  for (auto& e : t.cuda_events) {
    if (e.timestamp == 0) {
      if (auto it = api_by_corr.find(e.correlation); it != api_by_corr.end()) e.timestamp = it->second->start;
    }
  }
  std::unordered_map<std::uint64_t, const CudaEventRecord*> event_by_sync_id;
  for (const auto& e : t.cuda_events)
    if (e.event_sync_id != 0) event_by_sync_id[e.event_sync_id] = &e;

  for (auto& s : t.syncs) {
    if (auto it = context_device_.find(s.context); it != context_device_.end())
      s.device = static_cast<std::int32_t>(it->second);
    if (auto it = api_by_corr.find(s.correlation); it != api_by_corr.end())
      s.is_query = is_query_call(it->second->kind, it->second->cbid);
    if ((s.type == SyncType::EventSync || s.type == SyncType::StreamWaitEvent) && s.event_sync_id != 0) {
      if (auto it = event_by_sync_id.find(s.event_sync_id); it != event_by_sync_id.end()) {
        s.wait_on_stream = it->second->stream;
        s.wait_on_event_record_correlation = static_cast<std::int64_t>(it->second->correlation);
        if (s.device < 0) s.device = it->second->device;
      }
    }
  }

  stats_.unpaired_markers = open_markers_.size() + early_marker_ends_.size();

  t.meta.source_tool = "syncscope-tracer";
  t.meta.source_version = source_version_;
  t.meta.trace_name = trace_name_;
  t.meta.clock = ClockBase::UnixEpoch;
  t.meta.dropped_records = stats_.dropped_by_cupti + stats_.lost_to_cap;
  for (const auto& [k, v] : extra_) t.meta.extra[k] = v;
  t.meta.extra["cupti_records"] = std::to_string(stats_.records);
  t.meta.extra["cupti_dropped_records"] = std::to_string(stats_.dropped_by_cupti);
  t.meta.extra["records_lost_to_buffer_cap"] = std::to_string(stats_.lost_to_cap);
  t.meta.extra["unknown_records"] = std::to_string(stats_.unknown);
  t.meta.extra["malformed_buffers"] = std::to_string(stats_.malformed_buffers);
  t.meta.extra["records_without_timestamps"] = std::to_string(stats_.no_timestamp);
  t.meta.extra["nvtx_unpaired_markers"] = std::to_string(stats_.unpaired_markers);
  t.meta.extra["nvtx_instant_markers"] = std::to_string(stats_.instant_markers);
  t.meta.extra["nested_driver_calls_dropped"] = std::to_string(stats_.nested_driver_calls);
  t.finalize();

  Trace out = std::move(trace_);
  trace_ = Trace{};
  api_names_.clear();
  demangled_.clear();
  open_markers_.clear();
  early_marker_ends_.clear();
  context_device_.clear();
  stats_ = DecodeStats{};
  kind_counts_.clear();
  return out;
}

std::uint64_t decode_activity_buffer(const std::uint8_t* buffer, std::size_t valid_bytes, TraceBuilder& out) {
  if (buffer == nullptr || valid_bytes == 0) return 0;
  // cuptiActivityGetNextRecord takes a non-const buffer but only reads it.
  auto* buf = const_cast<std::uint8_t*>(buffer);
  CUpti_Activity* record = nullptr;
  std::uint64_t n = 0;
  for (;;) {
    const CUptiResult r = cuptiActivityGetNextRecord(buf, valid_bytes, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (r != CUPTI_SUCCESS || record == nullptr) {
      out.note_malformed_buffer();
      break;
    }
    out.add(*record);
    ++n;
  }
  return n;
}

std::uint64_t count_activity_records(const std::uint8_t* buffer, std::size_t valid_bytes) {
  if (buffer == nullptr || valid_bytes == 0) return 0;
  auto* buf = const_cast<std::uint8_t*>(buffer);
  CUpti_Activity* record = nullptr;
  std::uint64_t n = 0;
  while (cuptiActivityGetNextRecord(buf, valid_bytes, &record) == CUPTI_SUCCESS && record != nullptr) ++n;
  return n;
}

}  // namespace syncscope::cupti_detail
