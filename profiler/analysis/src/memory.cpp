// Memory over time, peaks and who allocated what the peak holds, from profile_memory events
// (definitions in syncscope/analysis/memory.hpp). One pass per device over its events in time
// order, then one lookup per allocation live at the peak into the CPU ops of its thread.
#include "syncscope/analysis/memory.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace syncscope {

namespace {

// c10::DeviceType's values and lower-case names (c10/core/DeviceType.h), the ones PyTorch
// has had since 1.9; others print as "type N".
constexpr std::array<std::string_view, 21> kDeviceTypes = {"cpu", "cuda", "mkldnn",       "opengl", "opencl", "ideep",
                                                           "hip", "fpga", "maia",         "xla",    "vulkan", "metal",
                                                           "xpu", "mps",  "meta",         "hpu",    "ve",     "lazy",
                                                           "ipu", "mtia", "privateuseone"};

// The CPU ops of the trace by thread, with each op's enclosing op: "which ops enclose t on
// this thread" is a binary search and a walk up the parents.
class OpIndex {
 public:
  OpIndex(const Trace& trace, std::optional<std::int64_t> pid) : trace_(trace) {
    for (std::uint32_t i = 0; i < trace.ranges.size(); ++i) {
      const Range& r = trace.ranges[i];
      if (r.kind == RangeKind::CpuOp && (!pid || r.pid == *pid)) ops_.push_back(i);
    }
    // By thread, then start, longer first (the parent before its children).
    std::sort(ops_.begin(), ops_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Range &x = trace.ranges[a], &y = trace.ranges[b];
      return std::tie(x.pid, x.tid, x.start, y.end, a) < std::tie(y.pid, y.tid, y.start, x.end, b);
    });
    parent_.assign(ops_.size(), kNone);
    std::vector<std::uint32_t> stack;  // positions in ops_
    for (std::uint32_t k = 0; k < ops_.size(); ++k) {
      const Range& r = at(k);
      if (k > 0 && (at(k - 1).pid != r.pid || at(k - 1).tid != r.tid)) stack.clear();
      while (!stack.empty() && at(stack.back()).end <= r.start) stack.pop_back();
      if (!stack.empty()) parent_[k] = stack.back();
      stack.push_back(k);
    }
  }

  // The owner of something done at t on (pid, tid): the outermost enclosing aten:: op, else
  // the innermost enclosing op; empty when no op encloses t.
  std::string_view owner(std::int64_t pid, std::int64_t tid, Ns t) const {
    // The last op of the thread starting at or before t.
    auto it = std::upper_bound(ops_.begin(), ops_.end(), std::make_tuple(pid, tid, t),
                               [&](const std::tuple<std::int64_t, std::int64_t, Ns>& key, std::uint32_t i) {
                                 const Range& r = trace_.ranges[i];
                                 return key < std::make_tuple(r.pid, r.tid, r.start);
                               });
    if (it == ops_.begin()) return {};
    std::uint32_t k = static_cast<std::uint32_t>(it - ops_.begin() - 1);
    if (at(k).pid != pid || at(k).tid != tid) return {};
    // Ops enclosing t are this one or its ancestors (ops of one thread nest).
    while (k != kNone && at(k).end < t) k = parent_[k];
    if (k == kNone) return {};
    std::string_view inner = trace_.str(at(k).name), outer_aten;
    for (; k != kNone; k = parent_[k])
      if (at(k).start <= t && t <= at(k).end && trace_.str(at(k).name).starts_with("aten::"))
        outer_aten = trace_.str(at(k).name);
    return outer_aten.empty() ? inner : outer_aten;
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  const Range& at(std::uint32_t k) const { return trace_.ranges[ops_[k]]; }
  const Trace& trace_;
  std::vector<std::uint32_t> ops_;     // indexes into trace.ranges
  std::vector<std::uint32_t> parent_;  // position in ops_ of the enclosing op, kNone
};

// At most kMemorySeriesPoints points: every event, or the first event (so the series starts
// where the events do) and then, per time bucket, the largest allocated (at its time) and the
// largest reserved.
std::vector<MemoryPoint> thin_series(const std::vector<MemoryPoint>& all) {
  if (all.size() <= kMemorySeriesPoints) return all;
  // Buckets of equal width over the span after the first event, at most kMemorySeriesPoints - 1.
  const Ns t0 = all[1].time_ns;
  const Ns width = (all.back().time_ns - t0) / static_cast<Ns>(kMemorySeriesPoints - 1) + 1;
  std::vector<MemoryPoint> out{all.front()};
  Ns current = -1;
  for (std::size_t i = 1; i < all.size(); ++i) {
    const MemoryPoint& p = all[i];
    const Ns b = (p.time_ns - t0) / width;
    if (b != current) {
      out.push_back(p);
      current = b;
      continue;
    }
    MemoryPoint& q = out.back();
    if (p.allocated_bytes > q.allocated_bytes) {
      q.allocated_bytes = p.allocated_bytes;
      q.time_ns = p.time_ns;
    }
    q.reserved_bytes = std::max(q.reserved_bytes, p.reserved_bytes);
  }
  return out;
}

struct Live {
  std::size_t event = 0;  // index into Trace::memory
  std::int64_t bytes = 0;
};

// One device's figures from its events (indexes into trace.memory, in time order).
DeviceMemory one_device(const Trace& trace, const std::vector<std::size_t>& events, const OpIndex& ops) {
  const MemoryEvent& first = trace.memory[events.front()];
  DeviceMemory d;
  d.device_type = first.device_type;
  d.device = first.device;
  d.name = memory_device_name(d.device_type, d.device);
  d.events = events.size();
  std::vector<MemoryPoint> all;
  all.reserve(events.size());
  std::int64_t allocated = 0, reserved = -1;
  std::size_t peak_at = 0;  // position in `events` of the allocated peak
  for (std::size_t k = 0; k < events.size(); ++k) {
    const MemoryEvent& m = trace.memory[events[k]];
    if (m.bytes > 0) {
      ++d.allocations;
      d.allocated_bytes += m.bytes;
    } else if (m.bytes < 0) {
      ++d.frees;
      d.freed_bytes -= m.bytes;
    }
    if (m.total_allocated >= 0) allocated = m.total_allocated;
    else {
      allocated += m.bytes;
      d.totals_from_trace = false;
    }
    if (m.total_reserved >= 0) reserved = m.total_reserved;
    if (k == 0 || allocated > d.peak_allocated_bytes) {
      d.peak_allocated_bytes = allocated;
      d.peak_allocated_ns = m.timestamp;
      peak_at = k;
    }
    if (reserved > d.peak_reserved_bytes) {
      d.peak_reserved_bytes = reserved;
      d.peak_reserved_ns = m.timestamp;
    }
    all.push_back({m.timestamp, allocated, reserved});
  }
  d.series = thin_series(all);

  // Allocations live at the peak, joined to their frees by address.
  std::unordered_map<std::uint64_t, Live> live;
  for (std::size_t k = 0; k <= peak_at; ++k) {
    const MemoryEvent& m = trace.memory[events[k]];
    if (m.address == 0) continue;
    if (m.bytes > 0) live[m.address] = {events[k], m.bytes};
    else if (m.bytes < 0 && live.erase(m.address) == 0) ++d.unmatched_frees;
  }
  std::map<std::string_view, MemoryOwner> by_op;
  for (const auto& [addr, a] : live) {
    const MemoryEvent& m = trace.memory[a.event];
    std::string_view op = ops.owner(m.pid, m.tid, m.timestamp);
    if (op.empty()) op = "(no op)";
    MemoryOwner& o = by_op[op];
    ++o.allocations;
    o.bytes += a.bytes;
    d.live_at_peak_bytes += a.bytes;
  }
  d.unattributed_bytes = std::max<std::int64_t>(0, d.peak_allocated_bytes - d.live_at_peak_bytes);
  for (auto& [op, o] : by_op) {
    o.op = std::string(op);
    d.owners.push_back(std::move(o));
  }
  d.owner_ops = d.owners.size();
  std::sort(d.owners.begin(), d.owners.end(), [](const MemoryOwner& a, const MemoryOwner& b) {
    return std::tie(b.bytes, a.op) < std::tie(a.bytes, b.op);
  });
  if (d.owners.size() > kTopMemoryOwners) d.owners.resize(kTopMemoryOwners);
  return d;
}

}  // namespace

std::string memory_device_name(std::int32_t device_type, std::int32_t device) {
  if (device_type < 0) return device < 0 ? "unknown" : "unknown:" + std::to_string(device);
  const std::string type = static_cast<std::size_t>(device_type) < kDeviceTypes.size()
                               ? std::string(kDeviceTypes[static_cast<std::size_t>(device_type)])
                               : "type " + std::to_string(device_type);
  return device < 0 ? type : type + ":" + std::to_string(device);
}

MemoryAnalysis analyze_memory(const Trace& trace, std::optional<std::int64_t> pid) {
  MemoryAnalysis r;
  // Per device, its events in time order (Trace::memory is, after finalize(); sorted here
  // again, stably, for a trace built without it).
  std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::size_t>> by_device;
  for (std::size_t i = 0; i < trace.memory.size(); ++i) {
    const MemoryEvent& m = trace.memory[i];
    if (pid && m.pid != *pid) continue;
    by_device[{m.device_type, m.device}].push_back(i);
    ++r.events;
  }
  if (by_device.empty()) return r;
  const OpIndex ops(trace, pid);
  for (auto& [key, events] : by_device) {
    std::stable_sort(events.begin(), events.end(), [&](std::size_t a, std::size_t b) {
      return trace.memory[a].timestamp < trace.memory[b].timestamp;
    });
    r.devices.push_back(one_device(trace, events, ops));
  }
  return r;
}

}  // namespace syncscope
