#include "cupti_session.hpp"

#include <algorithm>

namespace syncscope::cupti_detail {
namespace {

// A last-resort buffer for a request that cannot be served (allocation failure, or a
// request arriving while no session is open): CUPTI before 12.9 crashes on a null buffer.
// Its records are never decoded (complete() does not know it).
alignas(8) std::uint8_t g_emergency[64 * 1024];

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
  static Session* s = new Session();
  return *s;
}

void CUPTIAPI Session::on_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *max_records = 0;  // fill the buffer with as many records as fit
  if (auto* p = instance().live_pipeline_.load(std::memory_order_acquire)) {
    try {
      p->request(buffer, size);
      return;
    } catch (...) {
    }
  }
  *buffer = g_emergency;
  *size = sizeof g_emergency;
}

void CUPTIAPI Session::on_complete(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                   std::size_t valid) {
  Session& s = instance();
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped != 0)
    s.dropped_.fetch_add(dropped, std::memory_order_relaxed);
  if (buffer == g_emergency) return;
  if (auto* p = s.live_pipeline_.load(std::memory_order_acquire)) p->complete(buffer, valid);
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
  if (open_.load()) return {CUPTI_ERROR_INVALID_OPERATION, "a syncscope tracing session is already active in this process"};
  config_ = config;
  warnings_.clear();
  contexts_.clear();
  dropped_.store(0);

  // The timestamp callback first: records made before it would use CUPTI's own clock
  // (cupti_activity.h). Ours is CLOCK_REALTIME in ns, the clock of every host timestamp.
  if (!timestamp_registered_) {
    Status s = make_status(cuptiActivityRegisterTimestampCallback(&Session::on_timestamp),
                           "cuptiActivityRegisterTimestampCallback");
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
    pipeline_ = std::make_unique<BufferPipeline>(
        config.pipeline, decode,
        [](const std::uint8_t* data, std::size_t valid) { return count_activity_records(data, valid); });
    live_pipeline_.store(pipeline_.get(), std::memory_order_release);
  } else {
    pipeline_->reset_session(decode, config.pipeline.max_record_bytes);
  }
  builder_ = std::move(builder);  // the old builder is no longer reachable by the decoder

  if (!callbacks_registered_) {
    Status s = make_status(cuptiActivityRegisterCallbacks(&Session::on_request, &Session::on_complete),
                           "cuptiActivityRegisterCallbacks");
    if (!s.ok()) return s;
    callbacks_registered_ = true;
  }
  std::uint32_t version = 0;
  if (cuptiGetVersion(&version) == CUPTI_SUCCESS) builder_->set_source_version("CUPTI " + std::to_string(version));
  builder_->set_extra("activities", activities_to_string(config.activities));
  open_.store(true, std::memory_order_release);
  return {};
}

Status Session::set_kinds(bool on) {
  const std::uint32_t a = config_.activities;
  Status first;
  auto kind = [&](CUpti_ActivityKind k, const char* name, bool required) {
    const CUptiResult r = on ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
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
      Status s = make_status(cuptiActivityEnableAllSyncRecords(0), "cuptiActivityEnableAllSyncRecords(0)");
      if (!s.ok()) warn(s.what);
    }
  }
  // Since CUDA 12.9 CUDA_EVENT no longer comes with SYNCHRONIZATION (facts.md).
  if (a & kActivityEvent) kind(CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT", false);
  if (a & kActivityRuntime) {
    kind(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", true);
    if (on) {
      for (auto cbid : untraced_runtime_cbids()) {
        Status s = make_status(cuptiActivityEnableRuntimeApi(cbid, 0), "cuptiActivityEnableRuntimeApi(off)");
        if (!s.ok()) warn(s.what);
      }
    }
  }
  if (a & kActivityDriver) {
    for (auto cbid : traced_driver_cbids()) {
      Status s = make_status(cuptiActivityEnableDriverApi(cbid, on ? 1 : 0),
                             std::string("cuptiActivityEnableDriverApi(") + std::to_string(cbid) + ")");
      if (!s.ok()) {
        warn(s.what);
        break;
      }
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
  if (!open_.load()) return {CUPTI_ERROR_INVALID_OPERATION, "no tracing session is open"};
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
  return make_status(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll(FORCED)");
}

void Session::note_context(CUcontext context) {
  std::lock_guard lock(mutex_);
  if (std::find(contexts_.begin(), contexts_.end(), context) == contexts_.end()) contexts_.push_back(context);
}

Trace Session::close(TracerStats* stats) {
  std::lock_guard lock(mutex_);
  if (!open_.load()) return Trace{};
  if (enabled_.load()) {
    enabled_.store(false);
    (void)set_kinds(false);
  }
  // Forced: also buffers with incomplete records, so nothing stays inside CUPTI.
  Status f = make_status(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll(FORCED)");
  if (!f.ok()) warn(f.what);
  BufferPipeline& pipeline = *pipeline_;
  TraceBuilder& builder = *builder_;
  pipeline.drain();
  std::size_t d = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &d) == CUPTI_SUCCESS) dropped_ += d;
  for (CUcontext c : contexts_) {
    d = 0;
    if (cuptiActivityGetNumDroppedRecords(c, 0, &d) == CUPTI_SUCCESS) dropped_ += d;
  }
  const PipelineStats ps = pipeline.stats();
  builder.add_dropped_by_cupti(dropped_.load());
  builder.add_lost_to_cap(ps.lost_to_cap);
  builder.set_extra("buffers_completed", std::to_string(ps.buffers_completed));
  builder.set_extra("buffers_allocated", std::to_string(ps.buffers_allocated));
  builder.set_extra("buffer_peak_bytes", std::to_string(ps.peak_bytes));
  builder.set_extra("buffers_over_cap", std::to_string(ps.over_cap_handouts));
  for (std::size_t i = 0; i < warnings_.size(); ++i) builder.set_extra("warning_" + std::to_string(i), warnings_[i]);
  const DecodeStats ds = builder.stats();
  Trace t = builder.finish();
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
  return t;
}

Status Session::finalize() {
  std::lock_guard lock(mutex_);
  Status s = make_status(cuptiFinalize(), "cuptiFinalize");
  // CUPTI forgot every registration; the next open() registers again.
  callbacks_registered_ = false;
  timestamp_registered_ = false;
  return s;
}

}  // namespace syncscope::cupti_detail
