// The trace model: one in-memory form that every source fills (CUPTI live, Chrome/Kineto
// files, the simulator) and every analysis reads.
//
// Conventions
// - Every timestamp is integer nanoseconds on one clock (Trace::meta.clock explains which).
//   Intervals are half-open [start, end).
// - Names are interned in Trace::strings; records hold a StringId, so a trace with millions
//   of launches of a few hundred kernels stays small in memory.
// - Enum values that reach files (our JSON, CSV, binary form) are fixed: never renumber,
//   only append. kind_name()/parse_*() give their stable spellings.
// - Host threads are (pid, tid); GPU work is (device, stream). -1 means "not known".
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "syncscope/core/units.hpp"

namespace syncscope {

// Version of the trace model as written to our own files (Chrome JSON "syncscope" block,
// binary form). Bump when a field's meaning changes.
inline constexpr int kTraceSchemaVersion = 1;

using StringId = std::uint32_t;
inline constexpr StringId kNoString = 0;  // id 0 is always the empty string

// Interned strings. Ids are dense and stable for the table's lifetime; string_views
// returned by get() stay valid while the table lives (storage is a deque).
class StringTable {
 public:
  StringTable();
  // Copies rebuild the index: it holds views into this table's own storage.
  StringTable(const StringTable& other);
  StringTable& operator=(const StringTable& other);
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;
  StringId intern(std::string_view s);
  std::string_view get(StringId id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }
  std::optional<StringId> find(std::string_view s) const;

 private:
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, StringId> index_;
};

// ---- host API calls -------------------------------------------------------------------
enum class ApiKind : std::uint8_t { Runtime = 0, Driver = 1 };

// Values match CUPTI's CUpti_ActivityMemcpyKind where both have them, except PtoP/HtoH.
enum class CopyKind : std::uint8_t { Unknown = 0, HtoD = 1, DtoH = 2, DtoD = 3, PtoP = 4, HtoH = 5 };

struct ApiCall {
  ApiKind kind = ApiKind::Runtime;
  // A copy call's direction from its own arguments (HIP traces give hipMemcpyKind as "kind");
  // Unknown when the trace does not say. GPU copy records, joined by correlation, say it too.
  CopyKind copy_kind = CopyKind::Unknown;
  StringId name = kNoString;  // e.g. "cudaStreamSynchronize", "cuLaunchKernel"
  std::int32_t cbid = -1;     // CUPTI callback id when known
  std::int64_t pid = -1;
  std::int64_t tid = -1;
  Ns start = 0;
  Ns end = 0;
  std::uint64_t correlation = 0;  // links to the GPU activity it caused (0: none)
  std::uint64_t external_id = 0;  // PyTorch "External id" (links to the enclosing cpu_op)
  std::int32_t return_code = 0;   // cudaError_t / CUresult; 0 success
  std::int32_t device = -1;
};

// ---- GPU activity ---------------------------------------------------------------------
// The fields every GPU activity record has (kernel, copy, memset), as CUPTI's activity
// records and Kineto's "kernel"/"gpu_memcpy"/"gpu_memset" events give them. One struct so
// readers, writers and the CUPTI decoder fill and print them in one place.
struct GpuActivity {
  std::int32_t device = -1;
  std::uint32_t context = 0;
  std::int64_t stream = -1;
  Ns start = 0;
  Ns end = 0;
  std::uint64_t correlation = 0;  // links to the API call that launched it (0: none)
};

struct Kernel : GpuActivity {
  StringId name = kNoString;          // for display: demangled when the source gave a mangled name
  StringId mangled_name = kNoString;  // as the source gave it when it differs from `name`
  std::uint64_t external_id = 0;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::int32_t registers_per_thread = 0;
  std::int32_t shared_memory_bytes = 0;  // static + dynamic
  // A collective's process group (Kineto's "Process Group Name", PyTorch >= 2.2): kNoString when
  // the trace does not say.
  StringId process_group = kNoString;
};

// Values match CUPTI's CUpti_ActivityMemoryKind for pageable(1)/pinned(2)/device(3);
// managed is 4 here (CUPTI numbers it differently).
enum class MemoryKind : std::uint8_t { Unknown = 0, Pageable = 1, Pinned = 2, Device = 3, Managed = 4 };

struct Memcpy : GpuActivity {
  CopyKind kind = CopyKind::Unknown;
  MemoryKind src_kind = MemoryKind::Unknown;
  MemoryKind dst_kind = MemoryKind::Unknown;
  bool async = false;
  std::int32_t peer_device = -1;  // the other device for PtoP (`device` executes the copy)
  std::uint64_t bytes = 0;
  std::uint64_t external_id = 0;
};

struct Memset : GpuActivity {
  MemoryKind memory_kind = MemoryKind::Unknown;
  bool async = false;
  std::uint32_t value = 0;
  std::uint64_t bytes = 0;
  std::uint64_t external_id = 0;
};

// Values match CUPTI's CUpti_ActivitySynchronizationType.
enum class SyncType : std::uint8_t {
  Unknown = 0,
  EventSync = 1,
  StreamWaitEvent = 2,
  StreamSync = 3,
  ContextSync = 4,
};

// A synchronization record as CUPTI (or Kineto's "cuda_sync" category) reports it. These
// are evidence; the analyses define sync points from host API calls (see analysis.hpp).
struct SyncRecord {
  SyncType type = SyncType::Unknown;
  std::int32_t device = -1;
  std::uint32_t context = 0;
  std::int64_t stream = -1;          // -1 when not applicable (context sync)
  std::uint64_t event_id = 0;        // CUDA event handle id; reused by CUDA, do not join on it
  std::uint64_t event_sync_id = 0;   // cudaEventSyncId: joins with CudaEventRecord
  std::int64_t wait_on_stream = -1;  // for StreamWaitEvent when known (Kineto)
  Ns start = 0;                      // host-side start/end of the blocking call
  Ns end = 0;
  std::uint64_t correlation = 0;
  std::uint64_t external_id = 0;
  std::int32_t return_code = 0;
  bool is_query = false;  // produced by cudaEventQuery/cudaStreamQuery: never a sync point
  // Kineto "wait_on_cuda_event_record_corr_id": correlation id of the cudaEventRecord call
  // whose event this sync waits on (-1 when unknown or not an event sync).
  std::int64_t wait_on_event_record_correlation = -1;
};

// A cudaEventRecord as executed on a stream.
struct CudaEventRecord {
  std::int32_t device = -1;
  std::uint32_t context = 0;
  std::int64_t stream = -1;
  std::uint64_t event_id = 0;
  std::uint64_t event_sync_id = 0;
  Ns timestamp = 0;  // when known (device timestamp or the record call's time)
  std::uint64_t correlation = 0;
};

// ---- ranges ---------------------------------------------------------------------------
enum class RangeKind : std::uint8_t {
  NvtxPushPop = 0,
  NvtxStartEnd = 1,
  UserAnnotation = 2,     // torch record_function / ProfilerStep#N ("user_annotation")
  GpuUserAnnotation = 3,  // the same projected onto a stream ("gpu_user_annotation")
  CpuOp = 4,              // aten ops ("cpu_op")
  PythonFunction = 5,     // "python_function"
};

struct Range {
  RangeKind kind = RangeKind::UserAnnotation;
  StringId name = kNoString;
  StringId domain = kNoString;  // NVTX domain when known
  std::int64_t pid = -1;        // host ranges: process/thread
  std::int64_t tid = -1;
  std::int32_t device = -1;  // GpuUserAnnotation: device/stream
  std::int64_t stream = -1;
  Ns start = 0;
  Ns end = 0;
  std::int32_t depth = -1;  // nesting depth on its thread (0 outermost); -1 until computed
  std::uint64_t external_id = 0;
  std::uint64_t correlation = 0;
};

// ---- collectives ----------------------------------------------------------------------
// A collective's identity as PyTorch writes it (the keys of torch/csrc/distributed/c10d/
// ParamCommsUtils.hpp, filled by saveNcclMeta in torch/csrc/profiler/util.cpp): on the
// "record_param_comms" CPU op and, in newer PyTorch, also on the NCCL kernel it launched (the
// same "External id"). Kept as written, one entry per record that carries any of these args; the
// whole-job replay reads them (model/src/replay/job_match.cpp). -1/kNoString: not given.
struct CollectiveArgs {
  enum class On : std::uint8_t { Kernel = 0, CpuOp = 1 };
  On on = On::Kernel;
  std::uint64_t external_id = 0;       // "External id": the CPU op's, its launches' and their kernels'
  std::uint64_t correlation = 0;       // a kernel's correlation id (On::Kernel)
  std::int64_t seq = -1;               // "Seq": the collective's number in its process group (PyTorch >= 2.4)
  StringId process_group = kNoString;  // "Process Group Name": "0", "1", ... (the same on every rank)
  StringId group_desc = kNoString;     // "Process Group Description": "default_pg", ...
  StringId group_ranks = kNoString;    // "Process Group Ranks" as written: "[0, 1]", past 30 ranks "[0, 1, ..., 127]"
  std::int32_t group_size = -1;        // "Group size"
  StringId collective = kNoString;     // "Collective name": "allreduce", "broadcast", "send", ...
  StringId dtype = kNoString;          // "dtype": "Float", ...
  std::int64_t in_nelems = -1;         // "In msg nelems"
  std::int64_t out_nelems = -1;        // "Out msg nelems"
};

// ---- memory ---------------------------------------------------------------------------
// One allocation or free as torch.profiler records it with profile_memory=True (a "[memory]"
// instant event, PyTorch's profiler_kineto.cpp): the caching allocator's view, on the host
// thread that asked, at the time it asked. -1 means "not known" (the trace did not say, or
// said something physically impossible: the reader counts it, ReadWarning).
struct MemoryEvent {
  std::int64_t pid = -1;
  std::int64_t tid = -1;
  Ns timestamp = 0;
  std::int64_t bytes = 0;             // > 0 an allocation, < 0 a free ("Bytes"); 0 when not known
  std::int64_t total_allocated = -1;  // the allocator's bytes in use after it ("Total Allocated")
  std::int64_t total_reserved = -1;   // bytes it holds from the device ("Total Reserved")
  std::uint64_t address = 0;          // "Addr" (0: not known); joins a free to its allocation
  std::int32_t device_type = -1;      // c10::DeviceType as written: 0 CPU, 1 CUDA, ... ("Device Type")
  std::int32_t device = -1;           // "Device Id": -1 for host memory
};

// Sizes beyond this are not memory any machine has (1 PiB): the reader counts and drops them.
inline constexpr std::int64_t kMaxMemoryBytes = std::int64_t{1} << 50;

// ---- other records --------------------------------------------------------------------
struct OverheadRecord {
  StringId name = kNoString;  // e.g. "Activity Buffer Request", "CUPTI buffer flush"
  std::int64_t pid = -1;
  std::int64_t tid = -1;
  Ns start = 0;
  Ns end = 0;
};

// An event whose category we do not model. Kept (without args) so a conversion does not
// silently lose it, and counted in TraceMetadata::unknown_categories.
struct OtherEvent {
  StringId category = kNoString;
  StringId name = kNoString;
  char phase = 'X';
  StringId pid = kNoString;  // kept as text: Kineto uses strings such as "Spans" here
  StringId tid = kNoString;
  Ns start = 0;
  Ns duration = 0;
  // Flow events ("s", "t", "f") other than launch arrows (those follow from correlation ids):
  // Kineto's forward->backward arrows ("cat": "fwdbwd"), which Holistic Trace Analysis reads.
  StringId flow_id = kNoString;  // "id", as text (kNoString: none)
  bool bind_enclosing = false;   // "bp": "e" (the arrow binds to the enclosing slice)
};

struct DeviceProperties {
  std::int32_t id = 0;
  std::string name;
  std::int32_t compute_major = 0;
  std::int32_t compute_minor = 0;
  std::uint64_t total_memory_bytes = 0;
  std::int32_t sm_count = 0;
  std::int32_t max_threads_per_block = 0;
  std::int32_t max_threads_per_sm = 0;
  std::int32_t warp_size = 0;
  std::int32_t regs_per_block = 0;
  std::int32_t regs_per_sm = 0;
  std::int64_t shared_mem_per_block = 0;
  std::int64_t shared_mem_per_block_optin = 0;
  std::int64_t shared_mem_per_sm = 0;
};

enum class ClockBase : std::uint8_t {
  Unknown = 0,
  UnixEpoch = 1,  // ns since 1970 (Kineto with baseTimeNanoseconds, our tracer)
  Monotonic = 2,  // CLOCK_MONOTONIC-like, arbitrary origin
  Simulated = 3,  // the simulator's own clock, starting at 0
};

// Something a reader tolerated instead of rejecting the trace, counted once per (kind,
// category, field): an argument of a type it does not read (kept as text, not used), an
// event it skipped because a field the analyses need could not be read, a key given twice
// in one event (the last value is used).
struct ReadWarning {
  // ImplausibleValue: a value of the right type that cannot be (a memory size above
  // kMaxMemoryBytes); MissingField: a field the record wants is absent (left unknown).
  enum class Kind : std::uint8_t {
    ArgumentType = 0,
    SkippedEvent = 1,
    DuplicateKey = 2,
    ImplausibleValue = 3,
    MissingField = 4
  };
  Kind kind = Kind::ArgumentType;
  std::string category;           // the events' "cat" as written ("" when none)
  std::string field;              // "args.grid", "pid", ...
  std::string expected;           // what the reader reads there, e.g. "an integer"
  std::string example;            // the first value seen, as JSON text (at most 40 bytes)
  std::uint64_t first_event = 0;  // traceEvents index of the first occurrence
  std::uint64_t count = 0;
};

// One line for people: what, how often, where first, and what was done about it.
std::string describe(const ReadWarning& w);

struct TraceMetadata {
  std::string source_tool;     // "syncscope-tracer", "torch.profiler", "syncscope-sim", ...
  std::string source_version;  // e.g. CUPTI version, torch version
  std::string trace_name;
  int schema_version = kTraceSchemaVersion;  // of the model this trace was written with
  int source_schema_version = 0;             // e.g. Kineto "schemaVersion"
  std::uint64_t dropped_records = 0;         // records the producer reported lost
  ClockBase clock = ClockBase::Unknown;
  Ns base_time_ns = 0;  // Kineto baseTimeNanoseconds (ts in files are relative to it)
  std::map<std::string, std::uint64_t> unknown_categories;  // category -> events seen
  std::map<std::string, std::string> extra;                 // free-form provenance
  std::optional<std::int64_t> rank;        // distributedInfo.rank: the process's rank in a distributed job
  std::vector<ReadWarning> read_warnings;  // about the file read; not written back
  // What the reader counted but did not reject (rows with impossible times, no CUDA data);
  // shown with the analysis's warnings. Not written to files: a reading's notes, not data.
  std::vector<std::string> warnings;
};

// Names given to host processes/threads and GPU streams by "M" metadata events.
struct TrackName {
  std::string pid;  // as text, like OtherEvent
  std::string tid;  // empty for a process name
  std::string name;
};

// The other track metadata Kineto writes and trace viewers (and Holistic Trace Analysis's
// parser) read: "process_sort_index"/"thread_sort_index" ({"sort_index": N}) and
// "process_labels" ({"labels": "..."}). Kept so a conversion writes them back.
struct TrackOrder {
  enum class Kind : std::uint8_t { SortIndex = 0, Labels = 1 };
  Kind kind = Kind::SortIndex;
  std::string pid;  // as text, like TrackName
  std::string tid;  // empty: the process's (process_sort_index, process_labels)
  std::int64_t sort_index = 0;
  std::string labels;
};

struct Trace {
  TraceMetadata meta;
  StringTable strings;
  std::vector<DeviceProperties> devices;
  std::vector<ApiCall> api_calls;
  std::vector<Kernel> kernels;
  std::vector<Memcpy> memcpys;
  std::vector<Memset> memsets;
  std::vector<SyncRecord> syncs;
  std::vector<CudaEventRecord> cuda_events;
  std::vector<Range> ranges;
  std::vector<OverheadRecord> overheads;
  std::vector<OtherEvent> others;
  std::vector<MemoryEvent> memory;          // in time order, file order kept at equal times
  std::vector<CollectiveArgs> collectives;  // in file order
  std::vector<TrackName> track_names;
  std::vector<TrackOrder> track_order;

  std::string_view str(StringId id) const { return strings.get(id); }
  StringId intern(std::string_view s) { return strings.intern(s); }

  // Sorts every record vector by (start, end) and computes Range::depth per thread (or per
  // stream for GPU annotations). Readers call it once after loading; sources may too.
  void finalize();

  // Earliest start and latest end over all records; {0,0} when empty.
  std::pair<Ns, Ns> time_span() const;

  std::size_t record_count() const;
};

// Stable spellings of enum values, as written to files and shown to users.
std::string_view kind_name(ApiKind);
std::string_view kind_name(CopyKind);
std::string_view kind_name(MemoryKind);
std::string_view kind_name(SyncType);
std::string_view kind_name(RangeKind);
std::string_view kind_name(ClockBase);
std::optional<CopyKind> parse_copy_kind(std::string_view);
std::optional<MemoryKind> parse_memory_kind(std::string_view);
std::optional<SyncType> parse_sync_type(std::string_view);
std::optional<RangeKind> parse_range_kind(std::string_view);

}  // namespace syncscope
