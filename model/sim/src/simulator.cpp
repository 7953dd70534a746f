#include "syncscope/sim/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "aten_ops.hpp"
#include "gpu_queues.hpp"
#include "profile_costs.hpp"
#include "sim_device.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"

namespace syncscope::sim {

namespace {

using detail::Engine;
using detail::Gpu;
using detail::Item;
using detail::ItemKind;
using detail::profile_label;
using detail::require_positive;
using detail::round_ns;
using program::Op;
using program::OpKind;
using program::Program;

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

bool is_legacy_default(const Program& prog, int stream) { return stream == 0 && !prog.streams[0].non_blocking; }

// Checks the program once, before any time passes: InputError naming the op.
void check_program(const Program& prog) {
  const int nstreams = static_cast<int>(prog.streams.size());
  auto bad = [&](std::size_t i, const std::string& what) {
    return InputError(fmt::format("simulator: program {}: op {} ({}): {}", prog.name, i, prog.ops[i].name, what));
  };
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
      if (op.copy != CopyKind::DtoD && op.host_memory != MemoryKind::Pinned && op.host_memory != MemoryKind::Pageable &&
          op.host_memory != MemoryKind::Managed)
        throw bad(i, "a host copy needs host_memory Pinned or Pageable");
    }
    if (op.kind == OpKind::RangePush) ++depth;
    if (op.kind == OpKind::RangePop && --depth < 0) throw bad(i, "RangePop without a RangePush");
    if (op.host_ns < 0) throw bad(i, "host_ns must not be negative");
    if (op.flops < 0 || op.bytes < 0) throw bad(i, "flops and bytes must not be negative");
  }
  SYNCSCOPE_INPUT_ERROR_IF(depth != 0, "simulator: program " + prog.name + ": a RangePush has no RangePop");
}

// One simulation of a program: the host issues its ops step after step (host issue), each
// CUDA call hands work to the GPU's stream queues (launch, copies to the copy engines, event
// records and waits; Gpu in gpu_queues.hpp runs them), host syncs wait for the GPU (sync
// waits), and at the end the GPU's records of what ran join the host's in the trace.
class Simulation {
 public:
  Simulation(const Program& prog, const model::GpuProfile& p, const SimOptions& opt);
  void run_step(int step);
  Trace finish();

 private:
  // host issue
  void issue(std::size_t i);
  // launch: kernels and memsets, event records and stream waits
  void launch(std::size_t i);
  void record_event(std::size_t i);
  void wait_event(std::size_t i);
  // copy engines
  void copy(std::size_t i);
  // sync waits
  void host_sync(std::size_t i);
  // GPU queues
  Item item_for(std::size_t i, ItemKind kind);
  std::vector<std::size_t> implicit_deps(int stream);
  std::size_t enqueue(Item it, double call_start);
  // trace records
  void start_trace();
  void api(const char* name, std::int32_t cbid, double start, double end, std::uint64_t corr);
  void range(RangeKind kind, const std::string& name, double start, double end);
  void sync_record(SyncType type, int stream, double start, double end, std::uint64_t corr, int event);
  void flush_cpu_op();
  void charge_after();
  void emit_gpu_records();
  // A host time the profile value `field` just moved past the simulator's range.
  void check_host(double t, const char* field) const {
    if (!(t < bounds::kMaxTimeNs)) (void)round_ns(t, p_, field);
  }

  // The profile fields host and GPU times are sums of, named when a time overflows.
  static constexpr const char* kHostFields = "launch_overhead_ns, sync_round_trip_ns or the rates";
  static constexpr const char* kGpuFields = "launch_latency_ns or the rates";

  struct Emitted {
    std::size_t item;
    std::size_t op;
    std::uint64_t external_id;  // of the CPU op that launched it (0: none)
  };
  // The CPU-op range still open: consecutive ops of one framework op extend it. `launch`:
  // opened around a launch the program gave no framework op (see issue()). `aten`: the
  // aten:: op inside it around the launch calls (aten_ops.hpp), from the end of the profile's
  // host time before the op to the end of its last call; empty: none.
  struct PendingCpuOp {
    std::string name;
    double start = 0, end = 0;
    std::uint64_t external_id = 0;
    bool launch = false;
    std::string aten;
    double aten_start = 0, aten_end = 0;
    std::uint64_t aten_id = 0;
    bool in_aten = false;  // a launch call of the aten:: op is being issued now
  };
  // The External id of the innermost CPU op open now (0: none), as Kineto links runtime
  // calls and GPU records to the op that issued them.
  std::uint64_t open_external_id() const {
    if (!pending_cpu_op_) return 0;
    return pending_cpu_op_->in_aten ? pending_cpu_op_->aten_id : pending_cpu_op_->external_id;
  }

  const Program& prog_;
  const model::GpuProfile& p_;
  const SimOptions& opt_;
  const int nstreams_;
  bool own_steps_ = false;  // the program pushes its own step ranges
  Trace trace_;
  // Per op, once: the host time a fitted profile charges before it, and its GPU duration
  // (the program repeats every step).
  std::vector<detail::OpHostCost> host_cost_;
  std::vector<double> duration_;
  double pending_after_ = 0;  // the host time of the last op after its launch call, still to run
  Gpu gpu_;
  std::vector<std::optional<std::size_t>> last_record_;
  std::uint64_t next_corr_ = 1;
  std::uint64_t next_external_id_ = 1;
  double h_ = 0;  // host time (ns)
  double overhead_ = 0, latency_ = 0, round_trip_ = 0;
  std::vector<Emitted> emitted_;
  std::vector<std::pair<std::string, double>> open_ranges_;
  std::optional<PendingCpuOp> pending_cpu_op_;
};

Simulation::Simulation(const Program& prog, const model::GpuProfile& p, const SimOptions& opt)
    : prog_(prog),
      p_(p),
      opt_(opt),
      nstreams_(static_cast<int>(prog.streams.size())),
      gpu_(p, prog.streams.size()),
      last_record_(static_cast<std::size_t>(prog.num_events)) {
  for (const Op& op : prog_.ops)
    if (op.kind == OpKind::RangePush && op.name.rfind(opt_.step_range_prefix, 0) == 0) own_steps_ = true;
  start_trace();
  host_cost_.resize(prog_.ops.size());
  duration_.resize(prog_.ops.size());
  for (std::size_t i = 0; i < prog_.ops.size(); ++i) {
    host_cost_[i] = detail::op_host_cost(prog_.ops[i], p_);
    duration_[i] = static_cast<double>(op_duration_ns(prog_.ops[i], p_, opt_));
  }
  overhead_ = p_.launch_overhead_ns;
  latency_ = std::max(0.0, p_.launch_latency_ns);
  round_trip_ = p_.sync_round_trip_ns;
  check_host(overhead_, "launch_overhead_ns");
  check_host(latency_, "launch_latency_ns");
  check_host(round_trip_, "sync_round_trip_ns");
}

void Simulation::start_trace() {
  trace_.meta.source_tool = kSimSourceTool;
  trace_.meta.source_version = "1";
  trace_.meta.trace_name = prog_.name;
  trace_.meta.clock = ClockBase::Simulated;
  trace_.meta.extra["gpu_profile"] = p_.name;
  trace_.meta.extra["gpu_profile_calibrated"] = p_.measured ? "true" : "false";
  for (const auto& [k, v] : p_.provenance) trace_.meta.extra["gpu_profile_" + k] = v;
  trace_.meta.extra["mode"] = "simulated";
  if (p_.h2d_pageable_bytes_per_s <= 0 || p_.d2h_pageable_bytes_per_s <= 0)
    trace_.meta.extra["pageable_copy_rate"] = "profile has none: pinned rate used";
  trace_.devices.push_back(sim_detail::simulated_device(p_, opt_.device));
  for (int s = 0; s < nstreams_; ++s) {
    trace_.track_names.push_back({std::to_string(opt_.device), std::to_string(trace_stream_id(prog_, s)),
                                  "stream " + std::to_string(trace_stream_id(prog_, s)) + " (" +
                                      prog_.streams[static_cast<std::size_t>(s)].name + ")"});
  }
  trace_.track_names.push_back({std::to_string(opt_.pid), "", "host (simulated)"});
}

void Simulation::api(const char* name, std::int32_t cbid, double start, double end, std::uint64_t corr) {
  ApiCall c;
  c.kind = ApiKind::Runtime;
  c.name = trace_.intern(name);
  c.cbid = cbid;
  c.pid = opt_.pid;
  c.tid = opt_.tid;
  c.start = round_ns(start, p_, kHostFields);
  c.end = std::max(c.start, round_ns(end, p_, kHostFields));
  c.correlation = corr;
  c.external_id = open_external_id();
  c.device = opt_.device;
  trace_.api_calls.push_back(c);
}

void Simulation::range(RangeKind kind, const std::string& name, double start, double end) {
  Range r;
  r.kind = kind;
  r.name = trace_.intern(name);
  r.pid = opt_.pid;
  r.tid = opt_.tid;
  r.start = round_ns(start, p_, kHostFields);
  r.end = std::max(r.start, round_ns(end, p_, kHostFields));
  trace_.ranges.push_back(r);
}

void Simulation::sync_record(SyncType type, int stream, double start, double end, std::uint64_t corr, int event) {
  SyncRecord r;
  r.type = type;
  r.device = opt_.device;
  r.stream = stream >= 0 ? trace_stream_id(prog_, stream) : -1;
  r.event_id = event >= 0 ? static_cast<std::uint64_t>(event + 1) : 0;
  r.start = round_ns(start, p_, kHostFields);
  r.end = std::max(r.start, round_ns(end, p_, kHostFields));
  r.correlation = corr;
  trace_.syncs.push_back(r);
}

void Simulation::flush_cpu_op() {
  if (pending_cpu_op_) {
    range(RangeKind::CpuOp, pending_cpu_op_->name, pending_cpu_op_->start, pending_cpu_op_->end);
    trace_.ranges.back().external_id = pending_cpu_op_->external_id;
    // After its parent: on the same extent the parent stays first (Trace::finalize).
    if (!pending_cpu_op_->aten.empty()) {
      range(RangeKind::CpuOp, pending_cpu_op_->aten, pending_cpu_op_->aten_start, pending_cpu_op_->aten_end);
      trace_.ranges.back().external_id = pending_cpu_op_->aten_id;
    }
  }
  pending_cpu_op_.reset();
}

// A fitted profile's host time of the previous framework op after its launch call, charged
// when the next op starts or a range opens or closes (for aten::item, after its sync). When
// that op's CPU-op range is still open (nothing outside it ran since), the time is inside
// it, where calibrate --from-trace reads an op's host time after its first launch call
// (model/calibrate/src/host_costs.cpp), so a trace we simulate fits back to its profile.
void Simulation::charge_after() {
  const double after = std::exchange(pending_after_, 0.0);
  if (pending_cpu_op_ && pending_cpu_op_->end == h_) pending_cpu_op_->end = h_ + after;
  h_ += after;
}

// ---- host issue ----

void Simulation::run_step(int step) {
  if (!own_steps_) open_ranges_.emplace_back(opt_.step_range_prefix + std::to_string(opt_.first_step + step), h_);
  // An op issued every `period` steps (program.hpp) runs on the last step of each window.
  const int s = opt_.first_step + step;
  for (std::size_t i = 0; i < prog_.ops.size(); ++i)
    if (prog_.ops[i].period <= 1 || (s + 1) % prog_.ops[i].period == 0) issue(i);
  charge_after();
  if (!own_steps_) {
    h_ += p_.host_range_ns;  // the step range's pop
    auto [name, start] = open_ranges_.back();
    open_ranges_.pop_back();
    range(RangeKind::NvtxPushPop, name, start, h_);
  }
  flush_cpu_op();  // after the range that holds it: same extent, parent first (Trace::finalize)
}

void Simulation::issue(std::size_t i) {
  const Op& op = prog_.ops[i];
  // A fitted profile's host time per framework op: what is left of the previous op, then
  // this one's time up to its launch call.
  if (host_cost_[i].starts_op || host_cost_[i].boundary) charge_after();
  const double before_start = h_;
  h_ += host_cost_[i].before;
  if (host_cost_[i].starts_op) pending_after_ = host_cost_[i].after;
  const double op_start = h_;
  h_ += static_cast<double>(op.host_ns);
  if (op.kind != OpKind::HostWork) gpu_.advance_to(h_);
  // Framework ops ("aten::item ...", program::CpuOp::Opens) get a CPU-op range around their
  // host time and API calls, so the analyses attribute the sync to them; the range also
  // covers the syncs the program marks as issued by that op (CpuOp::Continues), as
  // aten::item encloses its copy and the cudaStreamSynchronize that follows.
  const bool opens = op.cpu_op == program::CpuOp::Opens;
  const bool continues = pending_cpu_op_ && pending_cpu_op_->end == op_start &&
                         (op.cpu_op == program::CpuOp::Continues || (opens && op.name == pending_cpu_op_->name));
  // Every other launch (kernel, memset, copy) gets a CPU op of its own around its host time
  // and launch call, as a real PyTorch trace has one around every runtime launch: from where
  // the profile's host time before it starts to the end of its call, extended over the
  // launches the program marks as the same op's (continues_op: a GEMM's split-K reduce) and
  // over its host time after the call (charge_after).
  const bool launches = op.kind == OpKind::Kernel || op.kind == OpKind::Memset || op.kind == OpKind::Copy;
  const bool own_launch_op = launches && op.cpu_op == program::CpuOp::None;
  const bool extends_launch_op = own_launch_op && op.continues_op && pending_cpu_op_ && pending_cpu_op_->launch &&
                                 pending_cpu_op_->end == op_start;
  const bool in_open_op = continues || extends_launch_op;
  // A range that closes here is recorded before the op it holds, so that on the same extent
  // (no host time between them) the range stays the parent (Trace::finalize keeps the order
  // of ties).
  const bool pops = op.kind == OpKind::RangePop;
  if (!in_open_op) {
    if (!pops) flush_cpu_op();
    if (opens)
      pending_cpu_op_ = PendingCpuOp{op.name, op_start, op_start, next_external_id_++, false, {}, 0, 0, 0, false};
    else if (own_launch_op) {
      pending_cpu_op_ = PendingCpuOp{
          detail::launch_op_name(op), before_start, op_start, next_external_id_++, true, {}, 0, 0, 0, false};
      // Inside it, the aten:: op that dispatches the launch, as torch.profiler nests them
      // (none when the op is itself one: an unnamed copy's aten::copy_).
      std::string aten = pending_cpu_op_->name.rfind("aten::", 0) == 0 ? "" : detail::aten_op_for_launch(op);
      if (!aten.empty()) {
        pending_cpu_op_->aten = std::move(aten);
        pending_cpu_op_->aten_start = op_start;
        pending_cpu_op_->aten_id = next_external_id_++;
      }
    }
  }
  const bool in_aten = own_launch_op && pending_cpu_op_ && !pending_cpu_op_->aten.empty();
  if (in_aten) pending_cpu_op_->in_aten = true;
  switch (op.kind) {
    case OpKind::HostWork:
      if (!op.name.empty() && h_ > op_start) range(RangeKind::CpuOp, op.name, op_start, h_);
      break;
    case OpKind::RangePush: open_ranges_.emplace_back(op.name, h_); break;
    case OpKind::RangePop: {
      auto [name, start] = open_ranges_.back();
      open_ranges_.pop_back();
      range(RangeKind::NvtxPushPop, name, start, h_);
      if (!in_open_op) flush_cpu_op();
      break;
    }
    case OpKind::Kernel:
    case OpKind::Memset: launch(i); break;
    case OpKind::Copy: copy(i); break;
    case OpKind::EventRecord: record_event(i); break;
    case OpKind::StreamWait: wait_event(i); break;
    case OpKind::StreamSync:
    case OpKind::DeviceSync:
    case OpKind::EventSync: host_sync(i); break;
  }
  if (pending_cpu_op_ && (in_open_op || opens || own_launch_op)) pending_cpu_op_->end = h_;
  if (in_aten) {
    pending_cpu_op_->aten_end = h_;
    pending_cpu_op_->in_aten = false;
  }
}

// ---- GPU queues ----

Item Simulation::item_for(std::size_t i, ItemKind kind) {
  Item it;
  it.kind = kind;
  it.stream = prog_.ops[i].stream;
  it.op = i;
  it.correlation = next_corr_++;
  return it;
}

// Implicit ordering with the legacy default stream (see the header).
std::vector<std::size_t> Simulation::implicit_deps(int stream) {
  std::vector<std::size_t> deps;
  if (is_legacy_default(prog_, stream)) {
    for (int s = 1; s < nstreams_; ++s)
      if (!prog_.streams[static_cast<std::size_t>(s)].non_blocking)
        if (auto t = gpu_.tail(s)) deps.push_back(*t);
  } else if (!prog_.streams[static_cast<std::size_t>(stream)].non_blocking && is_legacy_default(prog_, 0)) {
    if (auto t = gpu_.tail(0)) deps.push_back(*t);
  }
  return deps;
}

// Enqueues one item; returns its index.
std::size_t Simulation::enqueue(Item it, double call_start) {
  auto deps = implicit_deps(it.stream);
  it.deps.insert(it.deps.end(), deps.begin(), deps.end());
  it.ready = call_start + (it.kind == ItemKind::Copy && p_.copy_latency_ns > 0 ? p_.copy_latency_ns : latency_);
  return gpu_.submit(std::move(it));
}

// ---- launch ----

void Simulation::launch(std::size_t i) {
  const Op& op = prog_.ops[i];
  const bool kernel = op.kind == OpKind::Kernel;
  Item it = item_for(i, kernel ? ItemKind::Kernel : ItemKind::Memset);
  const std::uint64_t corr = it.correlation;
  it.work = duration_[i];
  it.demand = it.work > 0 ? op.bytes / it.work : 0;
  emitted_.push_back({enqueue(std::move(it), h_), i, open_external_id()});
  api(kernel ? "cudaLaunchKernel" : "cudaMemsetAsync", kernel ? kCbidLaunchKernel : kCbidMemsetAsync, h_,
      h_ + overhead_, corr);
  h_ += overhead_;
}

void Simulation::record_event(std::size_t i) {
  const Op& op = prog_.ops[i];
  Item it = item_for(i, ItemKind::Marker);
  const std::uint64_t corr = it.correlation;
  it.record_event = op.event;
  const std::size_t idx = enqueue(std::move(it), h_);
  last_record_[static_cast<std::size_t>(op.event)] = idx;
  emitted_.push_back({idx, i, open_external_id()});
  api("cudaEventRecord", kCbidEventRecord, h_, h_ + overhead_, corr);
  h_ += overhead_;
}

void Simulation::wait_event(std::size_t i) {
  const Op& op = prog_.ops[i];
  Item it = item_for(i, ItemKind::Marker);
  const std::uint64_t corr = it.correlation;
  if (auto rec = last_record_[static_cast<std::size_t>(op.event)]) it.deps.push_back(*rec);
  enqueue(std::move(it), h_);
  api("cudaStreamWaitEvent", kCbidStreamWaitEvent, h_, h_ + overhead_, corr);
  sync_record(SyncType::StreamWaitEvent, op.stream, h_, h_ + overhead_, corr, op.event);
  h_ += overhead_;
}

// ---- copy engines ----

void Simulation::copy(std::size_t i) {
  const Op& op = prog_.ops[i];
  Item it = item_for(i, ItemKind::Copy);
  const std::uint64_t corr = it.correlation;
  it.work = duration_[i];
  it.engine = op.copy == CopyKind::HtoD ? Engine::H2D : op.copy == CopyKind::DtoH ? Engine::D2H : Engine::Compute;
  it.is_copy_like = op.copy != CopyKind::DtoD;
  // Device-memory traffic: a device-to-device copy reads and writes it; a host copy
  // writes (H2D) or reads (D2H) it once, or both when host memory is that memory.
  const double touches = (op.copy == CopyKind::DtoD || p_.unified_memory) ? 2.0 : 1.0;
  it.demand = it.work > 0 ? touches * op.bytes / it.work : 0;
  const std::size_t idx = enqueue(std::move(it), h_);
  emitted_.push_back({idx, i, open_external_id()});
  const double call = h_;
  double end = h_ + overhead_;
  if (op.copy != CopyKind::DtoD && op.host_memory == MemoryKind::Pageable) {
    // Staged through a driver buffer: the call returns when the copy is done.
    gpu_.run_until([&] { return gpu_.item(idx).done; });
    end = std::max(end, gpu_.item(idx).end);
  }
  api("cudaMemcpyAsync", kCbidMemcpyAsync, call, end, corr);
  h_ = end;
}

// ---- sync waits ----

void Simulation::host_sync(std::size_t i) {
  const Op& op = prog_.ops[i];
  const std::uint64_t corr = next_corr_++;
  const double call = h_;
  double drained = h_;
  if (op.kind == OpKind::StreamSync) {
    drained = gpu_.run_until([&] { return gpu_.drained(op.stream); });
  } else if (op.kind == OpKind::DeviceSync) {
    drained = gpu_.run_until([&] { return gpu_.all_drained(); });
  } else if (auto rec = last_record_[static_cast<std::size_t>(op.event)]) {
    drained = gpu_.run_until([&] { return gpu_.item(*rec).done; });
  }
  const double end = std::max(call, drained) + round_trip_;
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
  h_ = end;
}

// ---- the GPU's records ----

Trace Simulation::finish() {
  gpu_.run_until([&] { return gpu_.all_drained(); });
  emit_gpu_records();
  trace_.finalize();
  return std::move(trace_);
}

void Simulation::emit_gpu_records() {
  for (const auto& e : emitted_) {
    const Item& it = gpu_.item(e.item);
    const Op& op = prog_.ops[e.op];
    const std::int64_t stream = trace_stream_id(prog_, it.stream);
    switch (it.kind) {
      case ItemKind::Kernel: {
        Kernel k;
        k.name = trace_.intern(op.name.empty() ? "kernel" : op.name);
        k.device = opt_.device;
        k.stream = stream;
        k.start = round_ns(it.start, p_, kGpuFields);
        k.end = std::max(k.start, round_ns(it.end, p_, kGpuFields));
        k.correlation = it.correlation;
        k.external_id = e.external_id;
        trace_.kernels.push_back(k);
        break;
      }
      case ItemKind::Memset: {
        Memset m;
        m.bytes = static_cast<std::uint64_t>(op.bytes);
        m.memory_kind = MemoryKind::Device;
        m.async = true;
        m.device = opt_.device;
        m.stream = stream;
        m.start = round_ns(it.start, p_, kGpuFields);
        m.end = std::max(m.start, round_ns(it.end, p_, kGpuFields));
        m.correlation = it.correlation;
        m.external_id = e.external_id;
        trace_.memsets.push_back(m);
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
        m.device = opt_.device;
        m.stream = stream;
        m.start = round_ns(it.start, p_, kGpuFields);
        m.end = std::max(m.start, round_ns(it.end, p_, kGpuFields));
        m.correlation = it.correlation;
        m.external_id = e.external_id;
        trace_.memcpys.push_back(m);
        break;
      }
      case ItemKind::Marker: {
        if (it.record_event < 0) break;
        CudaEventRecord r;
        r.device = opt_.device;
        r.stream = stream;
        r.event_id = static_cast<std::uint64_t>(it.record_event + 1);
        r.event_sync_id = it.correlation;
        r.timestamp = round_ns(it.end, p_, kGpuFields);
        r.correlation = it.correlation;
        trace_.cuda_events.push_back(r);
        break;
      }
    }
  }
}

}  // namespace

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

Trace simulate(const Program& prog, const model::GpuProfile& p, const SimOptions& opt) {
  SYNCSCOPE_INPUT_ERROR_IF(prog.streams.empty(), "simulator: program " + prog.name + " has no streams");
  SYNCSCOPE_INPUT_ERROR_IF(opt.steps < 1, "simulator: steps must be at least 1");
  check_program(prog);
  require_positive(p, p.launch_overhead_ns, "launch_overhead_ns");
  require_positive(p, p.sync_round_trip_ns, "sync_round_trip_ns");
  // Before allocating: what this simulation will hold, against what the machine has.
  bounds::check_memory(simulation_bytes(prog.ops.size(), opt.steps),
                       fmt::format("simulating program {} ({} ops) for {} step(s)", prog.name, prog.ops.size(),
                                   opt.steps),
                       "simulate fewer steps (measure.repeat_steps, --repeats) or a smaller shape");
  Simulation sim(prog, p, opt);
  for (int step = 0; step < opt.steps; ++step) sim.run_step(step);
  return sim.finish();
}

}  // namespace syncscope::sim
