// A training step as a program of host-issued operations: the schedule each variant
// follows, in the order the host thread issues it. One source of truth for three users:
// the real LibTorch steps follow it for their copy/event choreography, the CPU schedule
// checker proves buffer-safety invariants over it, and the simulator (model/src/sim)
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

struct Op {
  OpKind kind = OpKind::Kernel;
  std::string name;       // kernel / range / API name as a trace would show it
  int stream = 0;         // index into Program::streams
  int event = -1;         // event index for EventRecord/StreamWait/EventSync
  double flops = 0;       // Kernel: floating-point operations
  double bytes = 0;       // Kernel: device-memory bytes moved; Copy/Memset: bytes
  CopyKind copy = CopyKind::Unknown;
  MemoryKind host_memory = MemoryKind::Unknown;  // Copy: pinned or pageable host side
  bool bf16 = true;       // Kernel: tensor-core bf16 rate (else fp32 rate)
  Ns host_ns = 0;         // HostWork duration; for other ops extra host time beyond launch
  int buffer = -1;        // device buffer touched (schedule checker); -1 none
  Access access = Access::None;
  int layer = -1;         // layer index, for attribution
};

struct Stream {
  std::string name;       // "main", "copy"
  bool non_blocking = true;
};

struct Program {
  std::string name;       // e.g. "qwen3-0.6b/packing=cached"
  std::vector<Stream> streams{{"main", false}};
  int num_events = 0;
  int num_buffers = 0;
  std::vector<Op> ops;
};

}  // namespace syncscope::program
