// Trace -> Chrome trace JSON in Kineto's conventions, streamed through a sink: the document
// (conventions in chrome_writer_impl.hpp; one event per record kind in
// chrome_writer_records.cpp).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include "chrome_writer_impl.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace io_detail {

using schema::DeviceKey;

Ns writer_base_time(const Trace& t) {
  // Kineto's base when every record is at or after it (the usual case); else the earliest
  // time, so relative timestamps never go negative. The block keeps meta.base_time_ns.
  auto [lo, hi] = t.time_span();
  Ns lo_all = lo;
  bool any = t.record_count() > 0;
  for (const auto& e : t.cuda_events) lo_all = std::min(lo_all, e.timestamp);
  for (const auto& e : t.overheads) lo_all = std::min(lo_all, e.start);
  for (const auto& e : t.others) lo_all = std::min(lo_all, e.start);
  for (const auto& e : t.memory) lo_all = std::min(lo_all, e.timestamp);
  if (!any) return t.meta.base_time_ns;
  return std::min(t.meta.base_time_ns, lo_all);
}

Ns Writer::base_time() const { return writer_base_time(t_); }

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

void Writer::device_properties() {
  o_.key(schema::top_key_name(schema::TopKey::DeviceProperties));
  o_.ch('[');
  for (std::size_t i = 0; i < t_.devices.size(); ++i) {
    const auto& d = t_.devices[i];
    if (i) o_.ch(',');
    o_.raw("\n  ");
    Obj obj(o_);
    for (const auto& entry : schema::kDeviceKeys) {
      JsonOut& v = obj.key(entry.name);
      switch (entry.value) {
        case DeviceKey::Id: v.num(d.id); break;
        case DeviceKey::Name: v.str(d.name); break;
        case DeviceKey::TotalGlobalMem: v.num(d.total_memory_bytes); break;
        case DeviceKey::ComputeMajor: v.num(d.compute_major); break;
        case DeviceKey::ComputeMinor: v.num(d.compute_minor); break;
        case DeviceKey::MaxThreadsPerBlock: v.num(d.max_threads_per_block); break;
        case DeviceKey::MaxThreadsPerSm: v.num(d.max_threads_per_sm); break;
        case DeviceKey::RegsPerBlock: v.num(d.regs_per_block); break;
        case DeviceKey::WarpSize: v.num(d.warp_size); break;
        case DeviceKey::SharedMemPerBlock: v.num(d.shared_mem_per_block); break;
        case DeviceKey::NumSms: v.num(d.sm_count); break;
        case DeviceKey::RegsPerSm: v.num(d.regs_per_sm); break;
        case DeviceKey::SharedMemPerBlockOptin: v.num(d.shared_mem_per_block_optin); break;
        case DeviceKey::SharedMemPerSm: v.num(d.shared_mem_per_sm); break;
        case DeviceKey::Unknown: break;
      }
    }
    obj.close();
  }
  o_.raw("],\n");
}

namespace {

// "rank<N>" in a trace's name (e.g. rank3.pt.trace.json), by the rule `analyze DIR` applies
// to file names (profiler/analysis/src/ranks.cpp, rank_from_file_name): 'rank' not after a
// letter, an optional '-', '_' or '.', then digits.
std::optional<std::int64_t> rank_in_name(std::string_view name) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  for (std::size_t i = 0; i + 4 <= name.size(); ++i) {
    if (!(lower(name[i]) == 'r' && lower(name[i + 1]) == 'a' && lower(name[i + 2]) == 'n' && lower(name[i + 3]) == 'k'))
      continue;
    if (i > 0 && std::isalpha(static_cast<unsigned char>(name[i - 1]))) continue;
    std::size_t j = i + 4;
    if (j < name.size() && (name[j] == '-' || name[j] == '_' || name[j] == '.')) ++j;
    std::size_t k = j;
    while (k < name.size() && k - j < 9 && std::isdigit(static_cast<unsigned char>(name[k]))) ++k;
    if (k == j) continue;
    return std::stoll(std::string(name.substr(j, k - j)));
  }
  return std::nullopt;
}

}  // namespace

// Holistic Trace Analysis needs {"rank": N} here (rank 0 when unknown; our block says whether
// it was) and finds it with a regular expression that wants the space after each colon, so
// this object is written with Python's separators. Other members the source had follow.
void Writer::distributed_info() {
  o_.raw("\"");
  o_.raw(schema::top_key_name(schema::TopKey::DistributedInfo));
  o_.raw("\": {\"");
  o_.raw(schema::kRank);
  o_.raw("\": ");
  nlohmann::json source;  // the source's distributedInfo, kept as text in meta.extra
  if (auto it = t_.meta.extra.find(std::string(schema::top_key_name(schema::TopKey::DistributedInfo)));
      it != t_.meta.extra.end())
    source = nlohmann::json::parse(it->second, nullptr, false);
  std::int64_t rank = 0;
  if (t_.meta.rank) rank = *t_.meta.rank;
  else if (source.is_object() && source.contains(schema::kRank) && source[schema::kRank].is_number_integer())
    rank = source[schema::kRank].get<std::int64_t>();
  else if (auto r = rank_in_name(t_.meta.trace_name))
    rank = *r;  // else 0 for every rank-less trace
                // of a directory: HTA keeps only one
  o_.num(rank);
  if (source.is_object())
    for (const auto& [k, v] : source.items()) {
      if (k == schema::kRank) continue;
      o_.raw(", ");
      o_.str(k);
      o_.raw(": ");
      o_.raw(v.dump());
    }
  o_.raw("},\n");
}

// Our own block: the exact model metadata, which the reader prefers over what it infers.
void Writer::block() {
  using schema::BlockKey;
  const auto& m = t_.meta;
  o_.key(schema::kSyncscope);
  Obj b(o_);
  for (const auto& entry : schema::kBlockKeys) {
    JsonOut& v = b.key(entry.name);
    switch (entry.value) {
      case BlockKey::SchemaVersion: v.num(kTraceSchemaVersion); break;
      case BlockKey::SourceTool: v.str(m.source_tool); break;
      case BlockKey::SourceVersion: v.str(m.source_version); break;
      case BlockKey::TraceName: v.str(m.trace_name); break;
      case BlockKey::SourceSchemaVersion: v.num(m.source_schema_version); break;
      case BlockKey::DroppedRecords: v.num(m.dropped_records); break;
      case BlockKey::Clock: v.str(kind_name(m.clock)); break;
      case BlockKey::BaseTimeNs: v.num(m.base_time_ns); break;
      case BlockKey::UnknownCategories: {
        Obj u(v);
        for (const auto& [k, n] : m.unknown_categories) u.key(k).num(n);
        u.close();
        break;
      }
      case BlockKey::Extra: {
        Obj x(v);
        for (const auto& [k, text] : m.extra) x.key(k).str(text);
        x.close();
        break;
      }
      case BlockKey::Rank:
        if (m.rank) v.num(*m.rank);
        else v.raw("null");
        break;
      case BlockKey::Unknown: break;
    }
  }
  b.close();
}

void Writer::header() {
  const auto& m = t_.meta;
  o_.raw("{\n");
  using schema::TopKey;
  o_.key(schema::top_key_name(TopKey::SchemaVersion));
  o_.num(m.source_schema_version > 0 ? m.source_schema_version : 1);
  o_.raw(",\n");
  device_properties();
  distributed_info();
  // Provenance Kineto keeps at the top level (trace_id, cupti_version, ...), as it was.
  for (const auto& [k, v] : m.extra) {
    if (schema::top_key(k) != schema::TopKey::Other) continue;  // written from the model
    o_.key(k);
    // nlohmann's lexer takes a NUL byte for the end of its input, so "2024\0..." (a damaged
    // nsys version string, found by fuzz_nsys_sqlite) would pass accept() and be written raw.
    const bool json_value = !v.empty() && std::string_view("{[-0123456789tfn").find(v[0]) != std::string_view::npos &&
                            v.find('\0') == std::string::npos && nlohmann::json::accept(v);
    if (json_value) o_.raw(v);
    else o_.str(v);
    o_.raw(",\n");
  }
  o_.key(schema::top_key_name(TopKey::DisplayTimeUnit));
  o_.str("ms");
  o_.raw(",\n");
  o_.key(schema::top_key_name(TopKey::BaseTimeNanoseconds));
  o_.num(base_);
  o_.raw(",\n");
  o_.key(schema::top_key_name(TopKey::TraceName));
  o_.str(m.trace_name);
  o_.raw(",\n");
  block();
  o_.raw(",\n");
  o_.key(schema::top_key_name(TopKey::TraceEvents));
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
    std::stable_sort(order[k].begin(), order[k].end(),
                     [&](std::uint32_t a, std::uint32_t b) { return less(v[a], v[b]); });
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
  make_order(kMemory, t_.memory, [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });

  const std::array<std::size_t, kNumTypes> sizes = {t_.ranges.size(),  t_.api_calls.size(), t_.overheads.size(),
                                                    t_.others.size(),  t_.kernels.size(),   t_.memcpys.size(),
                                                    t_.memsets.size(), t_.syncs.size(),     t_.cuda_events.size(),
                                                    t_.memory.size()};
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
      case kMemory: return {t_.memory[i].timestamp, t_.memory[i].timestamp};
      default: return {t_.cuda_events[i].timestamp, cuda_event_end(t_.cuda_events[i].timestamp)};
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
    case kApi: write_api(ev, i); break;
    case kKernel: write_kernel(ev, i); break;
    case kMemcpy: write_memcpy(ev, i); break;
    case kMemset: write_memset(ev, i); break;
    case kSync: write_sync(ev, i); break;
    case kEvent: write_cuda_event(ev, i); break;
    case kRange: write_range(ev, i); break;
    case kOverhead: write_overhead(ev, i); break;
    case kOther: write_other(ev, i); break;
    case kMemory: write_memory(ev, i); break;
    case kNumTypes: break;
  }
  ev.close();
}

void Writer::flow_pair(const ApiCall& a, std::uint8_t api_lane, std::uint64_t corr, std::int64_t device,
                       std::int64_t tid, std::uint8_t lane, Ns start) {
  using schema::Key;
  const auto& flow = schema::kLaunchFlow;
  auto endpoint = [&](const char* ph, std::int64_t pid, std::int64_t track_tid, Ns ts, bool end) {
    begin_event();
    Obj e(o_);
    e.key(schema::key_name(Key::Ph)).str(ph);
    e.key(flow.id_key).num(corr);
    e.key(schema::key_name(Key::Pid)).num(pid);
    e.key(schema::key_name(Key::Tid)).num(track_tid);
    e.key(schema::key_name(Key::Ts)).us(ts - base_);
    e.key(schema::key_name(Key::Cat)).str(flow.category);
    e.key(schema::key_name(Key::Name)).str(flow.category);
    if (end) e.key(flow.bind_point_key).str(flow.bind_enclosing);
    e.close();
  };
  endpoint("s", a.pid, api_lane == 0 ? a.tid : a.tid + api_lane * kLaneStride, a.start, false);
  endpoint("f", device, lane == 0 ? tid : tid + lane * kLaneStride, start, true);
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
    flow_pair(t_.api_calls[it->second], lanes_[kApi][it->second], corr, device, tid, lane, start);
  };
  auto link_all = [&](RecType type, const auto& records) {
    for (std::size_t i = 0; i < records.size(); ++i) {
      const GpuActivity& g = records[i];
      link(g.correlation, g.device, g.stream, lanes_[type][i], g.start);
    }
  };
  link_all(kKernel, t_.kernels);
  link_all(kMemcpy, t_.memcpys);
  link_all(kMemset, t_.memsets);
  for (std::size_t i = 0; i < t_.syncs.size(); ++i) {
    const auto& s = t_.syncs[i];
    link(s.correlation, s.device, s.stream < 0 ? -s.stream : s.stream, lanes_[kSync][i], s.start);
  }
}

void Writer::metadata() {
  auto meta_event = [&](std::string_view what, auto pid_writer, auto tid_writer, std::string_view name,
                        bool generated) {
    begin_event();
    Obj m(o_);
    m.key(schema::key_name(schema::Key::Name)).str(what);
    m.key(schema::key_name(schema::Key::Ph)).str("M");
    // Kineto gives metadata events a ts too; without one, Holistic Trace Analysis's pandas
    // column of ts holds NaN, turns float and every timestamp is rounded
    // (hta/common/trace_parser.py, _parse_trace_dataframe_json). The trace's first instant
    // (0 after the base) is a whole microsecond, so it is written as an integer.
    m.key(schema::key_name(schema::Key::Ts)).us(0);
    pid_writer(m.key(schema::key_name(schema::Key::Pid)));
    tid_writer(m.key(schema::key_name(schema::Key::Tid)));
    Obj args(m.key(schema::key_name(schema::Key::Args)));
    args.key(schema::arg_name(schema::Arg::Name)).str(name);
    if (generated) {
      Obj ss(args.key(schema::kSyncscope));
      ss.key(schema::ss_arg_name(schema::SsArg::Generated)).raw("true");
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
        process ? schema::kProcessName : schema::kThreadName, [&](JsonOut& o) { o.id_text(n.pid); },
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
    meta_event(
        schema::kProcessName, [&](JsonOut& o) { o.num(d); }, [&](JsonOut& o) { o.num(0); }, "GPU " + std::to_string(d),
        true);
  }
  for (const auto& ds : gpu_tracks_) {
    const std::int64_t d = ds.first;  // plain copies: clang 14 cannot capture structured bindings
    const std::int64_t s = ds.second;
    if (thread_names.count({std::to_string(d), std::to_string(s)})) continue;
    meta_event(
        schema::kThreadName, [&](JsonOut& o) { o.num(d); }, [&](JsonOut& o) { o.num(s); },
        "stream " + std::to_string(s), true);
  }
  for (const auto& ds : event_tracks_) {
    const std::int64_t d = ds.first;
    const std::int64_t s = ds.second;
    meta_event(
        schema::kThreadName, [&](JsonOut& o) { o.num(d); }, [&](JsonOut& o) { o.num(s + kEventTrackOffset); },
        "stream " + std::to_string(s) + " events", true);
  }
  // Sort order and labels as the source gave them (TrackOrder), with Kineto's args.
  for (const auto& o : t_.track_order) {
    const bool process = o.tid.empty();
    begin_event();
    Obj m(o_);
    m.key(schema::key_name(schema::Key::Name))
        .str(o.kind == TrackOrder::Kind::Labels ? schema::kProcessLabels
             : process                          ? schema::kProcessSortIndex
                                                : schema::kThreadSortIndex);
    m.key(schema::key_name(schema::Key::Ph)).str("M");
    m.key(schema::key_name(schema::Key::Ts)).us(0);  // as for the names above
    m.key(schema::key_name(schema::Key::Pid)).id_text(o.pid);
    if (process) m.key(schema::key_name(schema::Key::Tid)).num(0);
    else m.key(schema::key_name(schema::Key::Tid)).id_text(o.tid);
    Obj args(m.key(schema::key_name(schema::Key::Args)));
    if (o.kind == TrackOrder::Kind::Labels) args.key(schema::arg_name(schema::Arg::Labels)).str(o.labels);
    else args.key(schema::arg_name(schema::Arg::SortIndex)).num(o.sort_index);
    args.close();
    m.close();
  }
  for (const auto& entry : extra_lanes_) {
    const TrackId track = entry.first;
    const std::uint8_t lane = entry.second;
    const std::string pid =
        track.pid_str ? std::string(t_.str(static_cast<StringId>(track.pid))) : std::to_string(track.pid);
    const std::string tid =
        track.tid_str ? std::string(t_.str(static_cast<StringId>(track.tid))) : std::to_string(track.tid);
    std::string base;
    if (auto it = thread_names.find({pid, tid}); it != thread_names.end()) base = it->second;
    else if (!track.pid_str && gpu_pids_.count(track.pid)) base = "stream " + tid;
    else base = "thread " + tid;
    const std::string name = base + " (overlap " + std::to_string(lane) + ")";
    meta_event(
        schema::kThreadName, [&](JsonOut& o) { o.id_text(pid); },
        [&](JsonOut& o) {
          if (track.tid_str) o.str(tid + " (overlap " + std::to_string(lane) + ")");
          else o.num(track.tid + lane * kLaneStride);
        },
        name, true);
  }
}

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
