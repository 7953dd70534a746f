#include "cupti_session.hpp"

#include <algorithm>
#include <set>

namespace syncscope::cupti_detail {
namespace {

// The last-resort buffer for CUPTI libraries older than kCuptiVersionAcceptsNullBuffer,
// which crash on a null buffer: handed out for a request that cannot be served (allocation
// failure, or a request while no session is open), one holder at a time. Its records are
// counted as lost when it comes back, never decoded (the decoder thread owns the builder).
alignas(8) std::uint8_t g_emergency[64 * 1024];
std::atomic<bool> g_emergency_in_use{false};

// The session CUPTI's buffer callbacks reach: the one that opened last. CUPTI keeps one
// pair of callbacks per process.
std::atomic<Session*> g_active{nullptr};

}  // namespace

Status make_status(CUptiResult code, const std::string& call) {
  Status s;
  s.code = code;
  if (code != CUPTI_SUCCESS) {
    const char* name = nullptr;
    if (cuptiGetResultString(code, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown CUPTI error";
    s.what = call + ": " + name + " (" + std::to_string(static_cast<int>(code)) + ")";
  }
  return s;
}

const std::vector<CUpti_CallbackId>& traced_driver_cbids() {
  static const std::vector<CUpti_CallbackId> ids = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
      CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
      CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
      CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
      CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
      CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
      CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
      CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
      CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer,
      CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
      // Memsets: their records carry the driver call's correlation id only.
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2_ptds,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz,
  };
  return ids;
}

const std::vector<CUpti_CallbackId>& untraced_runtime_cbids() {
  static const std::vector<CUpti_CallbackId> ids = {
      CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v10010,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
  };
  return ids;
}

Session& Session::instance() {
  // Never destroyed: CUPTI may call back during static destruction.
  static Session* s = new Session(real_cupti_api());
  return *s;
}

Session::Session(CuptiApi& api) : api_(api) {}

Session::~Session() {
  Session* self = this;
  g_active.compare_exchange_strong(self, nullptr);
}

void CUPTIAPI Session::on_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *max_records = 0;  // fill the buffer with as many records as fit
  *buffer = nullptr;
  *size = 0;
  if (Session* s = g_active.load(std::memory_order_acquire)) {
    s->request(buffer, size);
    return;
  }
  // No session ever opened in this process: the emergency buffer, if free.
  bool expected = false;
  if (g_emergency_in_use.compare_exchange_strong(expected, true)) {
    *buffer = g_emergency;
    *size = sizeof g_emergency;
  }
}

void CUPTIAPI Session::on_complete(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                   std::size_t valid) {
  if (Session* s = g_active.load(std::memory_order_acquire)) {
    (void)context;
    (void)stream;
    s->complete(buffer, valid);
  } else if (buffer == g_emergency) {
    g_emergency_in_use.store(false, std::memory_order_release);
  }
}

void Session::request(std::uint8_t** buffer, std::size_t* size) {
  if (auto* p = live_pipeline_.load(std::memory_order_acquire)) {
    try {
      p->request(buffer, size);
      if (*buffer != nullptr) return;
    } catch (...) {
      // Allocation failed: fall through, the request is declined or served from the
      // emergency buffer.
    }
  }
  *buffer = nullptr;
  *size = 0;
  if (cupti_version_.load(std::memory_order_relaxed) >= kCuptiVersionAcceptsNullBuffer) {
    // CUPTI >= 13 takes no buffer for an answer and counts what it drops
    // (cuptiActivityGetNumDroppedRecords, read at close()).
    requests_declined_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  bool expected = false;
  if (g_emergency_in_use.compare_exchange_strong(expected, true)) {
    *buffer = g_emergency;
    *size = sizeof g_emergency;
  } else {
    // The emergency buffer is CUPTI's already: handing it out twice would let two writers
    // share it. Nothing else is left to give.
    requests_declined_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Session::complete(std::uint8_t* buffer, std::size_t valid) {
  std::size_t dropped = 0;
  // CUDA 6.0 onwards every buffer is global (context NULL, stream 0: cupti_activity.h).
  if (api_.dropped_records(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped != 0)
    dropped_.fetch_add(dropped, std::memory_order_relaxed);
  if (buffer == nullptr) return;
  if (buffer == g_emergency) {
    // Counted as lost (no pool buffer to decode them from), then free for the next holder.
    emergency_records_.fetch_add(count_activity_records(buffer, valid), std::memory_order_relaxed);
    g_emergency_in_use.store(false, std::memory_order_release);
    return;
  }
  if (auto* p = live_pipeline_.load(std::memory_order_acquire)) p->complete(buffer, valid);
}

std::uint64_t CUPTIAPI Session::on_timestamp() { return now_unix_ns(); }

void Session::warn(std::string w) {
  if (std::find(warnings_.begin(), warnings_.end(), w) == warnings_.end()) warnings_.push_back(std::move(w));
}

std::vector<std::string> Session::warnings() const {
  std::lock_guard lock(mutex_);
  return warnings_;
}

Status Session::open(const SessionConfig& config) {
  std::lock_guard lock(mutex_);
  if (open_.load())
    return {CUPTI_ERROR_INVALID_OPERATION, "a syncscope tracing session is already active in this process"};
  config_ = config;
  warnings_.clear();
  {
    std::lock_guard clock(contexts_mutex_);
    contexts_.clear();
  }
  dropped_.store(0);
  requests_declined_.store(0);
  emergency_records_.store(0);
  std::uint32_t version = 0;
  if (api_.version(&version) != CUPTI_SUCCESS) version = 0;
  cupti_version_.store(version, std::memory_order_relaxed);

  // The timestamp callback first: records made before it would use CUPTI's own clock
  // (cupti_activity.h). Ours is CLOCK_REALTIME in ns, the clock of every host timestamp.
  if (!timestamp_registered_) {
    Status s =
        make_status(api_.register_timestamp_callback(&Session::on_timestamp), "cuptiActivityRegisterTimestampCallback");
    if (!s.ok()) {
      if (s.code == CUPTI_ERROR_NOT_SUPPORTED || s.code == CUPTI_ERROR_NOT_COMPATIBLE) {
        // CUPTI's default on Linux is CLOCK_REALTIME too: same clock, noted.
        warn(s.what + "; using CUPTI's default clock (CLOCK_REALTIME on Linux)");
      } else {
        return s;
      }
    } else {
      timestamp_registered_ = true;
    }
  }

  auto builder = std::make_unique<TraceBuilder>();
  builder->set_trace_name(config.trace_name);
  TraceBuilder* target = builder.get();
  auto decode = [target](const std::uint8_t* data, std::size_t valid) {
    return decode_activity_buffer(data, valid, *target);
  };
  if (!pipeline_) {
    pipeline_ =
        std::make_unique<BufferPipeline>(config.pipeline, decode, [](const std::uint8_t* data, std::size_t valid) {
          return count_activity_records(data, valid);
        });
    live_pipeline_.store(pipeline_.get(), std::memory_order_release);
  } else {
    pipeline_->reset_session(decode, config.pipeline.max_record_bytes);
  }
  builder_ = std::move(builder);  // the old builder is no longer reachable by the decoder
  g_active.store(this, std::memory_order_release);

  if (!callbacks_registered_) {
    Status s = make_status(api_.register_callbacks(&Session::on_request, &Session::on_complete),
                           "cuptiActivityRegisterCallbacks");
    if (!s.ok()) return s;
    callbacks_registered_ = true;
  }
  if (version != 0) builder_->set_source_version("CUPTI " + std::to_string(version));
  builder_->set_extra("activities", activities_to_string(config.activities));
  closing_.store(false);
  open_.store(true, std::memory_order_release);
  return {};
}

Status Session::set_kinds(bool on) {
  const std::uint32_t a = config_.activities;
  Status first;
  auto kind = [&](CUpti_ActivityKind k, const char* name, bool required) {
    const CUptiResult r = on ? api_.activity_enable(k) : api_.activity_disable(k);
    Status s = make_status(r, std::string(on ? "cuptiActivityEnable(" : "cuptiActivityDisable(") + name + ")");
    if (!s.ok()) {
      if (required && first.ok()) first = s;
      else if (!required) warn(s.what);
    }
  };
  if (a & kActivityKernel) kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", true);
  if (a & kActivityMemcpy) {
    kind(CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", true);
    kind(CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", false);
  }
  if (a & kActivityMemset) kind(CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", true);
  if (a & kActivitySync) {
    kind(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", true);
    if (on) {
      // No records for queries of work still pending (cupti_activity.h): they are polls,
      // not waits, and PyTorch's allocator issues many.
      Status s = make_status(api_.enable_all_sync_records(false), "cuptiActivityEnableAllSyncRecords(0)");
      if (!s.ok()) warn(s.what);
    }
  }
  // Since CUDA 12.9 CUDA_EVENT no longer comes with SYNCHRONIZATION (docs/sources.md#cupti-13).
  if (a & kActivityEvent) kind(CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT", false);
  if (a & kActivityRuntime) {
    kind(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", true);
    if (on) {
      for (auto cbid : untraced_runtime_cbids()) {
        Status s = make_status(api_.enable_runtime_api(cbid, false),
                               "cuptiActivityEnableRuntimeApi(" + std::to_string(cbid) + ", off)");
        if (!s.ok()) warn(s.what);
      }
    }
  }
  if (a & kActivityDriver) {
    // Each callback id on its own: one the library refuses (an id newer or older than it
    // knows) is noted and the rest, the synchronizing calls among them, stay traced.
    std::vector<std::string> refused;
    for (auto cbid : traced_driver_cbids()) {
      Status s = make_status(api_.enable_driver_api(cbid, on), "cuptiActivityEnableDriverApi");
      if (!s.ok()) refused.push_back(std::to_string(cbid) + " (" + s.what.substr(s.what.find(": ") + 2) + ")");
    }
    if (!refused.empty()) {
      std::string w = std::string("cuptiActivityEnableDriverApi(") + (on ? "on" : "off") + ") refused " +
                      std::to_string(refused.size()) + " of " + std::to_string(traced_driver_cbids().size()) +
                      " driver callback ids:";
      for (const auto& r : refused) w += " " + r;
      warn(w);
    }
  }
  if (a & kActivityNvtx) kind(CUPTI_ACTIVITY_KIND_MARKER, "MARKER", false);
  if (a & kActivityOverhead) kind(CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD", false);
  // Device properties and context -> device, for the trace's devices and sync records.
  kind(CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", false);
  kind(CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT", false);
  return first;
}

Status Session::enable() {
  std::lock_guard lock(mutex_);
  if (!open_.load() || closing_.load()) return {CUPTI_ERROR_INVALID_OPERATION, "no tracing session is open"};
  Status s = set_kinds(true);
  if (s.ok()) enabled_.store(true, std::memory_order_release);
  return s;
}

Status Session::disable() {
  std::lock_guard lock(mutex_);
  enabled_.store(false, std::memory_order_release);
  return set_kinds(false);
}

Status Session::flush_forced() {
  return make_status(api_.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll(FORCED)");
}

void Session::note_context(CUcontext context) {
  std::lock_guard lock(contexts_mutex_);
  if (std::find(contexts_.begin(), contexts_.end(), context) == contexts_.end()) contexts_.push_back(context);
}

void Session::add_driver_devices(Trace& t) {
  std::set<std::int32_t> named;
  for (const auto& d : t.devices)
    if (!d.name.empty()) named.insert(d.id);
  std::set<std::int32_t> used;
  for (const auto& k : t.kernels) used.insert(k.device);
  for (const auto& m : t.memcpys) used.insert(m.device);
  for (const auto& m : t.memsets) used.insert(m.device);
  for (const auto& s : t.syncs)
    if (s.device >= 0) used.insert(s.device);
  std::vector<std::string> from_driver, unknown;
  for (std::int32_t id : used) {
    if (id < 0 || named.count(id)) continue;
    DeviceProperties p;
    if (!api_.device_properties(id, &p)) {
      unknown.push_back(std::to_string(id));
      continue;
    }
    p.id = id;
    auto it = std::find_if(t.devices.begin(), t.devices.end(), [&](const DeviceProperties& d) { return d.id == id; });
    if (it != t.devices.end()) *it = p;
    else t.devices.push_back(p);
    from_driver.push_back(std::to_string(id));
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
  };
  if (!from_driver.empty()) t.meta.extra["device_names_from_driver"] = join(from_driver);
  if (!unknown.empty()) t.meta.extra["devices_without_name"] = join(unknown);
  t.meta.extra["device_names_from"] = from_driver.empty() ? "cupti_device_records" : "cupti_device_records+driver";
}

Trace Session::close(TracerStats* stats) {
  {
    std::lock_guard lock(mutex_);
    if (!open_.load() || closing_.exchange(true)) return Trace{};
    if (enabled_.load()) {
      enabled_.store(false);
      (void)set_kinds(false);
    }
  }
  // No lock of ours is held from here to the end of the drain: CUPTI may hand buffers back
  // on this thread, and application threads in CUPTI callbacks must never wait for this.
  // Forced: also buffers with incomplete records, so nothing stays inside CUPTI.
  Status f = make_status(api_.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll(FORCED)");
  BufferPipeline& pipeline = *pipeline_;
  pipeline.drain();
  std::size_t d = 0;
  if (api_.dropped_records(nullptr, 0, &d) == CUPTI_SUCCESS) dropped_ += d;
  std::vector<CUcontext> contexts;
  {
    std::lock_guard clock(contexts_mutex_);
    contexts = contexts_;
  }
  for (CUcontext c : contexts) {
    d = 0;
    if (api_.dropped_records(c, 0, &d) == CUPTI_SUCCESS) dropped_ += d;
  }

  std::lock_guard lock(mutex_);
  if (!f.ok()) warn(f.what);
  TraceBuilder& builder = *builder_;
  const PipelineStats ps = pipeline.stats();
  const std::uint64_t emergency = emergency_records_.load();
  builder.add_dropped_by_cupti(dropped_.load());
  // Records CUPTI wrote where no pool buffer could be given count with those lost to the cap.
  builder.add_lost_to_cap(ps.lost_to_cap + emergency);
  builder.set_extra("buffers_completed", std::to_string(ps.buffers_completed));
  builder.set_extra("buffers_allocated", std::to_string(ps.buffers_allocated));
  builder.set_extra("buffer_peak_bytes", std::to_string(ps.peak_bytes));
  builder.set_extra("buffers_over_cap", std::to_string(ps.over_cap_handouts));
  builder.set_extra("buffer_requests_declined", std::to_string(requests_declined_.load()));
  builder.set_extra("records_lost_in_emergency_buffer", std::to_string(emergency));
  for (std::size_t i = 0; i < warnings_.size(); ++i) builder.set_extra("warning_" + std::to_string(i), warnings_[i]);
  const DecodeStats ds = builder.stats();
  Trace t = builder.finish();
  add_driver_devices(t);
  pipeline.trim();
  if (stats != nullptr) {
    stats->records = ds.records;
    stats->dropped_by_cupti = ds.dropped_by_cupti;
    stats->lost_to_cap = ds.lost_to_cap;
    stats->buffers_completed = ps.buffers_completed;
    stats->buffers_allocated = ps.buffers_allocated;
    stats->peak_buffer_bytes = ps.peak_bytes;
    stats->unknown_records = ds.unknown;
  }
  open_.store(false, std::memory_order_release);
  closing_.store(false);
  return t;
}

Status Session::finalize() {
  std::lock_guard lock(mutex_);
  Status s = make_status(api_.finalize(), "cuptiFinalize");
  // CUPTI forgot every registration; the next open() registers again.
  callbacks_registered_ = false;
  timestamp_registered_ = false;
  return s;
}

}  // namespace syncscope::cupti_detail
