// A discrete-event simulation of one host thread issuing a step Program to GPU streams and
// copy engines, for machines without a GPU. Its output is a Trace in our trace model, so
// the same analyses, fit and report run on simulated and measured steps.
//
// What it models (every rate and latency comes from the GpuProfile):
// - Host: each enqueueing call (cudaLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync,
//   cudaEventRecord, cudaStreamWaitEvent) costs launch_overhead_ns of host time, after the
//   op's own host_ns (framework dispatch). Work becomes runnable launch_latency_ns after
//   the call starts (a fitted profile's copy_latency_ns for copies). A profile fitted from
//   a trace (calibrate --from-trace) adds the framework's host time per op: before a launch
//   that starts an op (Op::continues_op false) its time up to the call (host_launch_op_ns,
//   or the fitted kernel's own figure, + plain_ops_per_launch_op * host_op_ns), and its
//   time after the call when the next op starts or a range opens or closes; host_range_ns
//   at each range push and pop and at each step's end. So an eager-Python profile runs the
//   host as slowly as the traced Python loop did and a C++ one as fast as LibTorch did.
// - Kernels: a roofline, max(flops / rate, bytes / dram_bytes_per_s), never below
//   SimOptions::min_kernel_ns (a fitted profile's kernel_floor_ns instead, and for a
//   kernel named like one the trace showed, never below that kernel's traced median).
//   Kernels on different streams run concurrently at full rate (no SM sharing: programs
//   here have one compute stream and copy streams).
// - Copies: H2D and D2H each have one copy engine (FIFO in host issue order); duration
//   bytes / bandwidth of the host memory kind (pinned or pageable), never below
//   SimOptions::min_copy_ns (a fitted profile's copy_floor_ns instead; the pinned rate
//   stands in for a pageable rate the profile lacks). A pageable copy blocks the host
//   until it completes, as
//   cudaMemcpyAsync with pageable host memory does. Device-to-device copies run like a
//   memory-bound kernel (2 x bytes over dram bandwidth: read and write).
// - Device memory is shared: each running item wants bytes / duration of DRAM bandwidth
//   (a kernel its roofline bytes; a device-to-device copy twice its bytes; a host copy its
//   bytes once on a discrete GPU, twice on a unified-memory one, where host and device
//   memory are the same DRAM). When the sum exceeds dram_bytes_per_s, every running item
//   slows by dram / sum. So two memory-bound kernels side by side take twice as long, and
//   on GB10 (H2D at half the DRAM rate) a reload beside a memory-bound kernel halves both.
// - Interference beyond bandwidth: while a copy runs, kernels progress at
//   1 / (1 + copy_compute_slowdown) of their rate (a fitted profile value); on
//   unified-memory GPUs copies slow by the same factor while a kernel runs.
// - Syncs: cudaStreamSynchronize / cudaEventSynchronize / cudaDeviceSynchronize block the
//   host until the stream / event / device drains, then cost sync_round_trip_ns more (an
//   idle stream costs exactly the round trip, the profile's definition).
// - Streams run their work in issue order; cudaStreamWaitEvent makes a stream wait for the
//   event's most recent record at the time of the call (none recorded: no wait). A stream
//   created without cudaStreamNonBlocking synchronizes implicitly with the legacy default
//   stream (stream 0 when it is blocking), both ways, as CUDA's legacy semantics do.
// - Ranges: RangePush/RangePop become NVTX push/pop ranges on the host thread. An op the
//   program marks as a framework op (Op::cpu_op Opens, e.g. "aten::item lengths.max()")
//   becomes a CPU-op range named like it over its host time, extended over the runtime
//   calls right after it that the program marks as its own (Continues: its
//   cudaStreamSynchronize), so the analyses attribute a sync to its cause as in
//   torch.profiler traces; named HostWork with a duration becomes a CPU-op range too.
// The code follows these parts: host issue, launch, the GPU's stream queues and copy
// engines (model/sim/src/gpu_queues.hpp), sync waits, then the GPU's records.
// Deterministic: the same program and profile always give the same trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::sim {

inline constexpr const char* kSimSourceTool = "syncscope-sim";

struct SimOptions {
  // Issue the program this many times, each inside a host range named
  // step_range_prefix + N (N from first_step), unless the program has its own step ranges.
  int steps = 1;
  int first_step = 0;
  std::string step_range_prefix = "ProfilerStep#";
  // Smallest kernel / copy duration (ns): a launch's fixed cost on the GPU side. ~2 us for
  // a near-empty kernel and ~1 us for a tiny copy are typical of Hopper-class GPUs.
  Ns min_kernel_ns = 2000;
  Ns min_copy_ns = 1000;
  // Trace identity.
  std::int32_t device = 0;
  std::int64_t pid = 1;
  std::int64_t tid = 1;
};

// The duration a kernel/copy/memset op takes alone on the GPU (no interference), in ns.
Ns op_duration_ns(const program::Op& op, const model::GpuProfile& profile, const SimOptions& options = {});

// Stream id written to the trace for program stream `index` (CUDA's legacy default stream
// shows as 7 in CUPTI and Kineto traces; other streams 13, 14, ...).
std::int64_t trace_stream_id(const program::Program& program, int index);

// Bytes simulate() holds for a program of `ops_per_step` ops issued `steps` times: its
// work items and the trace it writes, and what analyze() adds to it. simulate() refuses
// (InputError with this estimate) a simulation that needs more than the machine has
// available (MemAvailable), before allocating.
double simulation_bytes(std::uint64_t ops_per_step, int steps);

// The profile with a C++ host (a scenario's `host: cpp`): no host time per framework op or
// range boundary beyond the runtime calls themselves (launch_overhead_ns per launch), the
// fitted kernels' own host figures cleared too. A labelled assumption, not a measurement
// (LibTorch's C++ dispatch is not free, only far cheaper than eager Python's); recorded in
// provenance as host_costs so traces and results say which host ran.
model::GpuProfile with_cpp_host(model::GpuProfile profile);

// Runs the program; throws InputError for an inconsistent program (a stream or event index
// out of range, RangePop without RangePush, a copy without a direction), for a profile
// value that makes a time overflow (naming the field), and for a simulation too large for
// the memory available.
Trace simulate(const program::Program& program, const model::GpuProfile& profile, const SimOptions& options = {});

}  // namespace syncscope::sim
