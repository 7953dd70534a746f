// The Chrome trace writer's state, shared by its two halves: chrome_writer.cpp writes the
// document (header, the merged time-ordered pass over all records, flow arrows, track
// names) and chrome_writer_records.cpp writes one event per record kind.
//
// - Field names and layouts follow libkineto's ChromeTraceLogger (output_json.cpp) and
//   CuptiActivity metadata (kineto_schema.hpp), so PyTorch tooling reads the file; what
//   Kineto has no field for goes into args "syncscope" objects and one top-level "syncscope"
//   block, which the reader gives precedence: every model field round-trips.
// - Times are baseTimeNanoseconds plus microseconds with exactly three decimals (exact ns).
// - Perfetto needs the slices of one track to nest. Records are emitted in one merged pass
//   ordered by (start, longer first); each track keeps a stack of open slices per lane, and a
//   slice that would straddle an open one moves to the first lane where it nests (an extra
//   tid, named "... (overlap N)"); args.syncscope.track_tid keeps the real tid.
// - Launch -> GPU flow arrows ("ac2g", id = correlation) start on the API call's track at its
//   start and end ("bp": "e") on the GPU activity's track at its start.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "json_out.hpp"
#include "kineto_schema.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::io_detail {

enum RecType : std::uint8_t {
  kRange,
  kApi,
  kOverhead,
  kOther,
  kKernel,
  kMemcpy,
  kMemset,
  kSync,
  kEvent,
  kMemory,
  kNumTypes
};

struct TrackId {
  bool pid_str = false, tid_str = false;
  std::int64_t pid = 0, tid = 0;  // values, or StringIds when *_str
  bool operator==(const TrackId&) const = default;
};
struct TrackIdHash {
  std::size_t operator()(const TrackId& k) const noexcept {
    std::uint64_t h = static_cast<std::uint64_t>(k.pid) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<std::uint64_t>(k.tid) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h ^ (k.pid_str ? 0x51ull : 0) ^ (k.tid_str ? 0xA2ull : 0));
  }
};

struct TrackState {
  std::vector<std::vector<Ns>> lanes;  // per lane: ends of the open slices, innermost last
};

// Lanes beyond the original tid sit this far apart in tid space (stream 7, lane 2 ->
// tid 200000007), clear of real thread ids (Linux pid_max <= 2^22) and stream ids.
inline constexpr std::int64_t kLaneStride = 100'000'000;
inline constexpr std::size_t kMaxLanes = 20;
// CUDA event records sit on a track of their own beside their stream's, this far from it
// (past every overlap lane: stream 7 -> tid 2000000007, below 2^31 for stream ids < 1e8).
inline constexpr std::int64_t kEventTrackOffset = static_cast<std::int64_t>(kMaxLanes) * kLaneStride;

// An event's "args" object and its "syncscope" member (opened only when written to), closed
// at the end of the scope. Keys go into args first, then into ss.
struct ArgsScope {
  explicit ArgsScope(Obj& event) : args(event.key(schema::key_name(schema::Key::Args))), ss(args, schema::kSyncscope) {}
  ~ArgsScope() {
    ss.close();
    args.close();
  }
  ArgsScope(const ArgsScope&) = delete;
  ArgsScope& operator=(const ArgsScope&) = delete;
  Obj args;
  LazyObj ss;
};

// The writer's time origin: every "ts" is a record's time minus it (baseTimeNanoseconds).
Ns writer_base_time(const Trace& t);

class Writer {
 public:
  Writer(const Trace& t, const Sink& sink) : t_(t), o_(sink) {}
  void run();

 private:
  // ---- the document (chrome_writer.cpp) ----------------------------------------------------
  Ns base_time() const;
  void header();
  void device_properties();
  void distributed_info();
  void block();
  void events();
  void emit(RecType type, std::size_t i);
  std::uint8_t assign_lane(const TrackId& track, Ns start, Ns end);
  void begin_event() {
    if (!first_event_) o_.raw(",\n");
    first_event_ = false;
    o_.maybe_flush();
  }
  void flows();
  void flow_pair(const ApiCall& a, std::uint8_t api_lane, std::uint64_t corr, std::int64_t device, std::int64_t tid,
                 std::uint8_t lane, Ns start);
  void metadata();

  // ---- one event per record kind (chrome_writer_records.cpp) -------------------------------
  void write_api(Obj& ev, std::size_t i);
  void write_kernel(Obj& ev, std::size_t i);
  void write_memcpy(Obj& ev, std::size_t i);
  void write_memset(Obj& ev, std::size_t i);
  void write_sync(Obj& ev, std::size_t i);
  void write_cuda_event(Obj& ev, std::size_t i);
  // Where a CUDA event record's mark ends (chrome_writer_records.cpp says why).
  Ns cuda_event_end(Ns timestamp) const;
  void write_range(Obj& ev, std::size_t i);
  void write_overhead(Obj& ev, std::size_t i);
  void write_other(Obj& ev, std::size_t i);
  // A profile_memory event as PyTorch writes it ("[memory]" instant, Kineto's arg names).
  void write_memory(Obj& ev, std::size_t i);
  // Opens {"ph":"X","cat":..,"name":..,"pid":..,"tid":..,"ts":..,"dur":.. and leaves the
  // object open for args.
  void x_head(Obj& ev, std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid,
              std::uint8_t lane, Ns start, Ns end);
  // The head of a kernel, copy or memset on its (device, stream) track; returns the lane.
  std::uint8_t gpu_head(Obj& ev, RecType type, std::size_t i, schema::Cat cat, std::string_view name,
                        const GpuActivity& g);
  // External id, device, context, stream and correlation, as Kineto orders them.
  static void gpu_args(Obj& args, const GpuActivity& g, std::uint64_t external_id);
  // The same plus the byte count and Kineto's bandwidth, for copies and memsets.
  static void copy_args(Obj& args, const GpuActivity& g, std::uint64_t external_id, std::uint64_t bytes);
  // Stream, correlation, device and context of a sync or CUDA event record, in Kineto's order.
  static void sync_args(Obj& args, std::int64_t stream, std::uint64_t correlation, std::int32_t device,
                        std::uint32_t context);
  // A collective's identity (CollectiveArgs) on the kernel (by correlation) or CPU op (by
  // External id) it was read from, with PyTorch's arg names; the process group only where the
  // record does not write it itself.
  void collective_args(Obj& args, CollectiveArgs::On on, std::uint64_t id, bool with_group);
  static void track_tid(LazyObj& ss, std::uint8_t lane, std::int64_t tid) {
    if (lane != 0) ss.key(schema::ss_arg_name(schema::SsArg::TrackTid)).num(tid);
  }

  const Trace& t_;
  JsonOut o_;
  Ns base_ = 0;
  bool first_event_ = true;
  std::unordered_map<TrackId, TrackState, TrackIdHash> tracks_;
  std::array<std::vector<std::uint8_t>, kNumTypes> lanes_;
  std::set<std::pair<TrackId, std::uint8_t>,
           std::function<bool(const std::pair<TrackId, std::uint8_t>&, const std::pair<TrackId, std::uint8_t>&)>>
      extra_lanes_{[](const auto& a, const auto& b) {
        return std::tie(a.first.pid_str, a.first.pid, a.first.tid_str, a.first.tid, a.second) <
               std::tie(b.first.pid_str, b.first.pid, b.first.tid_str, b.first.tid, b.second);
      }};
  std::set<std::int64_t> gpu_pids_;
  std::set<std::pair<std::int64_t, std::int64_t>> gpu_tracks_;
  std::set<std::pair<std::int64_t, std::int64_t>> event_tracks_;  // (device, tid) with CUDA event marks
  // Trace::collectives by (kernel correlation) and (CPU op External id); built on first use.
  std::optional<std::array<std::unordered_map<std::uint64_t, const CollectiveArgs*>, 2>> collectives_;
};

}  // namespace syncscope::io_detail
