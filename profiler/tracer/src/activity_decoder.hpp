// CUPTI activity records -> the trace model. The one decoding path: the tracer's decoder
// thread calls decode_activity_buffer on every completed buffer, and the tests call it on
// synthetic buffers (cuptiActivityGetNextRecord works without a GPU).
//
// Record structs are the newest the compile-time headers declare (guarded by
// CUPTI_API_VERSION). CUPTI only appends fields when it versions a struct, so the fields
// read here sit at the same offsets in the records of newer libraries; the library's own
// record size (what cuptiActivityGetNextRecord steps by) is never assumed.
//
// Decisions, pinned by tests/cupti:
// - Kernel names: Kernel::name is the demangled name (abi::__cxa_demangle, as Kineto shows
//   it, so our traces and torch.profiler's compare by name); Kernel::mangled_name keeps what
//   CUPTI gave when demangling changed it.
// - Runtime API names come from cuptiGetCallbackName without CUPTI's "_v3020"-style suffix
//   ("cudaStreamSynchronize", "cudaLaunchKernel_ptsz"), as the runtime spells them and
//   Kineto writes them. Driver names are kept as CUPTI gives them ("cuCtxSynchronize_v2" is
//   the real symbol).
// - A driver call that runs inside a runtime call on the same thread (the runtime's own
//   implementation) is dropped, so one user call never appears twice; GPU records that
//   pointed at the dropped call's correlation id are re-pointed to the runtime call's.
// - Synchronization records with start = end = 0 ("timestamps could not be collected") are
//   counted in records_without_timestamps and not kept, like GPU records without times.
// - Synchronization records: device from the context; is_query when the API call with the
//   same correlation id is cudaStreamQuery/cudaEventQuery (or cuStreamQuery/cuEventQuery);
//   event syncs and stream-wait-events joined to their CUDA event record by cudaEventSyncId
//   (never by event id: CUDA reuses event handles): wait_on_stream is the stream the event
//   was recorded on, wait_on_event_record_correlation the cudaEventRecord's correlation id.
// - NVTX markers: a START and an END record with the same id make one Range; objectKind
//   THREAD means a push/pop range, PROCESS a start/end range. Instantaneous markers and
//   ranges still open at the end are counted, not kept.
// - Memcpy::correlation is the runtime call's id (runtimeCorrelationId) when the copy came
//   from the runtime, else the driver call's (correlationId).
// - Records of kinds not modelled are counted in Trace::meta.unknown_categories
//   ("cupti:<KIND>"); a malformed buffer ends that buffer's decoding and is counted.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "syncscope/trace/trace.hpp"

namespace syncscope::cupti_detail {

#if CUPTI_API_VERSION < 130000
#error "syncscope's CUPTI decoder needs CUDA 13.0 or newer (CUPTI_API_VERSION >= 130000)"
#endif

// Newest struct versions (docs/sources.md#cupti-13 "CUPTI in CUDA 13.0": Kernel11 in 13.1, Kernel12 in
// 13.3, Kernel13/Memcpy7/Memset5 in 13.4, CudaEvent3 in 13.5).
#if CUPTI_API_VERSION >= 130400
using KernelRecord = CUpti_ActivityKernel13;
using MemcpyRecord = CUpti_ActivityMemcpy7;
using MemsetRecord = CUpti_ActivityMemset5;
#elif CUPTI_API_VERSION >= 130300
using KernelRecord = CUpti_ActivityKernel12;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemsetRecord = CUpti_ActivityMemset4;
#elif CUPTI_API_VERSION >= 130100
using KernelRecord = CUpti_ActivityKernel11;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemsetRecord = CUpti_ActivityMemset4;
#else
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemsetRecord = CUpti_ActivityMemset4;
#endif
#if CUPTI_API_VERSION >= 130500
using CudaEventRecordT = CUpti_ActivityCudaEvent3;
#else
using CudaEventRecordT = CUpti_ActivityCudaEvent2;
#endif
using PeerCopyRecord = CUpti_ActivityMemcpyPtoP4;
using ApiRecord = CUpti_ActivityAPI;
using SyncRecordT = CUpti_ActivitySynchronization2;
using OverheadRecordT = CUpti_ActivityOverhead3;
using MarkerRecord = CUpti_ActivityMarker2;
using DeviceRecord = CUpti_ActivityDevice5;  // fields read are in every later version
using ContextRecord = CUpti_ActivityContext3;

struct DecodeStats {
  std::uint64_t records = 0;                     // records seen, any kind
  std::map<std::string, std::uint64_t> by_kind;  // "kernel", "memcpy", ... -> records
  std::uint64_t unknown = 0;                     // kinds not modelled
  std::uint64_t malformed_buffers = 0;           // iteration stopped by an error
  std::uint64_t no_timestamp = 0;                // GPU and sync records with start = end = 0
  std::uint64_t instant_markers = 0;
  std::uint64_t unpaired_markers = 0;     // set by finish()
  std::uint64_t nested_driver_calls = 0;  // set by finish()
  std::uint64_t dropped_by_cupti = 0;
  std::uint64_t lost_to_cap = 0;
};

class TraceBuilder {
 public:
  TraceBuilder();

  void add(const CUpti_Activity& record);
  void note_malformed_buffer() { ++stats_.malformed_buffers; }
  void add_dropped_by_cupti(std::uint64_t n) { stats_.dropped_by_cupti += n; }
  void add_lost_to_cap(std::uint64_t n) { stats_.lost_to_cap += n; }
  void set_source_version(std::string v) { source_version_ = std::move(v); }
  void set_trace_name(std::string n) { trace_name_ = std::move(n); }
  void set_extra(const std::string& key, std::string value) { extra_[key] = std::move(value); }

  const DecodeStats& stats() const;
  // The trace so far, before finish()'s joins.
  const Trace& partial() const { return trace_; }

  // Joins what needs records of several kinds (see the header comment), fills the
  // metadata, finalizes and returns the trace. The builder starts over empty.
  Trace finish();

 private:
  struct PendingMarker {
    StringId name = kNoString;
    StringId domain = kNoString;
    Ns timestamp = 0;
    bool thread_scope = true;
    std::int64_t pid = -1;
    std::int64_t tid = -1;
  };

  StringId api_name(ApiKind kind, std::uint32_t cbid);
  void add_kernel(const KernelRecord& r);
  void add_memcpy(const MemcpyRecord& r);
  void add_peer_copy(const PeerCopyRecord& r);
  void add_memset(const MemsetRecord& r);
  void add_api(const ApiRecord& r, ApiKind kind);
  void add_sync(const SyncRecordT& r);
  void add_cuda_event(const CudaEventRecordT& r);
  void add_marker(const MarkerRecord& r);
  void add_overhead(const OverheadRecordT& r);
  void add_device(const DeviceRecord& r);
  void add_context(const ContextRecord& r);
  // Per-kind counters without a map lookup per record (`kind` is a string literal).
  void count(const char* kind) {
    for (auto& [k, n] : kind_counts_)
      if (k == kind || std::strcmp(k, kind) == 0) {
        ++n;
        return;
      }
    kind_counts_.emplace_back(kind, 1);
  }
  void note_context(std::uint32_t context, std::uint32_t device) { context_device_.emplace(context, device); }

  Trace trace_;
  mutable DecodeStats stats_;  // by_kind filled from kind_counts_ by stats()
  std::vector<std::pair<const char*, std::uint64_t>> kind_counts_;
  std::string source_version_;
  std::string trace_name_;
  std::map<std::string, std::string> extra_;
  std::unordered_map<std::uint64_t, StringId> api_names_;          // (kind << 32 | cbid) -> name
  std::unordered_map<StringId, StringId> demangled_;               // mangled -> display name
  std::unordered_map<std::uint32_t, PendingMarker> open_markers_;  // by marker id
  std::unordered_map<std::uint32_t, Ns> early_marker_ends_;        // END seen before START
  std::unordered_map<std::uint32_t, std::uint32_t> context_device_;
};

// Decodes every record of one CUPTI activity buffer into `out`; returns the number of
// records decoded. Stops at the end of the valid bytes (CUPTI_ERROR_MAX_LIMIT_REACHED) or at
// a malformed record (counted in out.stats().malformed_buffers). Never throws for bad data.
std::uint64_t decode_activity_buffer(const std::uint8_t* buffer, std::size_t valid_bytes, TraceBuilder& out);

// Counts the records of a buffer without decoding them (for buffers past the cap).
std::uint64_t count_activity_records(const std::uint8_t* buffer, std::size_t valid_bytes);

// "cudaStreamSynchronize_v3020" -> "cudaStreamSynchronize"; driver names stay unchanged.
std::string runtime_api_display_name(const char* cupti_name);

// Demangles an Itanium C++ ABI name; returns `name` unchanged when it is not one.
std::string demangle(const char* name);

// The current time on the tracer's clock: UNIX-epoch nanoseconds (CLOCK_REALTIME), the
// clock registered with cuptiActivityRegisterTimestampCallback.
std::uint64_t now_unix_ns();

}  // namespace syncscope::cupti_detail
