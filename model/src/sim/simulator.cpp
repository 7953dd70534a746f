#include "syncscope/sim/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "profile_costs.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::sim {

namespace {

using program::Op;
using program::OpKind;
using program::Program;

constexpr double kInf = std::numeric_limits<double>::infinity();
// Work below this many ns counts as finished: guards against floating-point residue when
// a rate changes mid-item.
constexpr double kEps = 1e-6;

// CUPTI runtime callback ids (CUDA 13.0 include/cupti_runtime_cbid.h), so the analyses can
// classify calls by id as well as by name.
constexpr std::int32_t kCbidMemcpyAsync = 41;
constexpr std::int32_t kCbidMemsetAsync = 51;
constexpr std::int32_t kCbidStreamSynchronize = 131;
constexpr std::int32_t kCbidEventRecord = 135;
constexpr std::int32_t kCbidEventSynchronize = 137;
constexpr std::int32_t kCbidStreamWaitEvent = 147;
constexpr std::int32_t kCbidDeviceSynchronize = 165;
constexpr std::int32_t kCbidLaunchKernel = 211;

enum class Engine : std::uint8_t { Compute, H2D, D2H };
enum class ItemKind : std::uint8_t { Kernel, Copy, Memset, Marker };

struct Item {
  ItemKind kind = ItemKind::Marker;
  Engine engine = Engine::Compute;
  int stream = 0;
  std::size_t op = 0;        // index into the program's ops
  std::uint64_t correlation = 0;
  double ready = 0;          // earliest start (host call + launch latency)
  double work = 0;           // ns of work at full rate
  double demand = 0;         // device-memory bytes per ns it moves at full rate
  std::vector<std::size_t> deps;  // items that must finish first (other streams)
  bool is_copy_like = false; // occupies memory bandwidth as a copy (H2D/D2H)
  bool started = false;
  bool done = false;
  double remaining = 0;
  double start = 0;
  double end = 0;
  int record_event = -1;     // EventRecord marker: the event it records
};

// The GPU side: streams of items, two copy engines, concurrent kernels.
class Gpu {
 public:
  Gpu(const GpuProfile& profile, std::size_t streams) : profile_(profile), queues_(streams) {}

  std::size_t submit(Item item) {
    item.remaining = item.work;
    const std::size_t idx = items_.size();
    queues_[static_cast<std::size_t>(item.stream)].items.push_back(idx);
    items_.push_back(std::move(item));
    return idx;
  }

  const Item& item(std::size_t i) const { return items_[i]; }
  const std::vector<Item>& items() const { return items_; }
  double now() const { return now_; }

  // The last item queued on a stream, if it has not finished.
  std::optional<std::size_t> tail(int stream) const {
    const auto& q = queues_[static_cast<std::size_t>(stream)];
    if (q.items.empty()) return std::nullopt;
    return q.items.back();
  }

  bool drained(int stream) const {
    const auto& q = queues_[static_cast<std::size_t>(stream)];
    return q.head == q.items.size();
  }
  bool all_drained() const {
    for (std::size_t s = 0; s < queues_.size(); ++s)
      if (!drained(static_cast<int>(s))) return false;
    return true;
  }

  // Simulates up to time t (everything that starts or ends at or before t happens).
  void advance_to(double t) {
    while (true) {
      start_ready();
      const double next = next_event();
      if (next > t) {
        progress(t - now_);
        now_ = std::max(now_, t);
        start_ready();
        return;
      }
      step(next);
    }
  }

  // Simulates until `done()` holds; returns the time it first holds.
  double run_until(const std::function<bool()>& done) {
    start_ready();
    while (!done()) {
      const double next = next_event();
      if (next == kInf)
        throw Error("simulator: the program waits for GPU work that can never run (a stream waits on an event "
                    "recorded after the wait, or a cycle of waits)");
      step(next);
      start_ready();
    }
    return now_;
  }

 private:
  struct Queue {
    std::vector<std::size_t> items;
    std::size_t head = 0;  // first unfinished item
  };

  bool copies_running() const {
    for (auto i : active_)
      if (items_[i].is_copy_like) return true;
    return false;
  }
  bool kernels_running() const {
    for (auto i : active_)
      if (!items_[i].is_copy_like) return true;
    return false;
  }

  // Device-memory bandwidth share: when the active items together want more than the
  // DRAM delivers, each progresses at dram / demand of its full rate.
  double dram_share() const {
    const double dram = profile_.dram_bytes_per_s / 1e9;  // bytes per ns
    if (!(dram > 0)) return 1.0;
    double demand = 0;
    for (auto i : active_) demand += items_[i].demand;
    return demand > dram ? dram / demand : 1.0;
  }

  // Fraction of full speed an active item progresses at, given what else runs.
  double rate(const Item& it, bool copies, bool kernels) const {
    const double share = dram_share();
    const double slow = 1.0 + std::max(0.0, profile_.copy_compute_slowdown);
    if (!it.is_copy_like) return share * (copies ? 1.0 / slow : 1.0);
    // Unified memory: a copy is memory traffic on the same DRAM the kernels use.
    return share * ((profile_.unified_memory && kernels) ? 1.0 / slow : 1.0);
  }

  bool deps_done(const Item& it) const {
    for (auto d : it.deps)
      if (!items_[d].done) return false;
    return true;
  }

  void finish(std::size_t idx) {
    Item& it = items_[idx];
    it.done = true;
    it.end = now_;
    auto& q = queues_[static_cast<std::size_t>(it.stream)];
    // Items finish in stream order: the head is this item.
    ++q.head;
    if (it.engine != Engine::Compute) engine_busy_[static_cast<int>(it.engine)] = false;
  }

  // Starts every head item that can start now; markers finish at once, which may let more
  // start, so repeat until nothing changes.
  void start_ready() {
    bool changed = true;
    while (changed) {
      changed = false;
      std::optional<std::size_t> engine_pick[3];
      for (auto& q : queues_) {
        if (q.head == q.items.size()) continue;
        const std::size_t idx = q.items[q.head];
        Item& it = items_[idx];
        if (it.started || it.ready > now_ + kEps || !deps_done(it)) continue;
        if (it.engine != Engine::Compute) {
          auto& pick = engine_pick[static_cast<int>(it.engine)];
          if (!engine_busy_[static_cast<int>(it.engine)] && (!pick || items_[*pick].correlation > it.correlation))
            pick = idx;  // one copy per engine, in host issue order
          continue;
        }
        begin(idx);
        changed = true;
      }
      for (auto& pick : engine_pick) {
        if (!pick) continue;
        engine_busy_[static_cast<int>(items_[*pick].engine)] = true;
        begin(*pick);
        changed = true;
      }
    }
  }

  void begin(std::size_t idx) {
    Item& it = items_[idx];
    it.started = true;
    it.start = now_;
    if (it.remaining <= kEps) {
      finish(idx);
      return;
    }
    active_.push_back(idx);
  }

  double next_event() const {
    double next = kInf;
    const bool copies = copies_running(), kernels = kernels_running();
    for (auto i : active_) next = std::min(next, now_ + items_[i].remaining / rate(items_[i], copies, kernels));
    for (const auto& q : queues_) {
      if (q.head == q.items.size()) continue;
      const Item& it = items_[q.items[q.head]];
      if (!it.started && it.ready > now_ + kEps && deps_done(it)) next = std::min(next, it.ready);
    }
    return next;
  }

  void progress(double dt) {
    if (dt <= 0) return;
    const bool copies = copies_running(), kernels = kernels_running();
    for (auto i : active_) items_[i].remaining -= dt * rate(items_[i], copies, kernels);
  }

  void step(double next) {
    const bool copies = copies_running(), kernels = kernels_running();
    std::vector<std::size_t> finishing;
    for (auto i : active_) {
      const double done_at = now_ + items_[i].remaining / rate(items_[i], copies, kernels);
      if (done_at <= next + kEps) finishing.push_back(i);
    }
    progress(next - now_);
    now_ = std::max(now_, next);
    for (auto i : finishing) {
      items_[i].remaining = 0;
      active_.erase(std::find(active_.begin(), active_.end(), i));
      finish(i);
    }
  }

  const GpuProfile& profile_;
  std::vector<Queue> queues_;
  std::vector<Item> items_;
  std::vector<std::size_t> active_;
  bool engine_busy_[3] = {false, false, false};
  double now_ = 0;
};

// "GPU profile H200 (model/profiles/H200.yaml)"
std::string profile_label(const GpuProfile& p) {
  return "GPU profile " + p.name + (p.source.empty() ? std::string() : " (" + p.source + ")");
}

// A simulated time as integer ns. Times are bounded (bounds::kMaxTimeNs, 146 years): a
// profile value that makes one larger is an error naming it, never a wrapped or 0 ns time.
Ns round_ns(double t, const GpuProfile& p, const char* field) {
  if (auto ns = bounds::ns_checked(t)) return *ns;
  throw InputError(fmt::format("simulator: {}: {} makes a simulated time of {:g} ns, beyond the simulator's range "
                               "(2^62 ns, 146 years); the value is not physical: check {}",
                               profile_label(p), field, t, field));
}

void require_positive(const GpuProfile& p, double v, const char* field) {
  if (!(v > 0))
    throw InputError(fmt::format("GPU profile {}: {} must be positive for the simulator, got {}", p.name, field, v));
}

// Profiles may leave the pageable rates out (datasheets do not give them); the pinned rate
// stands in then, an upper bound. Step programs copy only scalars and small index arrays
// through pageable memory, where min_copy_ns dominates anyway.
double copy_rate(const Op& op, const GpuProfile& p) {
  const bool pageable = op.host_memory == MemoryKind::Pageable;
  switch (op.copy) {
    case CopyKind::HtoD:
      if (pageable && p.h2d_pageable_bytes_per_s > 0) return p.h2d_pageable_bytes_per_s;
      require_positive(p, p.h2d_pinned_bytes_per_s, "h2d_pinned_bytes_per_s");
      return p.h2d_pinned_bytes_per_s;
    case CopyKind::DtoH:
      if (pageable && p.d2h_pageable_bytes_per_s > 0) return p.d2h_pageable_bytes_per_s;
      require_positive(p, p.d2h_pinned_bytes_per_s, "d2h_pinned_bytes_per_s");
      return p.d2h_pinned_bytes_per_s;
    default:
      require_positive(p, p.dram_bytes_per_s, "dram_bytes_per_s");
      return p.dram_bytes_per_s / 2;  // device-to-device: every byte is read and written
  }
}

bool is_legacy_default(const Program& prog, int stream) { return stream == 0 && !prog.streams[0].non_blocking; }

Ns kernel_floor(const GpuProfile& p, const SimOptions& o) {
  return p.kernel_floor_ns > 0 ? round_ns(p.kernel_floor_ns, p, "kernel_floor_ns") : o.min_kernel_ns;
}

}  // namespace

Ns op_duration_ns(const Op& op, const GpuProfile& p, const SimOptions& options) {
  switch (op.kind) {
    case OpKind::Kernel: {
      Ns t = 0;
      if (op.flops > 0) {
        const double r = op.bf16 ? p.bf16_flops_per_s : p.fp32_flops_per_s;
        const char* field = op.bf16 ? "bf16_flops_per_s" : "fp32_flops_per_s";
        require_positive(p, r, field);
        t = std::max(t, round_ns(op.flops / r * 1e9, p, field));
      }
      if (op.bytes > 0) {
        require_positive(p, p.dram_bytes_per_s, "dram_bytes_per_s");
        t = std::max(t, round_ns(op.bytes / p.dram_bytes_per_s * 1e9, p, "dram_bytes_per_s"));
      }
      // A fitted profile knows this kernel's time at the traced shapes, and the shortest
      // kernels' time on that GPU (the floor below which no launch finishes).
      if (const FittedKernel* k = detail::fitted_kernel(p, op.name))
        t = std::max(t, round_ns(k->median_ns, p, "a fitted kernel's median_ns"));
      return std::max(t, kernel_floor(p, options));
    }
    case OpKind::Memset:
      require_positive(p, p.dram_bytes_per_s, "dram_bytes_per_s");
      return std::max(round_ns(op.bytes / p.dram_bytes_per_s * 1e9, p, "dram_bytes_per_s"), kernel_floor(p, options));
    case OpKind::Copy: {
      const double rate = copy_rate(op, p);
      const char* field = op.copy == CopyKind::HtoD   ? "h2d_pinned_bytes_per_s (or h2d_pageable_bytes_per_s)"
                          : op.copy == CopyKind::DtoH ? "d2h_pinned_bytes_per_s (or d2h_pageable_bytes_per_s)"
                                                      : "dram_bytes_per_s";
      return std::max(round_ns(op.bytes / rate * 1e9, p, field),
                      p.copy_floor_ns > 0 ? round_ns(p.copy_floor_ns, p, "copy_floor_ns") : options.min_copy_ns);
    }
    default:
      return 0;
  }
}

double simulation_bytes(std::uint64_t ops_per_step, int steps) {
  // Per op and step: its GPU work item (with a dependency or two), the emitted-item index,
  // one API call, one GPU or sync record, a share of host ranges; the trace's vectors grow
  // by doubling (up to 2x); analyze() then holds about as much again.
  const double per_event = 2.0 * (sizeof(Item) + 2 * sizeof(std::size_t) + 2 * sizeof(std::size_t) + sizeof(ApiCall) +
                                  std::max({sizeof(Kernel), sizeof(Memcpy), sizeof(SyncRecord)}) + sizeof(Range) / 2) +
                           sizeof(ApiCall) + sizeof(Kernel);
  return static_cast<double>(ops_per_step) * std::max(1, steps) * per_event;
}

std::int64_t trace_stream_id(const Program& prog, int index) {
  if (index == 0 && !prog.streams.empty() && !prog.streams[0].non_blocking) return 7;
  return 13 + index;
}

Trace simulate(const Program& prog, const GpuProfile& p, const SimOptions& opt) {
  SYNCSCOPE_INPUT_ERROR_IF(prog.streams.empty(), "simulator: program " + prog.name + " has no streams");
  SYNCSCOPE_INPUT_ERROR_IF(opt.steps < 1, "simulator: steps must be at least 1");
  const int nstreams = static_cast<int>(prog.streams.size());
  auto bad = [&](std::size_t i, const std::string& what) {
    return InputError(fmt::format("simulator: program {}: op {} ({}): {}", prog.name, i, prog.ops[i].name, what));
  };
  // Check the program once, before any time passes.
  {
    int depth = 0;
    for (std::size_t i = 0; i < prog.ops.size(); ++i) {
      const Op& op = prog.ops[i];
      if (op.stream < 0 || op.stream >= nstreams)
        throw bad(i, fmt::format("stream {} out of range (program has {})", op.stream, nstreams));
      const bool uses_event =
          op.kind == OpKind::EventRecord || op.kind == OpKind::StreamWait || op.kind == OpKind::EventSync;
      if (uses_event && (op.event < 0 || op.event >= prog.num_events))
        throw bad(i, fmt::format("event {} out of range (program has {})", op.event, prog.num_events));
      if (op.kind == OpKind::Copy) {
        if (op.copy != CopyKind::HtoD && op.copy != CopyKind::DtoH && op.copy != CopyKind::DtoD)
          throw bad(i, "copy direction must be HtoD, DtoH or DtoD");
        if (op.copy != CopyKind::DtoD && op.host_memory != MemoryKind::Pinned &&
            op.host_memory != MemoryKind::Pageable && op.host_memory != MemoryKind::Managed)
          throw bad(i, "a host copy needs host_memory Pinned or Pageable");
      }
      if (op.kind == OpKind::RangePush) ++depth;
      if (op.kind == OpKind::RangePop && --depth < 0) throw bad(i, "RangePop without a RangePush");
      if (op.host_ns < 0) throw bad(i, "host_ns must not be negative");
      if (op.flops < 0 || op.bytes < 0) throw bad(i, "flops and bytes must not be negative");
    }
    SYNCSCOPE_INPUT_ERROR_IF(depth != 0, "simulator: program " + prog.name + ": a RangePush has no RangePop");
  }
  require_positive(p, p.launch_overhead_ns, "launch_overhead_ns");
  require_positive(p, p.sync_round_trip_ns, "sync_round_trip_ns");
  // Before allocating: what this simulation will hold, against what the machine has.
  bounds::check_memory(simulation_bytes(prog.ops.size(), opt.steps),
                       fmt::format("simulating program {} ({} ops) for {} step(s)", prog.name, prog.ops.size(), opt.steps),
                       "simulate fewer steps (measure.repeat_steps, --repeats) or a smaller shape");

  bool own_steps = false;
  for (const Op& op : prog.ops)
    if (op.kind == OpKind::RangePush && op.name.rfind(opt.step_range_prefix, 0) == 0) own_steps = true;

  Trace trace;
  trace.meta.source_tool = kSimSourceTool;
  trace.meta.source_version = "1";
  trace.meta.trace_name = prog.name;
  trace.meta.clock = ClockBase::Simulated;
  trace.meta.extra["gpu_profile"] = p.name;
  trace.meta.extra["gpu_profile_measured"] = p.measured ? "true" : "false";
  for (const auto& [k, v] : p.provenance) trace.meta.extra["gpu_profile_" + k] = v;
  trace.meta.extra["mode"] = "simulated";
  if (p.h2d_pageable_bytes_per_s <= 0 || p.d2h_pageable_bytes_per_s <= 0)
    trace.meta.extra["pageable_copy_rate"] = "profile has none: pinned rate used";
  DeviceProperties dev;
  dev.id = opt.device;
  dev.name = p.name + " (simulated)";
  dev.sm_count = p.sm_count;
  dev.total_memory_bytes = static_cast<std::uint64_t>(std::max(0.0, p.memory_bytes));
  trace.devices.push_back(dev);
  for (int s = 0; s < nstreams; ++s) {
    trace.track_names.push_back({std::to_string(opt.device), std::to_string(trace_stream_id(prog, s)),
                                 "stream " + std::to_string(trace_stream_id(prog, s)) + " (" + prog.streams[s].name + ")"});
  }
  trace.track_names.push_back({std::to_string(opt.pid), "", "host (simulated)"});

  // Per op, once: the host time a fitted profile charges before it, and its GPU duration
  // (the program repeats every step).
  std::vector<detail::OpHostCost> host_cost(prog.ops.size());
  std::vector<double> duration(prog.ops.size());
  double pending_after = 0;  // the host time of the last op after its launch call, still to run
  for (std::size_t i = 0; i < prog.ops.size(); ++i) {
    host_cost[i] = detail::op_host_cost(prog.ops[i], p);
    duration[i] = static_cast<double>(op_duration_ns(prog.ops[i], p, opt));
  }

  Gpu gpu(p, prog.streams.size());
  std::vector<std::optional<std::size_t>> last_record(static_cast<std::size_t>(prog.num_events));
  std::uint64_t next_corr = 1;
  double h = 0;  // host time (ns)
  const double overhead = p.launch_overhead_ns;
  const double latency = std::max(0.0, p.launch_latency_ns);
  const double round_trip = p.sync_round_trip_ns;
  const std::int64_t tid = opt.tid, pid = opt.pid;
  // The profile fields host and GPU times are sums of, named when a time overflows.
  const char* host_fields = "launch_overhead_ns, sync_round_trip_ns or the rates";
  const char* gpu_fields = "launch_latency_ns or the rates";
  // A host time the profile value `field` just moved past the simulator's range.
  auto check_host = [&](double t, const char* field) {
    if (!(t < bounds::kMaxTimeNs)) (void)round_ns(t, p, field);
  };
  check_host(overhead, "launch_overhead_ns");
  check_host(latency, "launch_latency_ns");
  check_host(round_trip, "sync_round_trip_ns");

  auto api = [&](const char* name, std::int32_t cbid, double start, double end, std::uint64_t corr) {
    ApiCall c;
    c.kind = ApiKind::Runtime;
    c.name = trace.intern(name);
    c.cbid = cbid;
    c.pid = pid;
    c.tid = tid;
    c.start = round_ns(start, p, host_fields);
    c.end = std::max(c.start, round_ns(end, p, host_fields));
    c.correlation = corr;
    c.device = opt.device;
    trace.api_calls.push_back(c);
  };
  auto range = [&](RangeKind kind, const std::string& name, double start, double end) {
    Range r;
    r.kind = kind;
    r.name = trace.intern(name);
    r.pid = pid;
    r.tid = tid;
    r.start = round_ns(start, p, host_fields);
    r.end = std::max(r.start, round_ns(end, p, host_fields));
    trace.ranges.push_back(r);
  };
  auto sync_record = [&](SyncType type, int stream, double start, double end, std::uint64_t corr, int event) {
    SyncRecord r;
    r.type = type;
    r.device = opt.device;
    r.stream = stream >= 0 ? trace_stream_id(prog, stream) : -1;
    r.event_id = event >= 0 ? static_cast<std::uint64_t>(event + 1) : 0;
    r.start = round_ns(start, p, host_fields);
    r.end = std::max(r.start, round_ns(end, p, host_fields));
    r.correlation = corr;
    trace.syncs.push_back(r);
  };
  // Implicit ordering with the legacy default stream (see the header).
  auto implicit_deps = [&](int stream) {
    std::vector<std::size_t> deps;
    if (is_legacy_default(prog, stream)) {
      for (int s = 1; s < nstreams; ++s)
        if (!prog.streams[s].non_blocking)
          if (auto t = gpu.tail(s)) deps.push_back(*t);
    } else if (!prog.streams[stream].non_blocking && is_legacy_default(prog, 0)) {
      if (auto t = gpu.tail(0)) deps.push_back(*t);
    }
    return deps;
  };
  // Enqueues one item; returns its index.
  auto enqueue = [&](Item it, double call_start) {
    auto deps = implicit_deps(it.stream);
    it.deps.insert(it.deps.end(), deps.begin(), deps.end());
    it.ready = call_start + (it.kind == ItemKind::Copy && p.copy_latency_ns > 0 ? p.copy_latency_ns : latency);
    return gpu.submit(std::move(it));
  };

  struct Emitted {
    std::size_t item;
    std::size_t op;
  };
  std::vector<Emitted> emitted;
  std::vector<std::pair<std::string, double>> open_ranges;
  struct PendingCpuOp {
    std::string name;
    double start = 0, end = 0;
  };
  std::optional<PendingCpuOp> pending_cpu_op;
  auto flush_cpu_op = [&] {
    if (pending_cpu_op) range(RangeKind::CpuOp, pending_cpu_op->name, pending_cpu_op->start, pending_cpu_op->end);
    pending_cpu_op.reset();
  };

  for (int step = 0; step < opt.steps; ++step) {
    if (!own_steps) open_ranges.emplace_back(opt.step_range_prefix + std::to_string(opt.first_step + step), h);
    for (std::size_t i = 0; i < prog.ops.size(); ++i) {
      const Op& op = prog.ops[i];
      // A fitted profile's host time per framework op: what is left of the previous op, then
      // this one's time up to its launch call.
      if (host_cost[i].starts_op || host_cost[i].boundary) h += std::exchange(pending_after, 0.0);
      h += host_cost[i].before;
      if (host_cost[i].starts_op) pending_after = host_cost[i].after;
      const double op_start = h;
      h += static_cast<double>(op.host_ns);
      if (op.kind != OpKind::HostWork) gpu.advance_to(h);
      // Non-kernel ops named like a framework op ("aten::item ...") get a CPU-op range around
      // their host time and API call, so the analyses attribute the sync to it; the range
      // also covers the unnamed (or "cuda*"-named) syncs right after it, as aten::item
      // encloses its copy and the cudaStreamSynchronize that follows.
      const bool cpu_op_range = op.kind != OpKind::Kernel && op.kind != OpKind::HostWork &&
                                op.kind != OpKind::RangePush && op.kind != OpKind::RangePop &&
                                op.name.find("::") != std::string::npos;
      const bool host_sync = op.kind == OpKind::StreamSync || op.kind == OpKind::DeviceSync ||
                             op.kind == OpKind::EventSync;
      const bool continues = pending_cpu_op && pending_cpu_op->end == op_start &&
                             ((host_sync && (op.name.empty() || op.name.rfind("cuda", 0) == 0)) ||
                              (cpu_op_range && op.name == pending_cpu_op->name));
      if (!continues) flush_cpu_op();
      switch (op.kind) {
        case OpKind::HostWork:
          if (!op.name.empty() && h > op_start) range(RangeKind::CpuOp, op.name, op_start, h);
          break;
        case OpKind::RangePush:
          open_ranges.emplace_back(op.name, h);
          break;
        case OpKind::RangePop: {
          auto [name, start] = open_ranges.back();
          open_ranges.pop_back();
          range(RangeKind::NvtxPushPop, name, start, h);
          break;
        }
        case OpKind::Kernel:
        case OpKind::Memset: {
          const std::uint64_t corr = next_corr++;
          Item it;
          it.kind = op.kind == OpKind::Kernel ? ItemKind::Kernel : ItemKind::Memset;
          it.stream = op.stream;
          it.op = i;
          it.correlation = corr;
          it.work = duration[i];
          it.demand = it.work > 0 ? op.bytes / it.work : 0;
          emitted.push_back({enqueue(std::move(it), h), i});
          api(op.kind == OpKind::Kernel ? "cudaLaunchKernel" : "cudaMemsetAsync",
              op.kind == OpKind::Kernel ? kCbidLaunchKernel : kCbidMemsetAsync, h, h + overhead, corr);
          h += overhead;
          break;
        }
        case OpKind::Copy: {
          const std::uint64_t corr = next_corr++;
          Item it;
          it.kind = ItemKind::Copy;
          it.stream = op.stream;
          it.op = i;
          it.correlation = corr;
          it.work = duration[i];
          it.engine = op.copy == CopyKind::HtoD ? Engine::H2D : op.copy == CopyKind::DtoH ? Engine::D2H : Engine::Compute;
          it.is_copy_like = op.copy != CopyKind::DtoD;
          // Device-memory traffic: a device-to-device copy reads and writes it; a host copy
          // writes (H2D) or reads (D2H) it once, or both when host memory is that memory.
          const double touches = (op.copy == CopyKind::DtoD || p.unified_memory) ? 2.0 : 1.0;
          it.demand = it.work > 0 ? touches * op.bytes / it.work : 0;
          const std::size_t idx = enqueue(std::move(it), h);
          emitted.push_back({idx, i});
          const double call = h;
          double end = h + overhead;
          if (op.copy != CopyKind::DtoD && op.host_memory == MemoryKind::Pageable) {
            // Staged through a driver buffer: the call returns when the copy is done.
            gpu.run_until([&] { return gpu.item(idx).done; });
            end = std::max(end, gpu.item(idx).end);
          }
          api("cudaMemcpyAsync", kCbidMemcpyAsync, call, end, corr);
          h = end;
          break;
        }
        case OpKind::EventRecord: {
          const std::uint64_t corr = next_corr++;
          Item it;
          it.kind = ItemKind::Marker;
          it.stream = op.stream;
          it.op = i;
          it.correlation = corr;
          it.record_event = op.event;
          const std::size_t idx = enqueue(std::move(it), h);
          last_record[static_cast<std::size_t>(op.event)] = idx;
          emitted.push_back({idx, i});
          api("cudaEventRecord", kCbidEventRecord, h, h + overhead, corr);
          h += overhead;
          break;
        }
        case OpKind::StreamWait: {
          const std::uint64_t corr = next_corr++;
          Item it;
          it.kind = ItemKind::Marker;
          it.stream = op.stream;
          it.op = i;
          it.correlation = corr;
          if (auto rec = last_record[static_cast<std::size_t>(op.event)]) it.deps.push_back(*rec);
          enqueue(std::move(it), h);
          api("cudaStreamWaitEvent", kCbidStreamWaitEvent, h, h + overhead, corr);
          sync_record(SyncType::StreamWaitEvent, op.stream, h, h + overhead, corr, op.event);
          h += overhead;
          break;
        }
        case OpKind::StreamSync:
        case OpKind::DeviceSync:
        case OpKind::EventSync: {
          const std::uint64_t corr = next_corr++;
          const double call = h;
          double drained = h;
          if (op.kind == OpKind::StreamSync) {
            drained = gpu.run_until([&] { return gpu.drained(op.stream); });
          } else if (op.kind == OpKind::DeviceSync) {
            drained = gpu.run_until([&] { return gpu.all_drained(); });
          } else if (auto rec = last_record[static_cast<std::size_t>(op.event)]) {
            drained = gpu.run_until([&] { return gpu.item(*rec).done; });
          }
          const double end = std::max(call, drained) + round_trip;
          check_host(end, "sync_round_trip_ns");
          if (op.kind == OpKind::StreamSync) {
            api("cudaStreamSynchronize", kCbidStreamSynchronize, call, end, corr);
            sync_record(SyncType::StreamSync, op.stream, call, end, corr, -1);
          } else if (op.kind == OpKind::DeviceSync) {
            api("cudaDeviceSynchronize", kCbidDeviceSynchronize, call, end, corr);
            sync_record(SyncType::ContextSync, -1, call, end, corr, -1);
          } else {
            api("cudaEventSynchronize", kCbidEventSynchronize, call, end, corr);
            sync_record(SyncType::EventSync, -1, call, end, corr, op.event);
          }
          h = end;
          break;
        }
      }
      if (continues) pending_cpu_op->end = h;
      else if (cpu_op_range) pending_cpu_op = PendingCpuOp{op.name, op_start, h};
    }
    flush_cpu_op();
    if (!own_steps) {
      h += std::exchange(pending_after, 0.0) + p.host_range_ns;  // the step range's pop
      auto [name, start] = open_ranges.back();
      open_ranges.pop_back();
      range(RangeKind::NvtxPushPop, name, start, h);
    }
  }
  gpu.run_until([&] { return gpu.all_drained(); });

  for (const auto& e : emitted) {
    const Item& it = gpu.item(e.item);
    const Op& op = prog.ops[e.op];
    const std::int64_t stream = trace_stream_id(prog, it.stream);
    switch (it.kind) {
      case ItemKind::Kernel: {
        Kernel k;
        k.name = trace.intern(op.name.empty() ? "kernel" : op.name);
        k.device = opt.device;
        k.stream = stream;
        k.start = round_ns(it.start, p, gpu_fields);
        k.end = std::max(k.start, round_ns(it.end, p, gpu_fields));
        k.correlation = it.correlation;
        trace.kernels.push_back(k);
        break;
      }
      case ItemKind::Memset: {
        Memset m;
        m.bytes = static_cast<std::uint64_t>(op.bytes);
        m.memory_kind = MemoryKind::Device;
        m.async = true;
        m.device = opt.device;
        m.stream = stream;
        m.start = round_ns(it.start, p, gpu_fields);
        m.end = std::max(m.start, round_ns(it.end, p, gpu_fields));
        m.correlation = it.correlation;
        trace.memsets.push_back(m);
        break;
      }
      case ItemKind::Copy: {
        Memcpy m;
        m.kind = op.copy;
        const MemoryKind host = op.host_memory == MemoryKind::Managed ? MemoryKind::Managed : op.host_memory;
        m.src_kind = op.copy == CopyKind::HtoD ? host : MemoryKind::Device;
        m.dst_kind = op.copy == CopyKind::DtoH ? host : MemoryKind::Device;
        m.async = true;
        m.bytes = static_cast<std::uint64_t>(op.bytes);
        m.device = opt.device;
        m.stream = stream;
        m.start = round_ns(it.start, p, gpu_fields);
        m.end = std::max(m.start, round_ns(it.end, p, gpu_fields));
        m.correlation = it.correlation;
        trace.memcpys.push_back(m);
        break;
      }
      case ItemKind::Marker: {
        if (it.record_event < 0) break;
        CudaEventRecord r;
        r.device = opt.device;
        r.stream = stream;
        r.event_id = static_cast<std::uint64_t>(it.record_event + 1);
        r.event_sync_id = it.correlation;
        r.timestamp = round_ns(it.end, p, gpu_fields);
        r.correlation = it.correlation;
        trace.cuda_events.push_back(r);
        break;
      }
    }
  }
  trace.finalize();
  return trace;
}

}  // namespace syncscope::sim
