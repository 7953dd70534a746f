// One trace holding several ranks' processes (`nsys profile torchrun --nproc_per_node=N ...`
// writes every rank's process into one report) split into one trace per process with GPU work,
// so that what reads one trace per rank (the whole-job replay, the per-rank table) can read it.
//
// Rules (docs/replay.md, "One report holding several ranks"):
// - Host records (API calls, host ranges, overheads, memory events, track names) go by pid.
// - GPU records (kernels, copies, memsets, sync records, event records) carry no pid in the
//   model: each goes to the process of the host call with its correlation id. One with no such
//   call (or whose id two processes' calls share) goes to the process that owns its device: the
//   one process whose launches ran there. A device several processes ran on owns nothing: such a
//   record is left out, counted. Ownership comes from kernels, copies and memsets joined by
//   correlation only: sync records name a device the call did not run on in real exports (Nsight
//   Systems 2026.2 writes deviceId 0 for the second rank's; the nsys reader gives them their CUDA
//   context's device, other sources may not).
// - Processes with no GPU work (torchrun, wandb, nsys's own) are dropped, counted and named.
// - Every other field (metadata, reader warnings, device properties, stream names) is kept as
//   the reader gave it; correlation ids are kept as they are (unique across the file).
// - The rank: no Nsight Systems file says it (there is no distributedInfo). When each process
//   ran on exactly one device and those devices are 0..N-1, the device index is the rank
//   (torchrun's LOCAL_RANK selects the device on one node); else the order of the pids. A
//   warning says which rule gave it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/trace/trace.hpp"

namespace syncscope {

enum class RankRule : std::uint8_t { Device = 0, PidOrder = 1 };

struct ProcessTrace {
  std::int64_t pid = -1;
  std::string name;                   // the process's name in the trace ("" when none)
  std::int64_t rank = -1;             // by the split's RankRule
  std::vector<std::int32_t> devices;  // the devices its launches ran on, ascending
  Trace trace;
};

struct ProcessSplit {
  std::vector<ProcessTrace> processes;  // by rank
  RankRule rank_rule = RankRule::PidOrder;
  std::vector<std::int64_t> dropped_pids;  // processes with host records but no GPU work
  // GPU records whose correlation id names no host call (or a call of two processes) and whose
  // device no single process owns: in no output.
  std::uint64_t unassigned_gpu_records = 0;
  // Host records with no pid (-1) or of a dropped process: in no output (the dropped processes'
  // records are not counted here; they are in dropped_pids).
  std::uint64_t unassigned_host_records = 0;
  std::vector<std::string> warnings;  // the rank rule, what was dropped and why
};

// The pids of the processes with GPU work in `trace` (kernels, copies or memsets joined by
// correlation id to their host calls), ascending. Cheap: no record is copied. Two or more:
// the trace holds several ranks' processes and split_processes applies.
std::vector<std::int64_t> gpu_processes(const Trace& trace);

// gpu_processes(trace).size() >= 2, without its map of correlation ids where the host calls name
// fewer than two processes (every one-process trace: analyze and predict ask this of each file).
bool holds_several_processes(const Trace& trace);

// The split, by the rules above. Never throws on odd input: a trace whose processes cannot be
// told apart (no host call with a pid and a correlation id) gives no process, with a warning.
ProcessSplit split_processes(const Trace& trace);

// One line for people: "pid 144 (python3) as rank 0 (device 0)".
std::string describe(const ProcessTrace& p);

}  // namespace syncscope
