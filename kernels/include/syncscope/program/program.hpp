// A training step as a program of host-issued operations: the schedule each variant
// follows, in the order the host thread issues it. One source of truth for three users:
// the real LibTorch steps follow it for their copy/event choreography, the CPU schedule
// checker proves buffer-safety invariants over it, and the simulator (model/sim/src)
// executes it against a GPU profile. Torch-free and CUDA-free: it builds everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/scenario/scenario.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::program {

enum class OpKind : std::uint8_t {
  Kernel,       // GPU work on `stream`; cost from flops and bytes (roofline)
  Copy,         // memcpy on `stream`: `bytes`, `copy`, host side `host_memory`
  Memset,       // memset on `stream`: `bytes`
  HostWork,     // host CPU time `host_ns` (framework dispatch, metadata built on the host)
  StreamSync,   // host blocks until `stream` drains (cudaStreamSynchronize)
  DeviceSync,   // host blocks until every stream drains (cudaDeviceSynchronize)
  EventRecord,  // record `event` on `stream`
  StreamWait,   // `stream` waits for the last record of `event` (cudaStreamWaitEvent)
  EventSync,    // host blocks until `event` completes (cudaEventSynchronize)
  RangePush,    // NVTX/user range `name` opens on the host
  RangePop,     // the innermost open range closes
};

enum class Access : std::uint8_t { None, Read, Write };

// A further buffer an op touches (a copy reads one buffer and writes another).
struct BufferUse {
  int buffer = -1;
  Access access = Access::None;
};

// How an op shows in a trace's CPU-op ranges (torch.profiler's ranges around framework
// ops), decided where the program is built: the simulator draws the ranges from it.
enum class CpuOp : std::uint8_t {
  None,       // no CPU-op range of its own (kernels, launches, NVTX ranges, runtime calls)
  Opens,      // a framework op ("aten::item ..."): a CPU-op range named like the op opens here
  Continues,  // a runtime call the framework op before it issues (aten::item's
              // cudaStreamSynchronize): it extends that op's range when it follows at once
};

struct Op {
  OpKind kind = OpKind::Kernel;
  std::string name;  // kernel / range / API name as a trace would show it
  int stream = 0;    // index into Program::streams
  int event = -1;    // event index for EventRecord/StreamWait/EventSync
  double flops = 0;  // Kernel: floating-point operations
  double bytes = 0;  // Kernel: device-memory bytes moved; Copy/Memset: bytes
  CopyKind copy = CopyKind::Unknown;
  MemoryKind host_memory = MemoryKind::Unknown;  // Copy: pinned or pageable host side
  bool bf16 = true;                              // Kernel: tensor-core bf16 rate (else fp32 rate)
  Ns host_ns = 0;                                // HostWork duration; for other ops extra host time beyond launch
  int buffer = -1;                               // device buffer touched (schedule checker); -1 none
  Access access = Access::None;
  int layer = -1;  // layer index, for attribution
  // Issued by the same framework op as the launch before it (a GEMM's split-K reduce after
  // its main kernel): the simulator charges a fitted profile's host cost per op once per op.
  bool continues_op = false;
  CpuOp cpu_op = CpuOp::None;  // the CPU-op range this op opens or extends (above)
  // Issued once every `period` steps, on the steps s (counted from 0 across a run) with
  // (s + 1) % period == 0; 1: every step. A trainer's logging every N steps
  // (fixes/logging): its read-back runs on the last step of each window of N.
  int period = 1;
  // Further buffers touched beyond `buffer`/`access` (e.g. a copy's source and target).
  // A HostWork op with a Write access marks a buffer handed back to the caching allocator
  // of `stream`: work queued on `stream` afterwards may overwrite it.
  std::vector<BufferUse> more_buffers;
};

struct Stream {
  std::string name;  // "main", "copy"
  bool non_blocking = true;
};

struct Program {
  std::string name;  // e.g. "qwen3-0.6b/packing=cached"
  std::vector<Stream> streams{{"main", false}};
  int num_events = 0;
  int num_buffers = 0;
  std::vector<Op> ops;
  std::vector<std::string> buffer_names;  // optional, by buffer index (diagnostics)
  std::vector<std::string> event_names;   // optional, by event index (diagnostics)
};

// A buffer hazard that some legal timing exhibits: `later` (in host issue order) may start
// before `earlier`, which touches the same buffer, has finished.
struct BufferViolation {
  enum class Kind : std::uint8_t { WriteAfterRead, ReadAfterWrite, WriteAfterWrite };
  Kind kind = Kind::WriteAfterRead;
  int buffer = -1;
  int earlier = -1;     // op index
  int later = -1;       // op index
  std::string message;  // names the buffer, both ops and the missing ordering
};

// The schedule checker. A happens-before analysis over host issue order, stream order,
// the legacy default stream's implicit ordering against blocking streams (a stream with
// non_blocking=false at index 0 is the legacy default stream), events (a wait sees the
// record issued last before it) and host syncs (StreamSync, DeviceSync, EventSync, and
// copies into pageable memory, which return only when done). Kernel and copy durations are
// left free, so an empty result means: under ANY legal timing, no op that writes a buffer
// starts before every earlier op that reads or writes it has finished, and no op reads a
// buffer before the earlier write to it has finished. Throws Error on a malformed program
// (stream/event/buffer index out of range, RangePop without RangePush).
std::vector<BufferViolation> check_buffer_safety(const Program& program);

// Counts over a program, for tests and summaries.
struct ProgramStats {
  int kernels = 0;
  int copies = 0;
  int host_syncs = 0;  // blocking host calls: StreamSync + DeviceSync + EventSync
  // The same per step over a long run: an op issued every `period` steps counts 1/period.
  double mean_host_syncs = 0;
  int pageable_copies = 0;  // copies with a pageable host side (D2H ones block the host)
  int stream_syncs = 0;     // StreamSync only
  int event_records = 0;
  int stream_waits = 0;
  double flops = 0;
  double kernel_bytes = 0;
  double copy_bytes = 0;
};
ProgramStats program_stats(const Program& program);

const char* op_kind_name(OpKind kind);

}  // namespace syncscope::program
