// What one host API call of a trace is, for synchronization: by its name (CUDA runtime or
// driver, or HIP runtime, with the _ptsz/_ptds/_spt per-thread-stream and _vN version
// suffixes removed), or by its CUPTI callback id when the trace carries no name. Part of the
// trace layer so that the readers (the Nsight Systems reader decides what a synchronization
// record was by the call it correlates with), the sync-point analysis and the replay classify
// a call the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "syncscope/trace/trace.hpp"

namespace syncscope {

enum class ApiClass : std::uint8_t {
  Other,            // not relevant to synchronization (attribute queries, event records, ...)
  Query,            // cudaStreamQuery/cudaEventQuery: never a sync point
  StreamSync,       // cudaStreamSynchronize, cuStreamSynchronize, hipStreamSynchronize
  DeviceSync,       // cudaDeviceSynchronize, cudaThreadSynchronize, cuCtxSynchronize, hipDeviceSynchronize
  EventSync,        // cudaEventSynchronize, cuEventSynchronize, hipEventSynchronize
  StreamWaitEvent,  // cudaStreamWaitEvent, cuStreamWaitEvent, hipStreamWaitEvent: GPU-side wait, not a host sync
  SyncCopy,         // synchronous memcpy that may involve the host (direction decides); hipMemcpyWithStream
  DeviceCopy,       // synchronous memcpy between device memories: no host-side sync
  AsyncCopy,        // *Async memcpy: a host sync only when device -> pageable host
  Enqueue,          // launches and memsets: queue GPU work, never block by definition
};

// `name` may be empty; then `cbid` (interpreted per `kind`) decides.
ApiClass classify_api(ApiKind kind, std::string_view name, std::int32_t cbid);

// The API's name for reports: `name` when present, else the name the callback id stands
// for, else "cbid:<n>".
std::string api_display_name(ApiKind kind, std::string_view name, std::int32_t cbid);

// Removes trailing _ptsz, _ptds, _spt and _v<digits> suffixes ("cuMemcpyDtoHAsync_v2_ptsz" ->
// "cuMemcpyDtoHAsync").
std::string_view api_base_name(std::string_view name);

// Direction implied by a driver copy's name (cuMemcpyDtoH -> DtoH); Unknown when the name
// does not say (cudaMemcpy, cuMemcpy, 2D/3D forms).
CopyKind copy_kind_from_name(std::string_view base_name);

}  // namespace syncscope
