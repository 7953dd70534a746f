// Sync points from host API calls (definitions in analysis.hpp).
//
// One pass over the API calls of each host thread in time order. Everything else is a
// binary search into a vector sorted once: GPU copy records and CUPTI/Kineto sync records
// by correlation id, CPU ops per thread, activity per device. O(n log n) in the number of
// records, no allocation per record beyond the sync points themselves.
#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include "analysis_internal.hpp"
#include "syncscope/trace/api_classes.hpp"

namespace syncscope::analysis_detail {
namespace {

using CorrIndex = std::vector<std::pair<std::uint64_t, std::uint32_t>>;  // correlation -> record index

template <class T, class Keep>
CorrIndex index_by_correlation(const std::vector<T>& records, Keep keep) {
  CorrIndex idx;
  idx.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].correlation != 0 && keep(records[i]))
      idx.emplace_back(records[i].correlation, static_cast<std::uint32_t>(i));
  std::sort(idx.begin(), idx.end());
  return idx;
}

std::pair<CorrIndex::const_iterator, CorrIndex::const_iterator> lookup(const CorrIndex& idx, std::uint64_t corr) {
  if (corr == 0) return {idx.end(), idx.end()};
  auto lo = std::lower_bound(idx.begin(), idx.end(), std::make_pair(corr, std::uint32_t{0}));
  auto hi = lo;
  while (hi != idx.end() && hi->first == corr) ++hi;
  return {lo, hi};
}

bool same_or_unknown(std::int64_t a, std::int64_t b) { return a < 0 || b < 0 || a == b; }

}  // namespace

std::vector<DeviceTimeline> build_timelines(const Trace& trace) {
  struct Act {
    std::int32_t device;
    Ns start, end;
  };
  std::vector<Act> acts;
  acts.reserve(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  for (const auto& k : trace.kernels) acts.push_back({k.device, k.start, k.end});
  for (const auto& m : trace.memcpys) acts.push_back({m.device, m.start, m.end});
  for (const auto& m : trace.memsets) acts.push_back({m.device, m.start, m.end});
  std::sort(acts.begin(), acts.end(), [](const Act& a, const Act& b) {
    return std::tie(a.device, a.start, a.end) < std::tie(b.device, b.start, b.end);
  });
  std::vector<DeviceTimeline> out;
  for (std::size_t i = 0; i < acts.size();) {
    std::size_t j = i;
    while (j < acts.size() && acts[j].device == acts[i].device) ++j;
    DeviceTimeline tl;
    tl.device = acts[i].device;
    tl.starts.reserve(j - i);
    tl.ends.reserve(j - i);
    tl.max_end.reserve(j - i);
    Ns running = std::numeric_limits<Ns>::min();
    for (std::size_t k = i; k < j; ++k) {
      tl.starts.push_back(acts[k].start);
      tl.ends.push_back(acts[k].end);
      running = std::max(running, acts[k].end);
      tl.max_end.push_back(running);
    }
    out.push_back(std::move(tl));
    i = j;
  }
  return out;
}

Ns bubble_at(const DeviceTimeline& tl, Ns t) {
  // k = number of activities that started before t; tl.starts[k] is the first at or after t.
  auto k = static_cast<std::size_t>(std::lower_bound(tl.starts.begin(), tl.starts.end(), t) - tl.starts.begin());
  if (k > 0 && tl.max_end[k - 1] > t) return 0;  // work was running when the sync returned
  // No activity before t, or none after it within the trace: no gap we can measure, 0.
  if (k == 0 || k == tl.starts.size()) return 0;
  return std::max<Ns>(0, tl.starts[k] - tl.max_end[k - 1]);
}

namespace {

// The correlation indexes the scan looks a call's records up in.
struct RecordIndexes {
  CorrIndex copies;  // GPU copy records
  // Sync records are evidence for where a sync call waited (stream, device). Query records
  // and stream-wait-event records describe other calls.
  CorrIndex syncs;
  // Event Sync records of any origin (a query's own, flagged is_query by our tracer, or
  // Kineto's, which does not say): a cudaEventQuery with one is a poll (see analysis.hpp).
  CorrIndex event_syncs;
};

RecordIndexes index_records(const Trace& trace) {
  RecordIndexes idx;
  idx.copies = index_by_correlation(trace.memcpys, [](const Memcpy&) { return true; });
  idx.syncs = index_by_correlation(trace.syncs, [](const SyncRecord& s) {
    return !s.is_query && s.type != SyncType::StreamWaitEvent;
  });
  idx.event_syncs =
      index_by_correlation(trace.syncs, [](const SyncRecord& s) { return s.type == SyncType::EventSync; });
  return idx;
}

// Indexes of the API calls the scan considers (the pid filter), per thread, by start; the
// longer call first on equal starts, so an enclosing runtime call precedes the driver call
// it made.
std::vector<std::uint32_t> calls_in_thread_order(const Trace& trace, const AnalysisOptions& options) {
  const auto& calls = trace.api_calls;
  std::vector<std::uint32_t> order;
  order.reserve(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (!options.pid || calls[i].pid == *options.pid) order.push_back(static_cast<std::uint32_t>(i));
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto &x = calls[a], &y = calls[b];
    return std::tie(x.pid, x.tid, x.start, y.end, a) < std::tie(y.pid, y.tid, y.start, x.end, b);
  });
  return order;
}

// Classes per interned name and API domain: a trace has millions of calls but only a few
// hundred distinct names.
class ApiClassMemo {
 public:
  explicit ApiClassMemo(const Trace& trace) : trace_(trace), memo_(trace.strings.size() * 2, 0xFF) {}

  ApiClass operator()(const ApiCall& c) {
    const std::size_t slot = static_cast<std::size_t>(c.name) * 2 + (c.kind == ApiKind::Driver ? 1 : 0);
    if (c.name == kNoString || slot >= memo_.size()) return classify_api(c.kind, trace_.str(c.name), c.cbid);
    if (memo_[slot] == 0xFF) memo_[slot] = static_cast<std::uint8_t>(classify_api(c.kind, trace_.str(c.name), -1));
    return static_cast<ApiClass>(memo_[slot]);
  }

 private:
  const Trace& trace_;
  std::vector<std::uint8_t> memo_;
};

// The direction a copy call names: its own "kind" argument, else its name.
CopyKind called_copy_kind(const Trace& trace, const ApiCall& c) {
  if (c.copy_kind != CopyKind::Unknown) return c.copy_kind;
  return copy_kind_from_name(api_base_name(api_display_name(c.kind, trace.str(c.name), c.cbid)));
}

// The sync points of one host thread's calls (in thread order), appended to the scan: one
// episode per sync call, per run of polling queries, per blocking copy (merged with the sync
// that follows an async device-to-host copy of its stream).
class ThreadScanner {
 public:
  ThreadScanner(const Trace& trace, const RecordIndexes& idx, SyncScan& scan, std::vector<std::uint8_t>& device_wide)
      : trace_(trace), calls_(trace.api_calls), idx_(idx), scan_(scan), device_wide_(device_wide), classify_(trace) {}

  // order[begin, end): the calls of one thread.
  void scan_thread(const std::vector<std::uint32_t>& order, std::size_t begin, std::size_t end) {
    pending_.reset();
    poll_.reset();
    monitor_ = !queues_or_waits(order, begin, end);
    monitor_polls_ = 0;
    bool have_outer = false;
    Ns outer_end = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const ApiCall& c = calls_[order[i]];
      // A call inside another call of the same thread (the driver call a runtime call made,
      // when both domains were traced) is part of that episode, not a new one.
      if (have_outer && c.start < outer_end && c.end <= outer_end) continue;
      have_outer = true;
      outer_end = c.end;

      const ApiClass cls = classify_(c);
      if (cls == ApiClass::Other) continue;
      if (cls == ApiClass::Query) {
        on_query(order[i]);
        continue;
      }
      end_poll();
      std::int32_t device = c.device;
      std::int64_t stream = -1;
      where_sync_waited(c, cls, device, stream);
      if (merge_pending(c, cls, device, stream)) continue;
      on_call(order[i], cls, device, stream);
    }
    flush();
    end_poll();
    if (monitor_polls_ > 0) {
      scan_.monitor_poll_queries += monitor_polls_;
      ++scan_.monitor_poll_threads;
    }
  }

 private:
  // Whether the thread queues GPU work (a launch, a memset, a copy) or blocks on the GPU (a
  // stream, device or event synchronize). A thread that does neither and only polls events,
  // such as PyTorch's NCCL watchdog (ProcessGroupNCCL's watchdog thread, "pt_nccl_watchdg",
  // queries each pending collective's end event, then sleeps kWatchdogThreadSleepMillis, 100 ms
  // in PyTorch 2.x), delays no GPU work by waiting: its queries are not sync points, and a run
  // of them would span its sleeps, not a spin.
  bool queues_or_waits(const std::vector<std::uint32_t>& order, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      switch (classify_(calls_[order[i]])) {
        case ApiClass::Enqueue:
        case ApiClass::AsyncCopy:
        case ApiClass::SyncCopy:
        case ApiClass::DeviceCopy:
        case ApiClass::StreamSync:
        case ApiClass::DeviceSync:
        case ApiClass::EventSync: return true;
        default: break;
      }
    }
    return false;
  }

  // An async device-to-host copy into pageable memory, or into host memory of unknown kind,
  // waiting to see whether the next call syncs its stream.
  struct PendingCopy {
    std::uint32_t call = 0;
    std::int32_t device = -1;
    std::int64_t stream = -1;
    std::uint64_t correlation = 0;
    bool known_pageable = true;  // false: blocking is not known (no record, or "Host" memory as ROCm writes)
  };
  // A run of polling cudaEventQuery calls (first, last call, device, stream): one episode.
  struct Poll {
    std::uint32_t first, last, calls;
    std::int32_t device;
    std::int64_t stream;
  };

  void emit(const ApiCall& first, const ApiCall& last, std::int32_t device, std::int64_t stream, bool merged,
            bool whole_device) {
    device_wide_.push_back(whole_device ? 1 : 0);
    SyncPoint sp;
    sp.pid = last.pid;
    sp.tid = last.tid;
    sp.device = device;
    sp.stream = stream;
    sp.start = first.start;
    sp.end = std::max({sp.start, first.end, last.end});  // a malformed negative duration counts as 0
    sp.blocked_ns = sp.end - sp.start;
    sp.api = api_display_name(last.kind, trace_.str(last.name), last.cbid);
    sp.merged_copy = merged;
    sp.correlation = last.correlation;
    scan_.points.push_back(std::move(sp));
  }

  void end_poll() {
    if (!poll_) return;
    emit(calls_[poll_->first], calls_[poll_->last], poll_->device, poll_->stream, false, false);
    scan_.points.back().polling = true;
    scan_.points.back().polls = poll_->calls;
    poll_.reset();
  }

  // A pending copy not followed by a sync of its stream: a sync point on its own when it
  // went into pageable memory; when that is not known, not counted (one warning).
  void flush() {
    if (!pending_) return;
    const ApiCall& c = calls_[pending_->call];
    if (pending_->known_pageable) emit(c, c, pending_->device, pending_->stream, false, false);
    else ++scan_.unresolved_async_copies;
    pending_.reset();
  }

  // A cudaEventQuery: a poll when the trace has an Event Sync record for it.
  void on_query(std::uint32_t call) {
    const ApiCall& c = calls_[call];
    auto [lo, hi] = lookup(idx_.event_syncs, c.correlation);
    if (lo == hi) return;  // a query without an Event Sync record: not a sync
    if (monitor_) {        // a thread that neither queues nor waits: counted apart (queues_or_waits)
      ++monitor_polls_;
      return;
    }
    flush();
    const SyncRecord& rec = trace_.syncs[lo->second];
    if (poll_) {
      poll_->last = call;
      ++poll_->calls;
    } else {
      poll_ = Poll{call, call, 1, rec.device >= 0 ? rec.device : c.device, rec.stream};
    }
  }

  // Where a sync call waited, from its sync record: the device, and the stream unless it
  // synced the whole device.
  void where_sync_waited(const ApiCall& c, ApiClass cls, std::int32_t& device, std::int64_t& stream) const {
    if (cls != ApiClass::StreamSync && cls != ApiClass::DeviceSync && cls != ApiClass::EventSync) return;
    auto [lo, hi] = lookup(idx_.syncs, c.correlation);
    if (lo == hi) return;
    const SyncRecord& rec = trace_.syncs[lo->second];
    if (rec.device >= 0) device = rec.device;
    if (cls != ApiClass::DeviceSync) stream = rec.stream;
  }

  // A pending copy followed by a sync of its stream or device: one episode (true, emitted);
  // followed by anything else, the copy stands alone (flushed; false).
  bool merge_pending(const ApiCall& c, ApiClass cls, std::int32_t device, std::int64_t stream) {
    if (!pending_) return false;
    const bool merges = (cls == ApiClass::StreamSync && same_or_unknown(stream, pending_->stream) &&
                         same_or_unknown(device, pending_->device)) ||
                        (cls == ApiClass::DeviceSync && same_or_unknown(device, pending_->device));
    if (merges) {
      emit(calls_[pending_->call], c, device >= 0 ? device : pending_->device, stream >= 0 ? stream : pending_->stream,
           true, cls == ApiClass::DeviceSync);
      pending_.reset();
      return true;
    }
    flush();
    return false;
  }

  void on_call(std::uint32_t call, ApiClass cls, std::int32_t device, std::int64_t stream) {
    const ApiCall& c = calls_[call];
    switch (cls) {
      case ApiClass::StreamSync:
      case ApiClass::DeviceSync:
      case ApiClass::EventSync: emit(c, c, device, stream, false, cls == ApiClass::DeviceSync); break;
      case ApiClass::StreamWaitEvent: scan_.stream_wait_starts.push_back(c.start); break;
      case ApiClass::SyncCopy: on_sync_copy(c, device); break;
      case ApiClass::AsyncCopy: pending_ = async_copy_pending(call, device); break;
      case ApiClass::DeviceCopy:
      case ApiClass::Enqueue:
      case ApiClass::Other:
      case ApiClass::Query: break;
    }
  }

  void on_sync_copy(const ApiCall& c, std::int32_t device) {
    // Direction: the GPU copy record, else the call's own "kind" argument, else its name.
    auto [lo, hi] = lookup(idx_.copies, c.correlation);
    CopyKind kind = called_copy_kind(trace_, c);
    std::int32_t dev = device;
    std::int64_t str = -1;
    if (lo != hi) {
      const Memcpy& m = trace_.memcpys[lo->second];
      if (m.kind != CopyKind::Unknown) kind = m.kind;
      if (m.device >= 0) dev = m.device;
      str = m.stream;
    }
    // Device-to-device, peer and host-to-host copies do not involve the host waiting for
    // the device (CUDA docs, "API synchronization behavior"). A copy whose direction the
    // trace does not give is not counted (the same rule as async copies; a warning).
    if (kind == CopyKind::DtoD || kind == CopyKind::PtoP || kind == CopyKind::HtoH) return;
    if (kind == CopyKind::Unknown) {
      ++scan_.unresolved_sync_copies;
      return;
    }
    emit(c, c, dev, str, false, false);
  }

  // An async copy blocks the host when device-to-host into pageable memory (the GPU copy
  // record says so). Device-to-host into host memory of unknown kind, or with no record at
  // all: pending like a pageable one; merged when the next call syncs its stream (the host
  // blocked once either way), else not counted and warned about.
  std::optional<PendingCopy> async_copy_pending(std::uint32_t call, std::int32_t device) const {
    const ApiCall& c = calls_[call];
    auto [lo, hi] = lookup(idx_.copies, c.correlation);
    const CopyKind called = called_copy_kind(trace_, c);
    const auto to_host = [](CopyKind k) { return k == CopyKind::DtoH || k == CopyKind::Unknown; };
    std::optional<PendingCopy> found;
    if (lo == hi && to_host(called)) found = PendingCopy{call, device, -1, c.correlation, false};
    for (auto it = lo; it != hi; ++it) {
      const Memcpy& m = trace_.memcpys[it->second];
      if (!to_host(m.kind != CopyKind::Unknown ? m.kind : called)) continue;
      const bool pageable = m.dst_kind == MemoryKind::Pageable;
      if (!pageable && m.dst_kind != MemoryKind::Unknown) continue;
      if (!found || (pageable && !found->known_pageable))
        found = PendingCopy{call, m.device >= 0 ? m.device : device, m.stream, c.correlation, pageable};
    }
    return found;
  }

  const Trace& trace_;
  const std::vector<ApiCall>& calls_;
  const RecordIndexes& idx_;
  SyncScan& scan_;
  std::vector<std::uint8_t>& device_wide_;  // parallel to scan_.points
  ApiClassMemo classify_;
  std::optional<PendingCopy> pending_;
  std::optional<Poll> poll_;
  bool monitor_ = false;             // this thread neither queues GPU work nor waits on it
  std::uint64_t monitor_polls_ = 0;  // its polled queries
};

// The CPU ops (ranges) of the considered pid, in thread order, the enclosing op first.
std::vector<std::uint32_t> cpu_ops_in_thread_order(const Trace& trace, const AnalysisOptions& options) {
  std::vector<std::uint32_t> ops;
  for (std::size_t i = 0; i < trace.ranges.size(); ++i) {
    const Range& r = trace.ranges[i];
    if (r.kind == RangeKind::CpuOp && (!options.pid || r.pid == *options.pid))
      ops.push_back(static_cast<std::uint32_t>(i));
  }
  std::sort(ops.begin(), ops.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto &x = trace.ranges[a], &y = trace.ranges[b];
    return std::tie(x.pid, x.tid, x.start, y.end, a) < std::tie(y.pid, y.tid, y.start, x.end, b);
  });
  return ops;
}

// Causes: the outermost aten:: op enclosing the sync on its thread, else the innermost
// enclosing CPU op, else the API. Sync points are in thread order here, and within a
// thread by start and disjoint, so one merge-walk with a stack of open ops does it.
void attribute_causes(const Trace& trace, const AnalysisOptions& options, std::vector<SyncPoint>& points) {
  const std::vector<std::uint32_t> ops = cpu_ops_in_thread_order(trace, options);
  std::size_t oi = 0;
  std::vector<std::uint32_t> stack;
  std::int64_t cur_pid = std::numeric_limits<std::int64_t>::min(), cur_tid = cur_pid;
  for (auto& sp : points) {
    if (sp.pid != cur_pid || sp.tid != cur_tid) {
      cur_pid = sp.pid;
      cur_tid = sp.tid;
      stack.clear();
      // skip ops of threads ordered before this one
      oi = static_cast<std::size_t>(
          std::lower_bound(ops.begin(), ops.end(), std::make_pair(sp.pid, sp.tid),
                           [&](std::uint32_t a, const std::pair<std::int64_t, std::int64_t>& key) {
                             return std::tie(trace.ranges[a].pid, trace.ranges[a].tid) <
                                    std::tie(key.first, key.second);
                           }) -
          ops.begin());
    }
    while (oi < ops.size() && trace.ranges[ops[oi]].pid == sp.pid && trace.ranges[ops[oi]].tid == sp.tid &&
           trace.ranges[ops[oi]].start <= sp.start) {
      const Range& r = trace.ranges[ops[oi]];
      while (!stack.empty() && trace.ranges[stack.back()].end <= r.start) stack.pop_back();
      stack.push_back(ops[oi]);
      ++oi;
    }
    while (!stack.empty() && trace.ranges[stack.back()].end <= sp.start) stack.pop_back();
    const Range* outer_aten = nullptr;
    const Range* inner = nullptr;
    for (std::uint32_t idx : stack) {
      const Range& r = trace.ranges[idx];
      if (r.start > sp.start || r.end < sp.end) continue;
      if (!outer_aten && trace.str(r.name).starts_with("aten::")) outer_aten = &r;
      inner = &r;
    }
    if (outer_aten) sp.cause = trace.str(outer_aten->name);
    else if (inner) sp.cause = trace.str(inner->name);
    else sp.cause = sp.api;
  }
}

// Bubbles on the sync's device. A device-wide sync (cudaDeviceSynchronize,
// cuCtxSynchronize) takes the largest bubble over every device with activity, since the
// blocked host stops feeding all of them; so does a sync whose device is unknown in a
// multi-device trace. With one device in the trace, an unknown device is that one.
// device_wide is parallel to scan.points.
void assign_bubbles(SyncScan& scan, const std::vector<std::uint8_t>& device_wide,
                    const std::vector<DeviceTimeline>& timelines) {
  for (std::size_t i = 0; i < scan.points.size(); ++i) {
    SyncPoint& sp = scan.points[i];
    if (sp.device < 0 && timelines.size() == 1) sp.device = timelines[0].device;
    const DeviceTimeline* tl = nullptr;
    for (const auto& t : timelines)
      if (t.device == sp.device) tl = &t;
    if (tl && !device_wide[i]) {
      sp.bubble_ns = bubble_at(*tl, sp.end);
    } else if (device_wide[i] || sp.device < 0) {
      if (sp.device < 0 && timelines.size() > 1) ++scan.unknown_device_points;
      for (const auto& t : timelines) sp.bubble_ns = std::max(sp.bubble_ns, bubble_at(t, sp.end));
    } else if (timelines.size() == 1 && timelines[0].device < 0) {
      sp.bubble_ns = bubble_at(timelines[0], sp.end);  // GPU records carry no device at all
    }
  }
}

}  // namespace

SyncScan scan_sync_points(const Trace& trace, const AnalysisOptions& options,
                          const std::vector<DeviceTimeline>& timelines) {
  SyncScan scan;
  const auto& calls = trace.api_calls;
  const RecordIndexes idx = index_records(trace);
  const std::vector<std::uint32_t> order = calls_in_thread_order(trace, options);
  scan.api_calls_considered = order.size();

  std::vector<std::uint8_t> device_wide;  // parallel to scan.points until the bubbles are in
  ThreadScanner scanner(trace, idx, scan, device_wide);
  for (std::size_t i = 0; i < order.size();) {
    const std::int64_t pid = calls[order[i]].pid, tid = calls[order[i]].tid;
    std::size_t j = i;
    while (j < order.size() && calls[order[j]].pid == pid && calls[order[j]].tid == tid) ++j;
    scanner.scan_thread(order, i, j);
    i = j;
  }

  attribute_causes(trace, options, scan.points);
  assign_bubbles(scan, device_wide, timelines);

  std::stable_sort(scan.points.begin(), scan.points.end(), [](const SyncPoint& a, const SyncPoint& b) {
    return std::tie(a.start, a.pid, a.tid) < std::tie(b.start, b.pid, b.tid);
  });
  std::sort(scan.stream_wait_starts.begin(), scan.stream_wait_starts.end());
  return scan;
}

}  // namespace syncscope::analysis_detail
