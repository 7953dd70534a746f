// The names of the Chrome trace format in Kineto's (torch.profiler's) conventions, in one
// place for the reader and the writer: event categories, event keys, argument keys, flow
// arrows, top-level keys, device properties, and the keys of the "syncscope" blocks our
// writer adds for what Kineto has no field for.
//
// Sources: libkineto's ActivityType.cpp (category names), output_json.cpp, CuptiActivity.cpp
// and RoctracerActivity_inl.h (argument names; ROCm builds write HIP calls as "cuda_runtime"
// with "kind" and "stream" as text), the TensorBoard profiler plugin's trace.py EventTypeMap and
// test traces (2021's categories "Kernel", "Runtime", "Memcpy", "Memset", "Operator", the
// lower-case "external id", GPU tids written "stream 7").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace syncscope::io_detail::schema {

// ---- lookup of a name in a small table ---------------------------------------------------
// Table entries grouped by length and first byte at compile time (make_index below); a lookup
// compares only the few entries of that bucket, word by word, inlined (keys are looked up
// millions of times per file).
// Whole words, the last one overlapping, and two overlapping loads below 8 bytes: no loop
// over single bytes (event keys are 2-4 bytes long; a byte loop there was ~4% of read_trace
// in perf, mostly mispredicted branches on its varying trip count).
template <class W>
inline W load_word(const char* p) {
  W w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
inline bool same_bytes(const char* a, const char* b, std::size_t n) {
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8)
      if (load_word<std::uint64_t>(a + i) != load_word<std::uint64_t>(b + i)) return false;
    return load_word<std::uint64_t>(a + n - 8) == load_word<std::uint64_t>(b + n - 8);
  }
  if (n >= 4)
    return load_word<std::uint32_t>(a) == load_word<std::uint32_t>(b) &&
           load_word<std::uint32_t>(a + n - 4) == load_word<std::uint32_t>(b + n - 4);
  if (n >= 2)
    return load_word<std::uint16_t>(a) == load_word<std::uint16_t>(b) &&
           load_word<std::uint16_t>(a + n - 2) == load_word<std::uint16_t>(b + n - 2);
  return n == 0 || *a == *b;
}

inline constexpr std::size_t kMaxNameLength = 40;

// Buckets by length and the first byte's low 5 bits: most keys share a bucket with no other
// entry, so a lookup is one compare (keys of one length, compared in turn, cost a
// mispredicted branch per key: ~3% of read_trace in perf).
inline constexpr std::size_t kNameBuckets = (kMaxNameLength + 1) * 32;
constexpr std::size_t name_bucket(std::string_view name) {
  return name.size() * 32 + (name.empty() ? 0 : (static_cast<unsigned char>(name[0]) & 31u));
}

template <std::size_t N>
struct NameIndex {
  static_assert(N < 256, "entry numbers are 8-bit");
  std::array<std::uint8_t, kNameBuckets + 1> first{};  // bucket b's entries: order[first[b] .. first[b+1])
  std::array<std::uint8_t, N> order{};
};

template <class Entry, std::size_t N>
constexpr NameIndex<N> make_index(const Entry (&table)[N]) {
  NameIndex<N> idx;
  std::array<std::size_t, kNameBuckets + 1> count{};
  for (std::size_t i = 0; i < N; ++i)
    if (table[i].name.size() <= kMaxNameLength) ++count[name_bucket(table[i].name) + 1];
  for (std::size_t b = 0; b < kNameBuckets; ++b) count[b + 1] += count[b];
  for (std::size_t b = 0; b <= kNameBuckets; ++b) idx.first[b] = static_cast<std::uint8_t>(count[b]);
  for (std::size_t i = 0; i < N; ++i)  // in table order within a bucket
    if (table[i].name.size() <= kMaxNameLength)
      idx.order[count[name_bucket(table[i].name)]++] = static_cast<std::uint8_t>(i);
  return idx;
}

// Index of `key` in `table`, or -1.
template <class Entry, std::size_t N>
inline int find_name(const Entry (&table)[N], const NameIndex<N>& idx, std::string_view key) {
  if (key.size() > kMaxNameLength) return -1;
  const std::size_t b = name_bucket(key);
  for (std::size_t k = idx.first[b]; k < idx.first[b + 1]; ++k) {
    const auto i = idx.order[k];
    if (same_bytes(table[i].name.data(), key.data(), key.size())) return i;
  }
  return -1;
}

// An entry of a name table: the spelling and what it stands for.
template <class V>
struct Named {
  std::string_view name;
  V value;
};

// What `key` stands for in `table`, or `missing`.
template <class Entry, std::size_t N, class V>
inline V value_of(const Entry (&table)[N], const NameIndex<N>& idx, std::string_view key, V missing) {
  const int i = find_name(table, idx, key);
  return i < 0 ? missing : table[i].value;
}

// The first spelling of `v` in `table` (the one we write).
template <class Entry, std::size_t N, class V>
constexpr std::string_view name_of(const Entry (&table)[N], V v) {
  for (const auto& e : table)
    if (e.value == v) return e.name;
  return "";
}

// ---- event categories ("cat") ---------------------------------------------------------------
enum class Cat : std::uint8_t {
  Other,
  Kernel,
  Memcpy,
  Memset,
  Runtime,
  Driver,
  Sync,
  CudaEvent,
  UserAnnotation,
  GpuUserAnnotation,
  CpuOp,
  PythonFunction,
  Overhead,
  // torch.profiler's profile_memory events: ph "i", name "[memory]", cat "cpu_instant_event"
  // (none in Kineto of 2021). Not in kCategories: "cpu_instant_event" also holds other
  // instants ("[OutOfMemory]"), so the reader picks memory events by name (kMemoryEventName).
  Memory,
};

inline constexpr Named<Cat> kCategories[] = {
    {"kernel", Cat::Kernel},
    {"gpu_memcpy", Cat::Memcpy},
    {"gpu_memset", Cat::Memset},
    {"cuda_runtime", Cat::Runtime},  // also HIP runtime calls in ROCm builds of PyTorch
    {"cuda_driver", Cat::Driver},
    {"cuda_sync", Cat::Sync},
    {"cuda_event", Cat::CudaEvent},
    {"user_annotation", Cat::UserAnnotation},
    {"gpu_user_annotation", Cat::GpuUserAnnotation},
    {"cpu_op", Cat::CpuOp},
    {"python_function", Cat::PythonFunction},
    {"overhead", Cat::Overhead},
    // Kineto of 2021 (PyTorch 1.8-1.9), read and written as today's names.
    {"Kernel", Cat::Kernel},
    {"Memcpy", Cat::Memcpy},
    {"Memset", Cat::Memset},
    {"Runtime", Cat::Runtime},
    {"Operator", Cat::CpuOp},
};
inline constexpr auto kCategoryIndex = make_index(kCategories);

inline Cat category_of(std::string_view c) { return value_of(kCategories, kCategoryIndex, c, Cat::Other); }
// The spelling we write: today's Kineto name (the first in the table).
constexpr std::string_view category_name(Cat c) { return name_of(kCategories, c); }

// ---- event keys --------------------------------------------------------------------------
enum class Key : std::uint8_t { Unknown, Ph, Cat, Name, Pid, Tid, Ts, Dur, Args, Id, Bp };
inline constexpr Named<Key> kEventKeys[] = {
    {"ph", Key::Ph}, {"cat", Key::Cat}, {"name", Key::Name}, {"pid", Key::Pid}, {"tid", Key::Tid},
    {"ts", Key::Ts}, {"dur", Key::Dur}, {"args", Key::Args}, {"id", Key::Id},   {"bp", Key::Bp},
};
inline constexpr auto kEventKeyIndex = make_index(kEventKeys);
inline Key event_key(std::string_view k) { return value_of(kEventKeys, kEventKeyIndex, k, Key::Unknown); }
constexpr std::string_view key_name(Key k) { return name_of(kEventKeys, k); }

// ---- argument keys ("args") ----------------------------------------------------------------
enum class Arg : std::uint8_t {
  Unknown,
  Device,
  Context,
  Stream,
  Correlation,
  ExternalId,
  Grid,
  Block,
  Registers,
  SharedMemory,
  Bytes,
  Bandwidth,
  Cbid,
  SyncKind,
  WaitOnStream,
  WaitOnCorr,
  WaitOnEventId,
  EventId,
  InDevice,
  FromDevice,
  ToDevice,
  InContext,
  Name,
  Kind,
  SortIndex,
  Labels,
  ProcessGroup,
  // A profile_memory event's (PyTorch's profiler_kineto.cpp, kineto_events memory records).
  TotalAllocated,
  TotalReserved,
  MemBytes,  // "Bytes": signed, a free is negative (lower-case "bytes" is a copy's count)
  Addr,
  DeviceType,  // c10::DeviceType (0 CPU, 1 CUDA, ...)
  DeviceId,
  // A collective's identity (trace.hpp, CollectiveArgs), on record_param_comms and its kernel.
  Seq,
  GroupDesc,
  GroupRanks,
  GroupSize,
  CollectiveName,
  InNelems,
  OutNelems,
  Dtype,
  Syncscope,
};
inline constexpr std::size_t kArgCount = static_cast<std::size_t>(Arg::Syncscope) + 1;
// Masks of arguments are 64-bit: there are more than 32 (static_assert below).
static_assert(kArgCount <= 64);
constexpr std::uint64_t bit(Arg a) { return std::uint64_t{1} << static_cast<unsigned>(a); }
constexpr std::uint32_t bit(Cat c) { return std::uint32_t{1} << static_cast<unsigned>(c); }

// How an argument is read.
// How an argument is read. Integers may be written as text: ids, streams and pointers as
// "0x1f" or "31" (ROCm writes streams so).
enum class ArgType : std::uint8_t {
  Int32,   // device numbers, counts: fits in 32 bits
  UInt32,  // contexts
  Int64,   // streams, signed ids
  UInt64,  // correlation and external ids, byte counts
  Triple,  // an array of 3 integers (grid, block)
  String,
  CopyKind,  // cudaMemcpyKind/hipMemcpyKind number (0 HtoH, 1 HtoD, 2 DtoH, 3 DtoD, 4 default) or "DtoH"
  Object,    // our own args.syncscope block
  Ignored,   // presentation only (bandwidth): written, never read
};
constexpr const char* expected_text(ArgType t) {
  switch (t) {
    case ArgType::Int32: return "a 32-bit integer";
    case ArgType::UInt32: return "a non-negative 32-bit integer";
    case ArgType::Int64: return "an integer";
    case ArgType::UInt64: return "a non-negative integer";
    case ArgType::Triple: return "an array of 3 integers";
    case ArgType::String: return "a string";
    case ArgType::CopyKind: return "a copy kind (0-4 or \"HtoD\", \"DtoH\", ...)";
    case ArgType::Object: return "an object";
    case ArgType::Ignored: break;
  }
  return "anything";
}

inline constexpr std::uint32_t kGpuActivity = bit(Cat::Kernel) | bit(Cat::Memcpy) | bit(Cat::Memset);
inline constexpr std::uint32_t kApiCalls = bit(Cat::Runtime) | bit(Cat::Driver);
inline constexpr std::uint32_t kRanges =
    bit(Cat::UserAnnotation) | bit(Cat::GpuUserAnnotation) | bit(Cat::CpuOp) | bit(Cat::PythonFunction);
inline constexpr std::uint32_t kSyncRecords = bit(Cat::Sync) | bit(Cat::CudaEvent);
// Records that carry a collective's identity: the NCCL kernel and the record_param_comms CPU op.
inline constexpr std::uint32_t kComms = bit(Cat::Kernel) | bit(Cat::CpuOp);
// Arguments that make a record's CollectiveArgs (trace.hpp).
inline constexpr std::uint64_t kCollectiveArgs = bit(Arg::ProcessGroup) | bit(Arg::Seq) | bit(Arg::GroupDesc) |
                                                 bit(Arg::GroupRanks) | bit(Arg::GroupSize) | bit(Arg::CollectiveName) |
                                                 bit(Arg::InNelems) | bit(Arg::OutNelems) | bit(Arg::Dtype);

struct ArgSpec {
  std::string_view name;
  Arg value;
  ArgType type;
  std::uint32_t read_by;    // categories whose records take the value: a bad one there is a warning
  std::uint32_t needed_by;  // categories that cannot place the event without it: skipped when bad
};
inline constexpr ArgSpec kArgs[] = {
    {"device", Arg::Device, ArgType::Int32, kGpuActivity | kApiCalls | kSyncRecords | bit(Cat::GpuUserAnnotation),
     kGpuActivity},
    {"context", Arg::Context, ArgType::UInt32, kGpuActivity | kSyncRecords, 0},
    {"stream", Arg::Stream, ArgType::Int64, kGpuActivity | kSyncRecords | bit(Cat::GpuUserAnnotation), kGpuActivity},
    {"correlation", Arg::Correlation, ArgType::UInt64, kGpuActivity | kApiCalls | kSyncRecords | kRanges, 0},
    {"External id", Arg::ExternalId, ArgType::UInt64, kGpuActivity | kApiCalls | bit(Cat::Sync) | kRanges, 0},
    {"external id", Arg::ExternalId, ArgType::UInt64, kGpuActivity | kApiCalls | bit(Cat::Sync) | kRanges, 0},
    {"grid", Arg::Grid, ArgType::Triple, bit(Cat::Kernel), 0},
    {"block", Arg::Block, ArgType::Triple, bit(Cat::Kernel), 0},
    {"registers per thread", Arg::Registers, ArgType::Int32, bit(Cat::Kernel), 0},
    {"shared memory", Arg::SharedMemory, ArgType::Int32, bit(Cat::Kernel), 0},
    {"bytes", Arg::Bytes, ArgType::UInt64, bit(Cat::Memcpy) | bit(Cat::Memset), 0},
    {"memory bandwidth (GB/s)", Arg::Bandwidth, ArgType::Ignored, 0, 0},
    {"cbid", Arg::Cbid, ArgType::Int32, kApiCalls, 0},
    {"cuda_sync_kind", Arg::SyncKind, ArgType::String, bit(Cat::Sync), 0},
    {"wait_on_stream", Arg::WaitOnStream, ArgType::Int64, bit(Cat::Sync), 0},
    {"wait_on_cuda_event_record_corr_id", Arg::WaitOnCorr, ArgType::Int64, bit(Cat::Sync), 0},
    {"wait_on_cuda_event_id", Arg::WaitOnEventId, ArgType::UInt64, bit(Cat::Sync), 0},
    {"event_id", Arg::EventId, ArgType::UInt64, bit(Cat::CudaEvent), 0},
    {"inDevice", Arg::InDevice, ArgType::Int32, bit(Cat::Memcpy), 0},
    {"fromDevice", Arg::FromDevice, ArgType::Int32, bit(Cat::Memcpy), 0},
    {"toDevice", Arg::ToDevice, ArgType::Int32, bit(Cat::Memcpy), 0},
    {"inContext", Arg::InContext, ArgType::UInt32, bit(Cat::Memcpy), 0},
    {"name", Arg::Name, ArgType::String, 0, 0},  // the payload of process_name/thread_name metadata
    {"kind", Arg::Kind, ArgType::CopyKind, kApiCalls | bit(Cat::Memcpy), 0},
    // The payloads of process_sort_index/thread_sort_index and process_labels metadata.
    {"sort_index", Arg::SortIndex, ArgType::Int64, 0, 0},
    {"labels", Arg::Labels, ArgType::String, 0, 0},
    // PyTorch >= 2.2 names a collective's process group on its NCCL kernel (ParamCommsUtils'
    // kProcessGroupName): the whole-job replay matches collectives by it where present.
    {"Process Group Name", Arg::ProcessGroup, ArgType::String, kComms, 0},
    // The rest of PyTorch's ParamCommsUtils.hpp keys, on record_param_comms and, in newer
    // PyTorch, its NCCL kernel: the whole-job replay matches by (group, Seq) where given. None is
    // needed: an odd one is counted and left unknown.
    {"Seq", Arg::Seq, ArgType::Int64, kComms, 0},
    {"Process Group Description", Arg::GroupDesc, ArgType::String, kComms, 0},
    {"Process Group Ranks", Arg::GroupRanks, ArgType::String, kComms, 0},
    {"Group size", Arg::GroupSize, ArgType::Int32, kComms, 0},
    {"Collective name", Arg::CollectiveName, ArgType::String, kComms, 0},
    {"In msg nelems", Arg::InNelems, ArgType::Int64, kComms, 0},
    {"Out msg nelems", Arg::OutNelems, ArgType::Int64, kComms, 0},
    {"dtype", Arg::Dtype, ArgType::String, kComms, 0},
    // profile_memory events: none is needed (an odd one is counted and left unknown).
    {"Total Allocated", Arg::TotalAllocated, ArgType::Int64, bit(Cat::Memory), 0},
    {"Total Reserved", Arg::TotalReserved, ArgType::Int64, bit(Cat::Memory), 0},
    {"Bytes", Arg::MemBytes, ArgType::Int64, bit(Cat::Memory), 0},
    {"Addr", Arg::Addr, ArgType::UInt64, bit(Cat::Memory), 0},
    {"Device Type", Arg::DeviceType, ArgType::Int32, bit(Cat::Memory), 0},
    {"Device Id", Arg::DeviceId, ArgType::Int32, bit(Cat::Memory), 0},
    {"syncscope", Arg::Syncscope, ArgType::Object, ~std::uint32_t{0}, 0},
};
// Per category, the arguments its records read and those it cannot do without.
struct ArgMasks {
  std::array<std::uint64_t, 16> read{}, needed{};
};
constexpr ArgMasks make_arg_masks() {
  ArgMasks m;
  for (std::size_t c = 0; c < m.read.size(); ++c)
    for (const auto& a : kArgs) {
      if (a.read_by & (std::uint32_t{1} << c)) m.read[c] |= bit(a.value);
      if (a.needed_by & (std::uint32_t{1} << c)) m.needed[c] |= bit(a.value);
    }
  return m;
}
inline constexpr ArgMasks kArgMasks = make_arg_masks();
inline constexpr auto kArgIndex = make_index(kArgs);
inline const ArgSpec* arg_spec(std::string_view key) {
  const int i = find_name(kArgs, kArgIndex, key);
  return i < 0 ? nullptr : &kArgs[i];
}
constexpr std::string_view arg_name(Arg a) { return name_of(kArgs, a); }

// ---- flows, metadata and instant events ------------------------------------------------------
// Launch -> GPU activity arrows: ph "s" on the API call, ph "f" with binding point "e" on the
// GPU activity, id = correlation id.
struct FlowNames {
  std::string_view category;  // also the name
  std::string_view id_key;
  std::string_view bind_point_key;
  std::string_view bind_enclosing;  // the arrow ends on the slice enclosing its timestamp
};
inline constexpr FlowNames kLaunchFlow{"ac2g", "id", "bp", "e"};
// "M" events naming tracks, and the scope key of instant ("i") events ("g" global, "t" thread).
inline constexpr std::string_view kProcessName = "process_name";
inline constexpr std::string_view kThreadName = "thread_name";
inline constexpr std::string_view kProcessSortIndex = "process_sort_index";
inline constexpr std::string_view kThreadSortIndex = "thread_sort_index";
inline constexpr std::string_view kProcessLabels = "process_labels";
inline constexpr std::string_view kBindEnclosing = "e";  // a flow's "bp": binds to the enclosing slice
inline constexpr std::string_view kInstantScopeKey = "s";
// torch.profiler's profile_memory events (ph "i"), and the category Kineto gives them.
inline constexpr std::string_view kMemoryEventName = "[memory]";
inline constexpr std::string_view kMemoryCategory = "cpu_instant_event";

// ---- top-level keys --------------------------------------------------------------------------
enum class TopKey : std::uint8_t {
  Other,
  TraceEvents,
  SchemaVersion,
  DeviceProperties,
  DisplayTimeUnit,
  BaseTimeNanoseconds,
  TraceName,
  DistributedInfo,  // {"rank": N, ...}: Holistic Trace Analysis needs it (its rank regex wants `"rank": N`)
  Syncscope,        // our own block for what Kineto has no field for (also the per-event args key)
};
inline constexpr Named<TopKey> kTopKeys[] = {
    {"traceEvents", TopKey::TraceEvents},
    {"schemaVersion", TopKey::SchemaVersion},
    {"deviceProperties", TopKey::DeviceProperties},
    {"displayTimeUnit", TopKey::DisplayTimeUnit},
    {"baseTimeNanoseconds", TopKey::BaseTimeNanoseconds},
    {"traceName", TopKey::TraceName},
    {"distributedInfo", TopKey::DistributedInfo},
    {"syncscope", TopKey::Syncscope},
};
// Every TopKey but Other has a spelling.
static_assert(name_of(kTopKeys, TopKey::DistributedInfo) == "distributedInfo" &&
              name_of(kTopKeys, TopKey::Syncscope) == "syncscope");
inline constexpr auto kTopKeyIndex = make_index(kTopKeys);
inline TopKey top_key(std::string_view k) { return value_of(kTopKeys, kTopKeyIndex, k, TopKey::Other); }
constexpr std::string_view top_key_name(TopKey k) { return name_of(kTopKeys, k); }
inline constexpr std::string_view kSyncscope = top_key_name(TopKey::Syncscope);
inline constexpr std::string_view kRank = "rank";
// Top-level provenance Kineto writes (cupti_version, ...) shown as the source version.
inline constexpr std::string_view kVersionKeys[][2] = {{"cupti_version", "CUPTI "},
                                                       {"cuda_driver_version", "CUDA driver "},
                                                       {"cuda_runtime_version", "CUDA runtime "}};

// ---- deviceProperties entries --------------------------------------------------------------
enum class DeviceKey : std::uint8_t {
  Unknown,
  Id,
  Name,
  TotalGlobalMem,
  ComputeMajor,
  ComputeMinor,
  MaxThreadsPerBlock,
  MaxThreadsPerSm,
  RegsPerBlock,
  WarpSize,
  SharedMemPerBlock,
  NumSms,
  RegsPerSm,
  SharedMemPerBlockOptin,
  SharedMemPerSm,
};
// In the order libkineto writes them.
inline constexpr Named<DeviceKey> kDeviceKeys[] = {
    {"id", DeviceKey::Id},
    {"name", DeviceKey::Name},
    {"totalGlobalMem", DeviceKey::TotalGlobalMem},
    {"computeMajor", DeviceKey::ComputeMajor},
    {"computeMinor", DeviceKey::ComputeMinor},
    {"maxThreadsPerBlock", DeviceKey::MaxThreadsPerBlock},
    {"maxThreadsPerMultiprocessor", DeviceKey::MaxThreadsPerSm},
    {"regsPerBlock", DeviceKey::RegsPerBlock},
    {"warpSize", DeviceKey::WarpSize},
    {"sharedMemPerBlock", DeviceKey::SharedMemPerBlock},
    {"numSms", DeviceKey::NumSms},
    {"regsPerMultiprocessor", DeviceKey::RegsPerSm},
    {"sharedMemPerBlockOptin", DeviceKey::SharedMemPerBlockOptin},
    {"sharedMemPerMultiprocessor", DeviceKey::SharedMemPerSm},
};
inline constexpr auto kDeviceKeyIndex = make_index(kDeviceKeys);

// ---- args.syncscope (per event) ------------------------------------------------------------
enum class SsArg : std::uint8_t {
  Unknown,
  TrackTid,
  ReturnCode,
  Device,
  Stream,
  Pid,
  Tid,
  PeerDevice,
  Value,
  EventSyncId,
  Async,
  IsQuery,
  Generated,
  RangeKind,
  Domain,
};
inline constexpr Named<SsArg> kSsArgs[] = {
    {"track_tid", SsArg::TrackTid},
    {"return_code", SsArg::ReturnCode},
    {"device", SsArg::Device},
    {"stream", SsArg::Stream},
    {"pid", SsArg::Pid},
    {"tid", SsArg::Tid},
    {"peer_device", SsArg::PeerDevice},
    {"value", SsArg::Value},
    {"event_sync_id", SsArg::EventSyncId},
    {"async", SsArg::Async},
    {"is_query", SsArg::IsQuery},
    {"generated", SsArg::Generated},
    {"range_kind", SsArg::RangeKind},
    {"domain", SsArg::Domain},
};
inline constexpr auto kSsArgIndex = make_index(kSsArgs);
constexpr std::string_view ss_arg_name(SsArg a) { return name_of(kSsArgs, a); }

// ---- the top-level "syncscope" block ---------------------------------------------------------
enum class BlockKey : std::uint8_t {
  Unknown,
  SchemaVersion,
  SourceTool,
  SourceVersion,
  TraceName,
  SourceSchemaVersion,
  DroppedRecords,
  Clock,
  BaseTimeNs,
  UnknownCategories,
  Extra,
  Rank,
};
// In the order we write them.
inline constexpr Named<BlockKey> kBlockKeys[] = {
    {"schema_version", BlockKey::SchemaVersion},
    {"source_tool", BlockKey::SourceTool},
    {"source_version", BlockKey::SourceVersion},
    {"trace_name", BlockKey::TraceName},
    {"source_schema_version", BlockKey::SourceSchemaVersion},
    {"dropped_records", BlockKey::DroppedRecords},
    {"clock", BlockKey::Clock},
    {"base_time_ns", BlockKey::BaseTimeNs},
    {"unknown_categories", BlockKey::UnknownCategories},
    {"extra", BlockKey::Extra},
    {"rank", BlockKey::Rank},  // written only when known: distributedInfo always has one (0 when unknown)
};
inline constexpr auto kBlockKeyIndex = make_index(kBlockKeys);

}  // namespace syncscope::io_detail::schema
