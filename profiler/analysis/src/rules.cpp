// Nsight-Systems-style rules as counted findings, each with the events that fired it and
// what to do. The first three follow the rules of `nsys analyze` (Nsight Systems User
// Guide, "Expert Systems Analysis": cuda_memcpy_async, cuda_memcpy_sync, cuda_memset_sync);
// the polling rule is ours (Nsight has none for cudaEventQuery loops).
#include <algorithm>
#include <string>

#include "gpu_internal.hpp"
#include "syncscope/trace/api_classes.hpp"

namespace syncscope::analysis_detail {

namespace {

constexpr std::size_t kEvents = 5;
// Nsight's cuda_memcpy_sync skips host-to-device copies of at most 64 KiB: the driver
// stages those through its own pinned buffer and returns early (CUDA docs, "API
// synchronization behavior").
constexpr std::uint64_t kSmallHtoDBytes = 64 * 1024;

template <class T>
std::vector<std::pair<std::uint64_t, std::uint32_t>> by_correlation(const std::vector<T>& v) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> idx;
  idx.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].correlation != 0) idx.emplace_back(v[i].correlation, static_cast<std::uint32_t>(i));
  std::sort(idx.begin(), idx.end());
  return idx;
}

template <class T>
const T* find(const std::vector<T>& v, const std::vector<std::pair<std::uint64_t, std::uint32_t>>& idx,
              std::uint64_t corr) {
  if (corr == 0) return nullptr;
  auto it = std::lower_bound(idx.begin(), idx.end(), std::make_pair(corr, std::uint32_t{0}));
  return it != idx.end() && it->first == corr ? &v[it->second] : nullptr;
}

void note(Finding& f, const ApiCall& c, const std::string& api, std::uint64_t bytes) {
  ++f.count;
  f.host_ns += std::max<Ns>(0, c.end - c.start);
  if (f.events.size() < kEvents)
    f.events.push_back({api, c.pid, c.tid, c.start, std::max<Ns>(0, c.end - c.start), c.correlation, bytes, 1});
}

bool is_sync_memset(std::string_view base) {
  const bool memset = base.starts_with("cudaMemset") || base.starts_with("cuMemsetD") || base.starts_with("hipMemset");
  return memset && base.find("Async") == std::string_view::npos;
}

}  // namespace

void rule_findings(const Trace& trace, const std::vector<SyncPoint>& points, GpuAnalyses& out) {
  Finding async_pageable{"async_copy_pageable",
                         "async copies with pageable host memory (they block the host)",
                         0,
                         0,
                         {},
                         "pin the host buffer (tensor.pin_memory(), cudaHostAlloc) so the copy is asynchronous, or "
                         "keep the data on the device"};
  Finding sync_copy{"sync_copy",
                    "synchronous host<->device copies (host-to-device of at most 64 KiB excepted)",
                    0,
                    0,
                    {},
                    "use cudaMemcpyAsync with pinned memory on a non-default stream (non_blocking=True in PyTorch) "
                    "and synchronize only where the result is needed"};
  Finding sync_memset{"sync_memset",
                      "synchronous memsets of pinned or managed memory (they block the host)",
                      0,
                      0,
                      {},
                      "use cudaMemsetAsync on a stream"};
  Finding polling{"event_query_polling",
                  "cudaEventQuery polling loops (2 or more queries in a row)",
                  0,
                  0,
                  {},
                  "wait with cudaStreamWaitEvent on the device, or block once with cudaEventSynchronize "
                  "instead of spinning the host"};

  const auto copy_idx = by_correlation(trace.memcpys);
  const auto set_idx = by_correlation(trace.memsets);
  std::vector<std::uint8_t> memo(trace.strings.size() * 2, 0xFF);
  for (const auto& c : trace.api_calls) {
    const std::size_t slot = static_cast<std::size_t>(c.name) * 2 + (c.kind == ApiKind::Driver ? 1 : 0);
    ApiClass cls;
    if (c.name != kNoString && slot < memo.size() && memo[slot] != 0xFF) {
      cls = static_cast<ApiClass>(memo[slot]);
    } else {
      cls = classify_api(c.kind, trace.str(c.name), c.cbid);
      if (c.name != kNoString && slot < memo.size()) memo[slot] = static_cast<std::uint8_t>(cls);
    }
    if (cls != ApiClass::AsyncCopy && cls != ApiClass::SyncCopy && cls != ApiClass::DeviceCopy &&
        cls != ApiClass::Enqueue)
      continue;
    const std::string api = api_display_name(c.kind, trace.str(c.name), c.cbid);
    if (cls == ApiClass::Enqueue) {
      if (!is_sync_memset(api_base_name(api))) continue;
      const Memset* m = find(trace.memsets, set_idx, c.correlation);
      if (m && (m->memory_kind == MemoryKind::Pinned || m->memory_kind == MemoryKind::Managed))
        note(sync_memset, c, api, m->bytes);
      continue;
    }
    const Memcpy* m = find(trace.memcpys, copy_idx, c.correlation);
    if (cls == ApiClass::AsyncCopy) {
      if (m && (m->src_kind == MemoryKind::Pageable || m->dst_kind == MemoryKind::Pageable))
        note(async_pageable, c, api, m->bytes);
      continue;
    }
    // Device-to-device and peer copies do not block the host (CUDA docs, "API
    // synchronization behavior"), the same rule as the sync points.
    const CopyKind kind = m && m->kind != CopyKind::Unknown ? m->kind : c.copy_kind;
    if (cls == ApiClass::DeviceCopy || kind == CopyKind::DtoD || kind == CopyKind::PtoP) continue;
    if (kind == CopyKind::HtoD && m && m->bytes <= kSmallHtoDBytes) continue;
    note(sync_copy, c, api, m ? m->bytes : 0);
  }
  for (const auto& p : points) {
    if (!p.polling || p.polls < 2) continue;
    ++polling.count;
    polling.host_ns += p.blocked_ns;
    if (polling.events.size() < kEvents)
      polling.events.push_back({p.api, p.pid, p.tid, p.start, p.blocked_ns, p.correlation, 0, p.polls});
  }
  for (auto* f : {&async_pageable, &sync_copy, &sync_memset, &polling})
    if (f->count > 0) out.findings.push_back(std::move(*f));
}

}  // namespace syncscope::analysis_detail
