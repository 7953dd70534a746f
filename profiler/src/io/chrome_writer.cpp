// Trace -> Chrome trace JSON in Kineto's conventions, streamed through a sink.
//
// - Field names and layouts follow libkineto's ChromeTraceLogger (output_json.cpp) and
//   CuptiActivity metadata, so PyTorch tooling reads the file; what Kineto has no field for
//   goes into args "syncscope" objects and one top-level "syncscope" block, which the reader
//   gives precedence: every model field round-trips.
// - Times are baseTimeNanoseconds plus microseconds with exactly three decimals (exact ns).
// - Perfetto needs the slices of one track to nest. Records are emitted in one merged pass
//   ordered by (start, longer first); each track keeps a stack of open slices per lane, and a
//   slice that would straddle an open one moves to the first lane where it nests (an extra
//   tid, named "... (overlap N)"); args.syncscope.track_tid keeps the real tid.
// - Launch -> GPU flow arrows ("ac2g", id = correlation) start on the API call's track at its
//   start and end ("bp": "e") on the GPU activity's track at its start.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "chrome_reader.hpp"
#include "syncscope/io/trace_io.hpp"
#include "text_util.hpp"

namespace syncscope {
namespace io_detail {
namespace {

// Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there are not one.
std::size_t utf8_len(const unsigned char* p, std::size_t n) {
  const unsigned c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) { return i < n && p[i] >= lo && p[i] <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

class JsonOut {
 public:
  explicit JsonOut(const Sink& sink) : sink_(sink) { buf_.reserve(kFlush + 4096); }
  void raw(std::string_view s) { buf_.append(s); }
  void ch(char c) { buf_.push_back(c); }
  // A JSON string: quotes, backslashes and control characters escaped; invalid UTF-8 bytes
  // become U+FFFD so the file stays valid JSON for strict parsers.
  void str(std::string_view s) {
    buf_.push_back('"');
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t run = 0;  // start of a run of bytes copied as they are
    std::size_t i = 0;
    auto flush_run = [&] { buf_.append(s.data() + run, i - run); };
    while (i < n) {
      const unsigned c = p[i];
      if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
        ++i;
        continue;
      }
      if (c >= 0x80) {
        const std::size_t len = utf8_len(p + i, n - i);
        if (len > 0) {
          i += len;
          continue;
        }
        flush_run();
        buf_.append("\\ufffd");
        run = ++i;
        continue;
      }
      flush_run();
      switch (c) {
        case '"': buf_.append("\\\""); break;
        case '\\': buf_.append("\\\\"); break;
        case '\n': buf_.append("\\n"); break;
        case '\r': buf_.append("\\r"); break;
        case '\t': buf_.append("\\t"); break;
        case '\b': buf_.append("\\b"); break;
        case '\f': buf_.append("\\f"); break;
        default: {
          static const char* hex = "0123456789abcdef";
          buf_.append("\\u00");
          buf_.push_back(hex[c >> 4]);
          buf_.push_back(hex[c & 15]);
        }
      }
      run = ++i;
    }
    flush_run();
    buf_.push_back('"');
  }
  template <class I>
  void num(I v) {
    char b[24];
    auto [e, ec] = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, e);
  }
  void us(Ns ns) { append_us(buf_, ns); }
  // An id kept as text (OtherEvent, TrackName): a number when it is one, else a string.
  void id_text(std::string_view s) {
    if (auto v = canonical_int(s)) num(*v);
    else str(s);
  }
  void key(std::string_view k) {
    str(k);
    buf_.push_back(':');
  }
  void maybe_flush() {
    if (buf_.size() >= kFlush) {
      sink_(buf_);
      buf_.clear();
    }
  }
  void finish() {
    if (!buf_.empty()) sink_(buf_);
    buf_.clear();
  }

 private:
  static constexpr std::size_t kFlush = std::size_t{1} << 20;
  const Sink& sink_;
  std::string buf_;
};

// Comma-separated members of one JSON object.
class Obj {
 public:
  explicit Obj(JsonOut& o) : o_(o) { o_.ch('{'); }
  JsonOut& key(std::string_view k) {
    if (!first_) o_.ch(',');
    first_ = false;
    o_.key(k);
    return o_;
  }
  void close() { o_.ch('}'); }

 private:
  JsonOut& o_;
  bool first_ = true;
};

// args.syncscope, opened only when something goes into it.
class SsArgs {
 public:
  explicit SsArgs(Obj& args) : args_(args) {}
  JsonOut& key(std::string_view k) {
    if (!inner_) inner_.emplace(args_.key(kSyncscopeKey));
    return inner_->key(k);
  }
  void close() {
    if (inner_) inner_->close();
  }

 private:
  Obj& args_;
  std::optional<Obj> inner_;
};

enum RecType : std::uint8_t { kRange, kApi, kOverhead, kOther, kKernel, kMemcpy, kMemset, kSync, kEvent, kNumTypes };

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
constexpr std::int64_t kLaneStride = 100'000'000;
constexpr std::size_t kMaxLanes = 20;

class Writer {
 public:
  Writer(const Trace& t, const Sink& sink) : t_(t), o_(sink) {}
  void run();

 private:
  Ns base_time() const;
  void header();
  void events();
  void emit(RecType type, std::size_t i);
  std::uint8_t assign_lane(const TrackId& track, Ns start, Ns end);
  void begin_event() {
    if (!first_event_) o_.raw(",\n");
    first_event_ = false;
    o_.maybe_flush();
  }
  // Opens {"ph":..,"cat":..,"name":..,"pid":..,"tid":..,"ts":..[,"dur":..] and leaves the
  // object open for args.
  void x_head(Obj& ev, std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid,
              std::uint8_t lane, Ns start, Ns end) {
    ev.key("ph").str("X");
    ev.key("cat").str(cat);
    ev.key("name").str(name);
    ev.key("pid").num(pid);
    ev.key("tid").num(lane == 0 ? tid : tid + lane * kLaneStride);
    ev.key("ts").us(start - base_);
    ev.key("dur").us(end - start);
  }
  static void track_tid(SsArgs& ss, std::uint8_t lane, std::int64_t tid) {
    if (lane != 0) ss.key("track_tid").num(tid);
  }
  void flows();
  void metadata();

  const Trace& t_;
  JsonOut o_;
  Ns base_ = 0;
  bool first_event_ = true;
  std::unordered_map<TrackId, TrackState, TrackIdHash> tracks_;
  std::array<std::vector<std::uint8_t>, kNumTypes> lanes_;
  std::set<std::pair<TrackId, std::uint8_t>, std::function<bool(const std::pair<TrackId, std::uint8_t>&,
                                                                   const std::pair<TrackId, std::uint8_t>&)>>
      extra_lanes_{[](const auto& a, const auto& b) {
        return std::tie(a.first.pid_str, a.first.pid, a.first.tid_str, a.first.tid, a.second) <
               std::tie(b.first.pid_str, b.first.pid, b.first.tid_str, b.first.tid, b.second);
      }};
  std::set<std::int64_t> gpu_pids_;
  std::set<std::pair<std::int64_t, std::int64_t>> gpu_tracks_;
};

Ns Writer::base_time() const {
  // Kineto's base when every record is at or after it (the usual case); else the earliest
  // time, so relative timestamps never go negative. The block keeps meta.base_time_ns.
  auto [lo, hi] = t_.time_span();
  Ns lo_all = lo;
  bool any = t_.record_count() > 0;
  for (const auto& e : t_.cuda_events) lo_all = std::min(lo_all, e.timestamp);
  for (const auto& e : t_.overheads) lo_all = std::min(lo_all, e.start);
  for (const auto& e : t_.others) lo_all = std::min(lo_all, e.start);
  if (!any) return t_.meta.base_time_ns;
  return std::min(t_.meta.base_time_ns, lo_all);
}

void Writer::run() {
  base_ = base_time();
  for (std::size_t k = 0; k < kNumTypes; ++k) lanes_[k].clear();
  lanes_[kApi].assign(t_.api_calls.size(), 0);
  lanes_[kKernel].assign(t_.kernels.size(), 0);
  lanes_[kMemcpy].assign(t_.memcpys.size(), 0);
  lanes_[kMemset].assign(t_.memsets.size(), 0);
  lanes_[kSync].assign(t_.syncs.size(), 0);
  header();
  events();
  flows();
  metadata();
  o_.raw("\n]}\n");
  o_.finish();
}

void Writer::header() {
  const auto& m = t_.meta;
  o_.raw("{\n");
  o_.key("schemaVersion");
  o_.num(m.source_schema_version > 0 ? m.source_schema_version : 1);
  o_.raw(",\n");
  o_.key("deviceProperties");
  o_.ch('[');
  for (std::size_t i = 0; i < t_.devices.size(); ++i) {
    const auto& d = t_.devices[i];
    if (i) o_.ch(',');
    o_.raw("\n  ");
    Obj obj(o_);
    obj.key("id").num(d.id);
    obj.key("name").str(d.name);
    obj.key("totalGlobalMem").num(d.total_memory_bytes);
    obj.key("computeMajor").num(d.compute_major);
    obj.key("computeMinor").num(d.compute_minor);
    obj.key("maxThreadsPerBlock").num(d.max_threads_per_block);
    obj.key("maxThreadsPerMultiprocessor").num(d.max_threads_per_sm);
    obj.key("regsPerBlock").num(d.regs_per_block);
    obj.key("warpSize").num(d.warp_size);
    obj.key("sharedMemPerBlock").num(d.shared_mem_per_block);
    obj.key("numSms").num(d.sm_count);
    obj.key("regsPerMultiprocessor").num(d.regs_per_sm);
    obj.key("sharedMemPerBlockOptin").num(d.shared_mem_per_block_optin);
    obj.key("sharedMemPerMultiprocessor").num(d.shared_mem_per_sm);
    obj.close();
  }
  o_.raw("],\n");
  // Provenance Kineto keeps at the top level (trace_id, cupti_version, ...), as it was.
  static const std::set<std::string_view> reserved = {"schemaVersion", "deviceProperties", "displayTimeUnit",
                                                       "baseTimeNanoseconds", "traceName", "traceEvents",
                                                       kSyncscopeKey};
  for (const auto& [k, v] : m.extra) {
    if (reserved.count(k)) continue;
    o_.key(k);
    const bool json_value = !v.empty() && std::string_view("{[-0123456789tfn").find(v[0]) != std::string_view::npos &&
                            nlohmann::json::accept(v);
    if (json_value) o_.raw(v);
    else o_.str(v);
    o_.raw(",\n");
  }
  o_.key("displayTimeUnit");
  o_.str("ms");
  o_.raw(",\n");
  o_.key("baseTimeNanoseconds");
  o_.num(base_);
  o_.raw(",\n");
  o_.key("traceName");
  o_.str(m.trace_name);
  o_.raw(",\n");
  o_.key(kSyncscopeKey);
  {
    Obj b(o_);
    b.key("schema_version").num(kTraceSchemaVersion);
    b.key("source_tool").str(m.source_tool);
    b.key("source_version").str(m.source_version);
    b.key("trace_name").str(m.trace_name);
    b.key("source_schema_version").num(m.source_schema_version);
    b.key("dropped_records").num(m.dropped_records);
    b.key("clock").str(kind_name(m.clock));
    b.key("base_time_ns").num(m.base_time_ns);
    {
      Obj u(b.key("unknown_categories"));
      for (const auto& [k, n] : m.unknown_categories) u.key(k).num(n);
      u.close();
    }
    {
      Obj x(b.key("extra"));
      for (const auto& [k, v] : m.extra) x.key(k).str(v);
      x.close();
    }
    b.close();
  }
  o_.raw(",\n");
  o_.key("traceEvents");
  o_.raw("[\n");
}

std::uint8_t Writer::assign_lane(const TrackId& track, Ns start, Ns end) {
  auto& ts = tracks_[track];
  for (std::size_t k = 0; k < ts.lanes.size(); ++k) {
    auto& st = ts.lanes[k];
    while (!st.empty() && st.back() <= start) st.pop_back();
    if (st.empty() || end <= st.back()) {
      st.push_back(end);
      if (k > 0) extra_lanes_.insert({track, static_cast<std::uint8_t>(k)});
      return static_cast<std::uint8_t>(k);
    }
  }
  if (ts.lanes.size() < kMaxLanes) {
    ts.lanes.emplace_back().push_back(end);
    const auto k = static_cast<std::uint8_t>(ts.lanes.size() - 1);
    if (k > 0) extra_lanes_.insert({track, k});
    return k;
  }
  return static_cast<std::uint8_t>(kMaxLanes - 1);  // pathological overlap: accept it on the last lane
}

void Writer::events() {
  // Per type, the order Trace::finalize() gives, so a read-back trace is identical even
  // when the caller did not finalize.
  auto by_interval = [](const auto& a, const auto& b) { return std::tie(a.start, b.end) < std::tie(b.start, a.end); };
  std::array<std::vector<std::uint32_t>, kNumTypes> order;
  auto make_order = [&](RecType k, const auto& v, auto less) {
    if (std::is_sorted(v.begin(), v.end(), less)) return;
    order[k].resize(v.size());
    std::iota(order[k].begin(), order[k].end(), 0u);
    std::stable_sort(order[k].begin(), order[k].end(), [&](std::uint32_t a, std::uint32_t b) { return less(v[a], v[b]); });
  };
  make_order(kRange, t_.ranges, by_interval);
  make_order(kApi, t_.api_calls, by_interval);
  make_order(kOverhead, t_.overheads, by_interval);
  make_order(kOther, t_.others, [](const auto& a, const auto& b) { return a.start < b.start; });
  make_order(kKernel, t_.kernels, by_interval);
  make_order(kMemcpy, t_.memcpys, by_interval);
  make_order(kMemset, t_.memsets, by_interval);
  make_order(kSync, t_.syncs, by_interval);
  make_order(kEvent, t_.cuda_events, [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });

  const std::array<std::size_t, kNumTypes> sizes = {t_.ranges.size(), t_.api_calls.size(), t_.overheads.size(),
                                                    t_.others.size(), t_.kernels.size(), t_.memcpys.size(),
                                                    t_.memsets.size(), t_.syncs.size(), t_.cuda_events.size()};
  std::array<std::size_t, kNumTypes> pos{};
  auto index_of = [&](std::size_t k) { return order[k].empty() ? pos[k] : order[k][pos[k]]; };
  auto interval = [&](std::size_t k, std::size_t i) -> std::pair<Ns, Ns> {
    switch (k) {
      case kRange: return {t_.ranges[i].start, t_.ranges[i].end};
      case kApi: return {t_.api_calls[i].start, t_.api_calls[i].end};
      case kOverhead: return {t_.overheads[i].start, t_.overheads[i].end};
      case kOther: {
        const auto& e = t_.others[i];
        return {e.start, e.phase == 'X' ? e.start + e.duration : e.start};
      }
      case kKernel: return {t_.kernels[i].start, t_.kernels[i].end};
      case kMemcpy: return {t_.memcpys[i].start, t_.memcpys[i].end};
      case kMemset: return {t_.memsets[i].start, t_.memsets[i].end};
      case kSync: return {t_.syncs[i].start, t_.syncs[i].end};
      default: return {t_.cuda_events[i].timestamp, t_.cuda_events[i].timestamp + 1};
    }
  };
  for (;;) {
    std::size_t best = kNumTypes;
    std::pair<Ns, Ns> best_iv{};
    for (std::size_t k = 0; k < kNumTypes; ++k) {
      if (pos[k] == sizes[k]) continue;
      const auto iv = interval(k, index_of(k));
      // Earlier first; on equal starts the longer one first (it is the parent).
      if (best == kNumTypes || iv.first < best_iv.first || (iv.first == best_iv.first && iv.second > best_iv.second)) {
        best = k;
        best_iv = iv;
      }
    }
    if (best == kNumTypes) break;
    emit(static_cast<RecType>(best), index_of(best));
    ++pos[best];
  }
}

void Writer::emit(RecType type, std::size_t i) {
  begin_event();
  Obj ev(o_);
  switch (type) {
    case kApi: {
      const auto& r = t_.api_calls[i];
      const auto lane = assign_lane({false, false, r.pid, r.tid}, r.start, r.end);
      lanes_[kApi][i] = lane;
      x_head(ev, r.kind == ApiKind::Runtime ? "cuda_runtime" : "cuda_driver", t_.str(r.name), r.pid, r.tid, lane,
             r.start, r.end);
      Obj args(ev.key("args"));
      if (r.external_id != 0) args.key("External id").num(r.external_id);
      args.key("cbid").num(r.cbid);
      args.key("correlation").num(r.correlation);
      SsArgs ss(args);
      track_tid(ss, lane, r.tid);
      if (r.return_code != 0) ss.key("return_code").num(r.return_code);
      if (r.device != -1) ss.key("device").num(r.device);
      ss.close();
      args.close();
      break;
    }
    case kKernel: {
      const auto& k = t_.kernels[i];
      const auto lane = assign_lane({false, false, k.device, k.stream}, k.start, k.end);
      lanes_[kKernel][i] = lane;
      gpu_pids_.insert(k.device);
      gpu_tracks_.insert({k.device, k.stream});
      x_head(ev, "kernel", t_.str(k.name), k.device, k.stream, lane, k.start, k.end);
      Obj args(ev.key("args"));
      if (k.external_id != 0) args.key("External id").num(k.external_id);
      args.key("device").num(k.device);
      args.key("context").num(k.context);
      args.key("stream").num(k.stream);
      args.key("correlation").num(k.correlation);
      args.key("registers per thread").num(k.registers_per_thread);
      args.key("shared memory").num(k.shared_memory_bytes);
      for (const auto& [name, v] : {std::pair<const char*, const std::int32_t*>{"grid", k.grid}, {"block", k.block}}) {
        o_.ch(',');
        o_.key(name);
        o_.ch('[');
        o_.num(v[0]);
        o_.ch(',');
        o_.num(v[1]);
        o_.ch(',');
        o_.num(v[2]);
        o_.ch(']');
      }
      SsArgs ss(args);
      track_tid(ss, lane, k.stream);
      ss.close();
      args.close();
      break;
    }
    case kMemcpy: {
      const auto& m = t_.memcpys[i];
      const auto lane = assign_lane({false, false, m.device, m.stream}, m.start, m.end);
      lanes_[kMemcpy][i] = lane;
      gpu_pids_.insert(m.device);
      gpu_tracks_.insert({m.device, m.stream});
      x_head(ev, "gpu_memcpy", memcpy_name(m.kind, m.src_kind, m.dst_kind), m.device, m.stream, lane, m.start, m.end);
      Obj args(ev.key("args"));
      if (m.external_id != 0) args.key("External id").num(m.external_id);
      args.key("device").num(m.device);
      args.key("context").num(m.context);
      args.key("stream").num(m.stream);
      args.key("correlation").num(m.correlation);
      args.key("bytes").num(m.bytes);
      // GB/s = bytes per nanosecond, as Kineto computes it ("N/A" for zero durations).
      if (m.end > m.start) args.key("memory bandwidth (GB/s)").num(static_cast<double>(m.bytes) / static_cast<double>(m.end - m.start));
      else args.key("memory bandwidth (GB/s)").str("N/A");
      SsArgs ss(args);
      track_tid(ss, lane, m.stream);
      if (m.async) ss.key("async").raw("true");
      if (m.peer_device != -1) ss.key("peer_device").num(m.peer_device);
      ss.close();
      args.close();
      break;
    }
    case kMemset: {
      const auto& m = t_.memsets[i];
      const auto lane = assign_lane({false, false, m.device, m.stream}, m.start, m.end);
      lanes_[kMemset][i] = lane;
      gpu_pids_.insert(m.device);
      gpu_tracks_.insert({m.device, m.stream});
      x_head(ev, "gpu_memset", memset_name(m.memory_kind), m.device, m.stream, lane, m.start, m.end);
      Obj args(ev.key("args"));
      if (m.external_id != 0) args.key("External id").num(m.external_id);
      args.key("device").num(m.device);
      args.key("context").num(m.context);
      args.key("stream").num(m.stream);
      args.key("correlation").num(m.correlation);
      args.key("bytes").num(m.bytes);
      if (m.end > m.start) args.key("memory bandwidth (GB/s)").num(static_cast<double>(m.bytes) / static_cast<double>(m.end - m.start));
      else args.key("memory bandwidth (GB/s)").str("N/A");
      SsArgs ss(args);
      track_tid(ss, lane, m.stream);
      if (m.value != 0) ss.key("value").num(m.value);
      if (m.async) ss.key("async").raw("true");
      ss.close();
      args.close();
      break;
    }
    case kSync: {
      const auto& s = t_.syncs[i];
      // Kineto's track for a sync: pid = device, tid = |stream| (so -1, device-wide, is 1).
      const std::int64_t tid = s.stream < 0 ? -s.stream : s.stream;
      const auto lane = assign_lane({false, false, s.device, tid}, s.start, s.end);
      lanes_[kSync][i] = lane;
      gpu_pids_.insert(s.device);
      gpu_tracks_.insert({s.device, tid});
      const auto kind = kineto_sync_kind(s.type);
      x_head(ev, "cuda_sync", kind, s.device, tid, lane, s.start, s.end);
      Obj args(ev.key("args"));
      if (s.external_id != 0) args.key("External id").num(s.external_id);
      args.key("cuda_sync_kind").str(kind);
      const bool event_sync = s.type == SyncType::EventSync || s.type == SyncType::StreamWaitEvent;
      if (event_sync || s.wait_on_stream != -1 || s.wait_on_event_record_correlation != -1 || s.event_id != 0) {
        args.key("wait_on_stream").num(s.wait_on_stream);
        args.key("wait_on_cuda_event_record_corr_id").num(s.wait_on_event_record_correlation);
        args.key("wait_on_cuda_event_id").num(s.event_id);
      }
      args.key("stream").num(s.stream);
      args.key("correlation").num(s.correlation);
      args.key("device").num(s.device);
      args.key("context").num(s.context);
      SsArgs ss(args);
      track_tid(ss, lane, tid);
      if (s.event_sync_id != 0) ss.key("event_sync_id").num(s.event_sync_id);
      if (s.return_code != 0) ss.key("return_code").num(s.return_code);
      if (s.is_query) ss.key("is_query").raw("true");
      ss.close();
      args.close();
      break;
    }
    case kEvent: {
      const auto& e = t_.cuda_events[i];
      const std::int64_t tid = e.stream < 0 ? -e.stream : e.stream;
      // Kineto gives CUDA event records 1 ns so they show up in the UI.
      const auto lane = assign_lane({false, false, e.device, tid}, e.timestamp, e.timestamp + 1);
      gpu_pids_.insert(e.device);
      gpu_tracks_.insert({e.device, tid});
      x_head(ev, "cuda_event", "cudaEvent", e.device, tid, lane, e.timestamp, e.timestamp + 1);
      Obj args(ev.key("args"));
      args.key("event_id").num(e.event_id);
      args.key("stream").num(e.stream);
      args.key("correlation").num(e.correlation);
      args.key("device").num(e.device);
      args.key("context").num(e.context);
      SsArgs ss(args);
      track_tid(ss, lane, tid);
      if (e.event_sync_id != 0) ss.key("event_sync_id").num(e.event_sync_id);
      ss.close();
      args.close();
      break;
    }
    case kRange: {
      const auto& r = t_.ranges[i];
      const bool gpu = r.kind == RangeKind::GpuUserAnnotation;
      const std::int64_t pid = gpu ? r.device : r.pid;
      const std::int64_t tid = gpu ? r.stream : r.tid;
      const auto lane = assign_lane({false, false, pid, tid}, r.start, r.end);
      if (gpu) {
        gpu_pids_.insert(r.device);
        gpu_tracks_.insert({r.device, r.stream});
      }
      std::string_view cat = "user_annotation";
      switch (r.kind) {
        case RangeKind::GpuUserAnnotation: cat = "gpu_user_annotation"; break;
        case RangeKind::CpuOp: cat = "cpu_op"; break;
        case RangeKind::PythonFunction: cat = "python_function"; break;
        default: break;  // user annotations and NVTX ranges (kind kept in args.syncscope)
      }
      x_head(ev, cat, t_.str(r.name), pid, tid, lane, r.start, r.end);
      Obj args(ev.key("args"));
      if (r.external_id != 0) args.key("External id").num(r.external_id);
      if (r.correlation != 0) args.key("correlation").num(r.correlation);
      SsArgs ss(args);
      track_tid(ss, lane, tid);
      if (r.kind == RangeKind::NvtxPushPop || r.kind == RangeKind::NvtxStartEnd) ss.key("range_kind").str(kind_name(r.kind));
      if (r.domain != kNoString) ss.key("domain").str(t_.str(r.domain));
      if (gpu) {
        if (r.pid != -1) ss.key("pid").num(r.pid);
        if (r.tid != -1) ss.key("tid").num(r.tid);
      } else {
        if (r.device != -1) ss.key("device").num(r.device);
        if (r.stream != -1) ss.key("stream").num(r.stream);
      }
      ss.close();
      args.close();
      break;
    }
    case kOverhead: {
      const auto& r = t_.overheads[i];
      const auto lane = assign_lane({false, false, r.pid, r.tid}, r.start, r.end);
      x_head(ev, "overhead", t_.str(r.name), r.pid, r.tid, lane, r.start, r.end);
      if (lane != 0) {
        Obj args(ev.key("args"));
        SsArgs ss(args);
        track_tid(ss, lane, r.tid);
        ss.close();
        args.close();
      }
      break;
    }
    case kOther: {
      const auto& e = t_.others[i];
      const std::string_view pid = t_.str(e.pid);
      const std::string_view tid = t_.str(e.tid);
      ev.key("ph").str(std::string_view(&e.phase, 1));
      if (e.category != kNoString) ev.key("cat").str(t_.str(e.category));
      ev.key("name").str(t_.str(e.name));
      std::uint8_t lane = 0;
      if (e.phase == 'X') {
        const auto pv = canonical_int(pid);
        const auto tv = canonical_int(tid);
        const TrackId track{!pv, !tv, pv ? *pv : static_cast<std::int64_t>(e.pid), tv ? *tv : static_cast<std::int64_t>(e.tid)};
        lane = assign_lane(track, e.start, e.start + e.duration);
      }
      ev.key("pid").id_text(pid);
      if (lane == 0) {
        ev.key("tid").id_text(tid);
      } else if (auto tv = canonical_int(tid)) {
        ev.key("tid").num(*tv + lane * kLaneStride);
      } else {
        ev.key("tid").str(std::string(tid) + " (overlap " + std::to_string(lane) + ")");
      }
      ev.key("ts").us(e.start - base_);
      if (e.phase == 'X') ev.key("dur").us(e.duration);
      if (e.phase == 'i' || e.phase == 'I') ev.key("s").str(pid.empty() && tid.empty() ? "g" : "t");
      if (lane != 0) {
        Obj args(ev.key("args"));
        Obj ss(args.key(kSyncscopeKey));
        ss.key("track_tid").id_text(tid);
        ss.close();
        args.close();
      }
      break;
    }
    case kNumTypes: break;
  }
  ev.close();
}

void Writer::flows() {
  std::unordered_map<std::uint64_t, std::uint32_t> api_by_corr;
  api_by_corr.reserve(t_.api_calls.size());
  for (std::uint32_t i = 0; i < t_.api_calls.size(); ++i)
    if (t_.api_calls[i].correlation != 0) api_by_corr.emplace(t_.api_calls[i].correlation, i);
  std::unordered_map<std::uint64_t, bool> done;
  auto link = [&](std::uint64_t corr, std::int64_t device, std::int64_t tid, std::uint8_t lane, Ns start) {
    if (corr == 0) return;
    auto it = api_by_corr.find(corr);
    if (it == api_by_corr.end() || !done.emplace(corr, true).second) return;
    const auto& a = t_.api_calls[it->second];
    const std::uint8_t alane = lanes_[kApi][it->second];
    begin_event();
    Obj s(o_);
    s.key("ph").str("s");
    s.key("id").num(corr);
    s.key("pid").num(a.pid);
    s.key("tid").num(alane == 0 ? a.tid : a.tid + alane * kLaneStride);
    s.key("ts").us(a.start - base_);
    s.key("cat").str("ac2g");
    s.key("name").str("ac2g");
    s.close();
    begin_event();
    Obj f(o_);
    f.key("ph").str("f");
    f.key("id").num(corr);
    f.key("pid").num(device);
    f.key("tid").num(lane == 0 ? tid : tid + lane * kLaneStride);
    f.key("ts").us(start - base_);
    f.key("cat").str("ac2g");
    f.key("name").str("ac2g");
    f.key("bp").str("e");
    f.close();
  };
  for (std::size_t i = 0; i < t_.kernels.size(); ++i) {
    const auto& k = t_.kernels[i];
    link(k.correlation, k.device, k.stream, lanes_[kKernel][i], k.start);
  }
  for (std::size_t i = 0; i < t_.memcpys.size(); ++i) {
    const auto& m = t_.memcpys[i];
    link(m.correlation, m.device, m.stream, lanes_[kMemcpy][i], m.start);
  }
  for (std::size_t i = 0; i < t_.memsets.size(); ++i) {
    const auto& m = t_.memsets[i];
    link(m.correlation, m.device, m.stream, lanes_[kMemset][i], m.start);
  }
  for (std::size_t i = 0; i < t_.syncs.size(); ++i) {
    const auto& s = t_.syncs[i];
    link(s.correlation, s.device, s.stream < 0 ? -s.stream : s.stream, lanes_[kSync][i], s.start);
  }
}

void Writer::metadata() {
  auto meta_event = [&](std::string_view what, auto pid_writer, auto tid_writer, std::string_view name, bool generated) {
    begin_event();
    Obj m(o_);
    m.key("name").str(what);
    m.key("ph").str("M");
    pid_writer(m.key("pid"));
    tid_writer(m.key("tid"));
    Obj args(m.key("args"));
    args.key("name").str(name);
    if (generated) {
      Obj ss(args.key(kSyncscopeKey));
      ss.key("generated").raw("true");
      ss.close();
    }
    args.close();
    m.close();
  };
  std::set<std::string> named_pids;
  std::map<std::pair<std::string, std::string>, std::string> thread_names;
  for (const auto& n : t_.track_names) {
    const bool process = n.tid.empty();
    meta_event(
        process ? "process_name" : "thread_name", [&](JsonOut& o) { o.id_text(n.pid); },
        [&](JsonOut& o) {
          if (process) o.num(0);
          else o.id_text(n.tid);
        },
        n.name, false);
    if (process) named_pids.insert(n.pid);
    else thread_names[{n.pid, n.tid}] = n.name;
  }
  // Names for GPU tracks the trace does not name: Perfetto shows "GPU 0" / "stream 7".
  for (auto d : gpu_pids_) {
    if (named_pids.count(std::to_string(d))) continue;
    meta_event("process_name", [&](JsonOut& o) { o.num(d); }, [&](JsonOut& o) { o.num(0); }, "GPU " + std::to_string(d),
               true);
  }
  for (const auto& ds : gpu_tracks_) {
    const std::int64_t d = ds.first;  // plain copies: clang 14 cannot capture structured bindings
    const std::int64_t s = ds.second;
    if (thread_names.count({std::to_string(d), std::to_string(s)})) continue;
    meta_event("thread_name", [&](JsonOut& o) { o.num(d); }, [&](JsonOut& o) { o.num(s); }, "stream " + std::to_string(s),
               true);
  }
  for (const auto& entry : extra_lanes_) {
    const TrackId track = entry.first;
    const std::uint8_t lane = entry.second;
    const std::string pid = track.pid_str ? std::string(t_.str(static_cast<StringId>(track.pid))) : std::to_string(track.pid);
    const std::string tid = track.tid_str ? std::string(t_.str(static_cast<StringId>(track.tid))) : std::to_string(track.tid);
    std::string base;
    if (auto it = thread_names.find({pid, tid}); it != thread_names.end()) base = it->second;
    else if (!track.pid_str && gpu_pids_.count(track.pid)) base = "stream " + tid;
    else base = "thread " + tid;
    const std::string name = base + " (overlap " + std::to_string(lane) + ")";
    meta_event(
        "thread_name", [&](JsonOut& o) { o.id_text(pid); },
        [&](JsonOut& o) {
          if (track.tid_str) o.str(tid + " (overlap " + std::to_string(lane) + ")");
          else o.num(track.tid + lane * kLaneStride);
        },
        name, true);
  }
}

}  // namespace
}  // namespace io_detail

void write_chrome_json(const Trace& trace, const Sink& sink) {
  io_detail::Writer w(trace, sink);
  w.run();
}

std::string chrome_json_string(const Trace& trace) {
  std::string out;
  write_chrome_json(trace, [&](std::string_view s) { out.append(s); });
  return out;
}

}  // namespace syncscope
