// Trace -> Chrome trace JSON: one function per record kind, each writing one event in the
// layout libkineto gives that kind (chrome_writer_impl.hpp has the conventions).
#include "chrome_writer_impl.hpp"
#include "text_util.hpp"

namespace syncscope::io_detail {
namespace {

using schema::Arg;
using schema::Cat;
using schema::Key;
using schema::SsArg;
// Spellings, short.
std::string_view arg(Arg a) { return schema::arg_name(a); }
std::string_view ss(SsArg a) { return schema::ss_arg_name(a); }
std::string_view key(Key k) { return schema::key_name(k); }

}  // namespace

void Writer::x_head(Obj& ev, std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid,
                    std::uint8_t lane, Ns start, Ns end) {
  ev.key(key(Key::Ph)).str("X");
  ev.key(key(Key::Cat)).str(cat);
  ev.key(key(Key::Name)).str(name);
  ev.key(key(Key::Pid)).num(pid);
  ev.key(key(Key::Tid)).num(lane == 0 ? tid : tid + lane * kLaneStride);
  ev.key(key(Key::Ts)).us(start - base_);
  ev.key(key(Key::Dur)).us(end - start);
}

std::uint8_t Writer::gpu_head(Obj& ev, RecType type, std::size_t i, Cat cat, std::string_view name,
                              const GpuActivity& g) {
  const auto lane = assign_lane({false, false, g.device, g.stream}, g.start, g.end);
  lanes_[type][i] = lane;
  gpu_pids_.insert(g.device);
  gpu_tracks_.insert({g.device, g.stream});
  x_head(ev, schema::category_name(cat), name, g.device, g.stream, lane, g.start, g.end);
  return lane;
}

void Writer::gpu_args(Obj& args, const GpuActivity& g, std::uint64_t external_id) {
  if (external_id != 0) args.key(arg(Arg::ExternalId)).num(external_id);
  args.key(arg(Arg::Device)).num(g.device);
  args.key(arg(Arg::Context)).num(g.context);
  args.key(arg(Arg::Stream)).num(g.stream);
  args.key(arg(Arg::Correlation)).num(g.correlation);
}

void Writer::copy_args(Obj& args, const GpuActivity& g, std::uint64_t external_id, std::uint64_t bytes) {
  gpu_args(args, g, external_id);
  args.key(arg(Arg::Bytes)).num(bytes);
  // GB/s = bytes per nanosecond, as Kineto computes it ("N/A" for zero durations).
  JsonOut& v = args.key(arg(Arg::Bandwidth));
  if (g.end > g.start) v.num(static_cast<double>(bytes) / static_cast<double>(g.end - g.start));
  else v.str("N/A");
}

void Writer::sync_args(Obj& args, std::int64_t stream, std::uint64_t correlation, std::int32_t device,
                       std::uint32_t context) {
  args.key(arg(Arg::Stream)).num(stream);
  args.key(arg(Arg::Correlation)).num(correlation);
  args.key(arg(Arg::Device)).num(device);
  args.key(arg(Arg::Context)).num(context);
}

void Writer::write_api(Obj& ev, std::size_t i) {
  const auto& r = t_.api_calls[i];
  const auto lane = assign_lane({false, false, r.pid, r.tid}, r.start, r.end);
  lanes_[kApi][i] = lane;
  x_head(ev, schema::category_name(r.kind == ApiKind::Runtime ? Cat::Runtime : Cat::Driver), t_.str(r.name), r.pid,
         r.tid, lane, r.start, r.end);
  ArgsScope a(ev);
  if (r.external_id != 0) a.args.key(arg(Arg::ExternalId)).num(r.external_id);
  a.args.key(arg(Arg::Cbid)).num(r.cbid);
  a.args.key(arg(Arg::Correlation)).num(r.correlation);
  if (const int kind = memcpy_kind_number(r.copy_kind); kind >= 0) a.args.key(arg(Arg::Kind)).num(kind);
  track_tid(a.ss, lane, r.tid);
  if (r.return_code != 0) a.ss.key(ss(SsArg::ReturnCode)).num(r.return_code);
  if (r.device != -1) a.ss.key(ss(SsArg::Device)).num(r.device);
}

void Writer::write_kernel(Obj& ev, std::size_t i) {
  const auto& k = t_.kernels[i];
  const auto lane = gpu_head(ev, kKernel, i, Cat::Kernel, t_.str(k.name), k);
  ArgsScope a(ev);
  gpu_args(a.args, k, k.external_id);
  a.args.key(arg(Arg::Registers)).num(k.registers_per_thread);
  a.args.key(arg(Arg::SharedMemory)).num(k.shared_memory_bytes);
  if (k.process_group != kNoString) a.args.key(arg(Arg::ProcessGroup)).str(t_.str(k.process_group));
  if (!t_.collectives.empty() && k.correlation != 0)
    collective_args(a.args, CollectiveArgs::On::Kernel, k.correlation, k.process_group == kNoString);
  for (const auto& [which, v] : {std::pair<Arg, const std::int32_t*>{Arg::Grid, k.grid}, {Arg::Block, k.block}}) {
    JsonOut& o = a.args.key(arg(which));
    o.ch('[');
    o.num(v[0]);
    o.ch(',');
    o.num(v[1]);
    o.ch(',');
    o.num(v[2]);
    o.ch(']');
  }
  track_tid(a.ss, lane, k.stream);
}

void Writer::write_memcpy(Obj& ev, std::size_t i) {
  const auto& m = t_.memcpys[i];
  const auto lane = gpu_head(ev, kMemcpy, i, Cat::Memcpy, memcpy_name(m.kind, m.src_kind, m.dst_kind), m);
  ArgsScope a(ev);
  copy_args(a.args, m, m.external_id, m.bytes);
  track_tid(a.ss, lane, m.stream);
  if (m.async) a.ss.key(ss(SsArg::Async)).raw("true");
  if (m.peer_device != -1) a.ss.key(ss(SsArg::PeerDevice)).num(m.peer_device);
}

void Writer::write_memset(Obj& ev, std::size_t i) {
  const auto& m = t_.memsets[i];
  const auto lane = gpu_head(ev, kMemset, i, Cat::Memset, memset_name(m.memory_kind), m);
  ArgsScope a(ev);
  copy_args(a.args, m, m.external_id, m.bytes);
  track_tid(a.ss, lane, m.stream);
  if (m.value != 0) a.ss.key(ss(SsArg::Value)).num(m.value);
  if (m.async) a.ss.key(ss(SsArg::Async)).raw("true");
}

void Writer::write_sync(Obj& ev, std::size_t i) {
  const auto& r = t_.syncs[i];
  // Kineto's track for a sync: pid = device, tid = |stream| (so -1, device-wide, is 1).
  const std::int64_t tid = r.stream < 0 ? -r.stream : r.stream;
  const auto lane = assign_lane({false, false, r.device, tid}, r.start, r.end);
  lanes_[kSync][i] = lane;
  gpu_pids_.insert(r.device);
  gpu_tracks_.insert({r.device, tid});
  const auto kind = kineto_sync_kind(r.type);
  x_head(ev, schema::category_name(Cat::Sync), kind, r.device, tid, lane, r.start, r.end);
  ArgsScope a(ev);
  if (r.external_id != 0) a.args.key(arg(Arg::ExternalId)).num(r.external_id);
  a.args.key(arg(Arg::SyncKind)).str(kind);
  const bool event_sync = r.type == SyncType::EventSync || r.type == SyncType::StreamWaitEvent;
  if (event_sync || r.wait_on_stream != -1 || r.wait_on_event_record_correlation != -1 || r.event_id != 0) {
    a.args.key(arg(Arg::WaitOnStream)).num(r.wait_on_stream);
    a.args.key(arg(Arg::WaitOnCorr)).num(r.wait_on_event_record_correlation);
    a.args.key(arg(Arg::WaitOnEventId)).num(r.event_id);
  }
  sync_args(a.args, r.stream, r.correlation, r.device, r.context);
  track_tid(a.ss, lane, tid);
  if (r.event_sync_id != 0) a.ss.key(ss(SsArg::EventSyncId)).num(r.event_sync_id);
  if (r.return_code != 0) a.ss.key(ss(SsArg::ReturnCode)).num(r.return_code);
  if (r.is_query) a.ss.key(ss(SsArg::IsQuery)).raw("true");
}

Ns Writer::cuda_event_end(Ns timestamp) const {
  // Kineto gives a CUDA event record 1 ns so that it shows in the UI. Holistic Trace Analysis
  // takes it for GPU work on its stream (it has args.stream) and, on a trace with fractional
  // microseconds, keeps [ceil(ts), floor(ts + dur)) (hta/common/trace_parser.py,
  // round_down_time_stamps): 1 ns at a fractional time becomes -1 us, a negative
  // OPERATOR_KERNEL edge in its critical-path graph. So the mark lasts to the next whole
  // microsecond from the writer's base (1 ns when it is on one): HTA then reads 0 us. Our
  // reader takes only its start (the record's timestamp).
  const Ns off = timestamp - base_;
  const Ns rem = off % 1000;
  return rem == 0 ? timestamp + 1 : timestamp + (1000 - rem);
}

void Writer::write_cuda_event(Obj& ev, std::size_t i) {
  const auto& e = t_.cuda_events[i];
  const std::int64_t tid = e.stream < 0 ? -e.stream : e.stream;
  // On a track of their own beside the stream's (tid + kEventTrackOffset, named "stream N
  // events"; args.syncscope.track_tid keeps the real tid), so that a mark that lasts to the
  // next whole microsecond never straddles a kernel that starts within it. Marks on that
  // track all end on whole microseconds, so they nest and need no overlap lane.
  const Ns end = cuda_event_end(e.timestamp);
  const std::int64_t track = tid + kEventTrackOffset;
  (void)assign_lane({false, false, e.device, track}, e.timestamp, end);
  gpu_pids_.insert(e.device);
  event_tracks_.insert({e.device, tid});
  x_head(ev, schema::category_name(Cat::CudaEvent), "cudaEvent", e.device, track, 0, e.timestamp, end);
  ArgsScope a(ev);
  a.args.key(arg(Arg::EventId)).num(e.event_id);
  sync_args(a.args, e.stream, e.correlation, e.device, e.context);
  a.ss.key(ss(SsArg::TrackTid)).num(tid);
  if (e.event_sync_id != 0) a.ss.key(ss(SsArg::EventSyncId)).num(e.event_sync_id);
}

void Writer::collective_args(Obj& args, CollectiveArgs::On on, std::uint64_t id, bool with_group) {
  if (!collectives_) {
    collectives_.emplace();
    for (const CollectiveArgs& c : t_.collectives)
      (*collectives_)[static_cast<std::size_t>(c.on)].emplace(c.on == CollectiveArgs::On::Kernel ? c.correlation
                                                                                                 : c.external_id,
                                                              &c);
  }
  const auto& index = (*collectives_)[static_cast<std::size_t>(on)];
  const auto it = index.find(id);
  if (it == index.end()) return;
  const CollectiveArgs& c = *it->second;
  auto text = [&](Arg key, StringId v) {
    if (v != kNoString) args.key(arg(key)).str(t_.str(v));
  };
  auto number = [&](Arg key, std::int64_t v) {
    if (v >= 0) args.key(arg(key)).num(v);
  };
  if (with_group) text(Arg::ProcessGroup, c.process_group);
  text(Arg::CollectiveName, c.collective);
  number(Arg::InNelems, c.in_nelems);
  number(Arg::OutNelems, c.out_nelems);
  number(Arg::GroupSize, c.group_size);
  text(Arg::Dtype, c.dtype);
  text(Arg::GroupDesc, c.group_desc);
  text(Arg::GroupRanks, c.group_ranks);
  number(Arg::Seq, c.seq);
}

void Writer::write_range(Obj& ev, std::size_t i) {
  const auto& r = t_.ranges[i];
  const bool gpu = r.kind == RangeKind::GpuUserAnnotation;
  const std::int64_t pid = gpu ? r.device : r.pid;
  const std::int64_t tid = gpu ? r.stream : r.tid;
  const auto lane = assign_lane({false, false, pid, tid}, r.start, r.end);
  if (gpu) {
    gpu_pids_.insert(r.device);
    gpu_tracks_.insert({r.device, r.stream});
  }
  Cat cat = Cat::UserAnnotation;  // also NVTX ranges (their kind is kept in args.syncscope)
  switch (r.kind) {
    case RangeKind::GpuUserAnnotation: cat = Cat::GpuUserAnnotation; break;
    case RangeKind::CpuOp: cat = Cat::CpuOp; break;
    case RangeKind::PythonFunction: cat = Cat::PythonFunction; break;
    default: break;
  }
  x_head(ev, schema::category_name(cat), t_.str(r.name), pid, tid, lane, r.start, r.end);
  ArgsScope a(ev);
  if (r.external_id != 0) a.args.key(arg(Arg::ExternalId)).num(r.external_id);
  if (r.correlation != 0) a.args.key(arg(Arg::Correlation)).num(r.correlation);
  if (!t_.collectives.empty() && r.kind == RangeKind::CpuOp && r.external_id != 0)
    collective_args(a.args, CollectiveArgs::On::CpuOp, r.external_id, true);
  track_tid(a.ss, lane, tid);
  if (r.kind == RangeKind::NvtxPushPop || r.kind == RangeKind::NvtxStartEnd)
    a.ss.key(ss(SsArg::RangeKind)).str(kind_name(r.kind));
  if (r.domain != kNoString) a.ss.key(ss(SsArg::Domain)).str(t_.str(r.domain));
  if (gpu) {
    if (r.pid != -1) a.ss.key(ss(SsArg::Pid)).num(r.pid);
    if (r.tid != -1) a.ss.key(ss(SsArg::Tid)).num(r.tid);
  } else {
    if (r.device != -1) a.ss.key(ss(SsArg::Device)).num(r.device);
    if (r.stream != -1) a.ss.key(ss(SsArg::Stream)).num(r.stream);
  }
}

void Writer::write_overhead(Obj& ev, std::size_t i) {
  const auto& r = t_.overheads[i];
  const auto lane = assign_lane({false, false, r.pid, r.tid}, r.start, r.end);
  x_head(ev, schema::category_name(Cat::Overhead), t_.str(r.name), r.pid, r.tid, lane, r.start, r.end);
  if (lane != 0) {
    ArgsScope a(ev);
    track_tid(a.ss, lane, r.tid);
  }
}

void Writer::write_other(Obj& ev, std::size_t i) {
  const auto& e = t_.others[i];
  const std::string_view pid = t_.str(e.pid);
  const std::string_view tid = t_.str(e.tid);
  ev.key(key(Key::Ph)).str(std::string_view(&e.phase, 1));
  if (e.category != kNoString) ev.key(key(Key::Cat)).str(t_.str(e.category));
  ev.key(key(Key::Name)).str(t_.str(e.name));
  std::uint8_t lane = 0;
  if (e.phase == 'X') {
    const auto pv = canonical_int(pid);
    const auto tv = canonical_int(tid);
    const TrackId track{!pv, !tv, pv ? *pv : static_cast<std::int64_t>(e.pid),
                        tv ? *tv : static_cast<std::int64_t>(e.tid)};
    lane = assign_lane(track, e.start, e.start + e.duration);
  }
  ev.key(key(Key::Pid)).id_text(pid);
  if (lane == 0) {
    ev.key(key(Key::Tid)).id_text(tid);
  } else if (auto tv = canonical_int(tid)) {
    ev.key(key(Key::Tid)).num(*tv + lane * kLaneStride);
  } else {
    ev.key(key(Key::Tid)).str(std::string(tid) + " (overlap " + std::to_string(lane) + ")");
  }
  ev.key(key(Key::Ts)).us(e.start - base_);
  if (e.phase == 'X') ev.key(key(Key::Dur)).us(e.duration);
  if (e.phase == 'i' || e.phase == 'I') ev.key(schema::kInstantScopeKey).str(pid.empty() && tid.empty() ? "g" : "t");
  if (e.flow_id != kNoString) ev.key(schema::kLaunchFlow.id_key).id_text(t_.str(e.flow_id));
  if (e.bind_enclosing) ev.key(schema::kLaunchFlow.bind_point_key).str(schema::kBindEnclosing);
  if (lane != 0) {  // the tid of a named track: kept as text
    ArgsScope a(ev);
    a.ss.key(ss(SsArg::TrackTid)).id_text(tid);
  }
}

void Writer::write_memory(Obj& ev, std::size_t i) {
  const auto& m = t_.memory[i];
  ev.key(key(Key::Ph)).str("i");
  ev.key(key(Key::Cat)).str(schema::kMemoryCategory);
  ev.key(schema::kInstantScopeKey).str("t");
  ev.key(key(Key::Name)).str(schema::kMemoryEventName);
  ev.key(key(Key::Pid)).num(m.pid);
  ev.key(key(Key::Tid)).num(m.tid);
  ev.key(key(Key::Ts)).us(m.timestamp - base_);
  // Only what is known: a field left out reads back as unknown (MemoryEvent's -1 / 0).
  ArgsScope a(ev);
  if (m.total_reserved >= 0) a.args.key(arg(Arg::TotalReserved)).num(m.total_reserved);
  if (m.total_allocated >= 0) a.args.key(arg(Arg::TotalAllocated)).num(m.total_allocated);
  if (m.bytes != 0) a.args.key(arg(Arg::MemBytes)).num(m.bytes);
  if (m.address != 0) a.args.key(arg(Arg::Addr)).num(m.address);
  if (m.device_type >= 0) {
    a.args.key(arg(Arg::DeviceId)).num(m.device);  // -1 for host memory, as PyTorch writes it
    a.args.key(arg(Arg::DeviceType)).num(m.device_type);
  } else if (m.device >= 0) {
    a.args.key(arg(Arg::DeviceId)).num(m.device);
  }
}

}  // namespace syncscope::io_detail
