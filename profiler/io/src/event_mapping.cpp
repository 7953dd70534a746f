// Chrome trace JSON -> Trace: one event, its fields read (event_fields.cpp), mapped by `cat`
// onto the trace model.
#include <algorithm>
#include <charconv>
#include <cstring>

#include "chrome_reader_impl.hpp"
#include "kineto_schema.hpp"
#include "text_util.hpp"

namespace syncscope::io_detail {

using schema::Arg;
using schema::ArgType;
using schema::Cat;
using schema::SsArg;

std::int64_t ChromeReader::id_or(const IdVal& v, std::int64_t dflt) const {
  if (v.kind == IdVal::Int) return v.i;
  if (v.kind == IdVal::Str) return parse_int64(v.s).value_or(dflt);
  return dflt;
}

// A GPU track's tid is its stream: a number, or "stream 7" in Kineto of 2021.
std::int64_t ChromeReader::stream_of(const IdVal& tid) const {
  if (tid.kind == IdVal::Str)
    if (auto s = stream_from_track_name(tid.s)) return *s;
  return id_or(tid, -1);
}

StringId ChromeReader::id_text(const IdVal& v) {
  if (v.kind == IdVal::Int) {
    char buf[24];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v.i);
    return intern(std::string_view(buf, static_cast<std::size_t>(p - buf)));
  }
  if (v.kind == IdVal::Str) return intern(v.s);
  return kNoString;
}

void ChromeReader::dispatch(Event& e) {
  if (!e.ph) fail("missing required field \"ph\" (the event phase, e.g. \"X\")");
  if (e.ph->size() != 1)
    fail("field \"ph\": expected a one-letter event phase, got \"" + std::string(e.ph->substr(0, 20)) + "\"");
  const char ph = (*e.ph)[0];
  if (e.args.ss_track_tid.kind != IdVal::None) e.tid = e.args.ss_track_tid;  // undo our writer's overlap lanes
  switch (ph) {
    case 's':
    case 't':
    case 'f': {
      // Flow arrows. Launch->GPU arrows ("ac2g") follow from correlation ids and are
      // re-created on write. Others (Kineto's forward->backward "fwdbwd", which Holistic
      // Trace Analysis reads) are kept as they are, with their id and binding point.
      if (e.cat && *e.cat == schema::kLaunchFlow.category) return;
      if (!e.ts) fail("missing required field \"ts\" in a flow (\"" + std::string(1, ph) + "\") event");
      if (!accept_fields(e, Cat::Other)) return;
      OtherEvent o;
      o.category = e.cat ? intern(*e.cat) : kNoString;
      o.name = e.name ? intern(*e.name) : kNoString;
      o.phase = ph;
      o.pid = id_text(e.pid);
      o.tid = id_text(e.tid);
      o.start = *e.ts;
      o.flow_id = id_text(e.id);
      o.bind_enclosing = e.bp && *e.bp == schema::kBindEnclosing;
      note_start(o.start);
      note_end(o.start);
      others_.push(o);
      return;
    }
    case 'M':
      if (accept_fields(e, Cat::Other)) handle_metadata(e);
      return;
    case 'X': handle_complete(e); return;
    default: break;
  }
  if (!e.ts) fail("missing required field \"ts\"");
  if (!e.name && ph != 'E' && ph != 'e') fail("missing required field \"name\"");
  // profile_memory events, by name: Kineto's category for them ("cpu_instant_event") holds
  // other instants too, and Kineto of 2021 wrote them without one.
  if ((ph == 'i' || ph == 'I') && e.name && *e.name == schema::kMemoryEventName) return memory_event(e);
  if (!accept_fields(e, Cat::Other)) return;
  OtherEvent o;
  o.category = e.cat ? intern(*e.cat) : kNoString;
  o.name = e.name ? intern(*e.name) : kNoString;
  o.phase = ph;
  o.pid = id_text(e.pid);
  o.tid = id_text(e.tid);
  o.start = *e.ts;
  o.duration = 0;
  note_start(o.start);
  note_end(o.start);
  ++unknown_[o.category];
  others_.push(o);
}

void ChromeReader::handle_metadata(Event& e) {
  if (!e.name) fail("missing required field \"name\" in a metadata (\"M\") event");
  if (e.args.ss_generated.value_or(false)) return;  // names our writer made up for unnamed tracks
  const bool process_order = *e.name == schema::kProcessSortIndex, thread_order = *e.name == schema::kThreadSortIndex;
  if ((process_order || thread_order) && e.args.has(Arg::SortIndex)) {
    TrackOrder o;
    o.kind = TrackOrder::Kind::SortIndex;
    o.pid = std::string(t_.str(id_text(e.pid)));
    if (thread_order) o.tid = std::string(t_.str(id_text(e.tid)));
    o.sort_index = e.args.i(Arg::SortIndex, 0);
    t_.track_order.push_back(std::move(o));
    return;
  }
  if (*e.name == schema::kProcessLabels && e.args.labels) {
    TrackOrder o;
    o.kind = TrackOrder::Kind::Labels;
    o.pid = std::string(t_.str(id_text(e.pid)));
    o.labels = std::string(*e.args.labels);
    t_.track_order.push_back(std::move(o));
    return;
  }
  if (!e.args.name) return;
  if (*e.name == schema::kProcessName) {
    t_.track_names.push_back({std::string(t_.str(id_text(e.pid))), std::string(), std::string(*e.args.name)});
  } else if (*e.name == schema::kThreadName) {
    t_.track_names.push_back(
        {std::string(t_.str(id_text(e.pid))), std::string(t_.str(id_text(e.tid))), std::string(*e.args.name)});
  }
}

template <class Record>
Record ChromeReader::activity(const Event& e, std::int64_t device, Ns start, Ns end) const {
  const Args& a = e.args;
  Record r;
  r.device = narrow32(device, "args.device");
  r.context = narrowu32(a.u(Arg::Context, 0), "args.context");
  r.stream = a.i(Arg::Stream, stream_of(e.tid));
  r.start = start;
  r.end = end;
  r.correlation = a.u(Arg::Correlation, 0);
  r.external_id = a.u(Arg::ExternalId, 0);
  return r;
}

void ChromeReader::handle_complete(Event& e) {
  if (!e.name) fail("missing required field \"name\"");
  if (!e.ts) fail("missing required field \"ts\"");
  const Cat cat = e.cat ? schema::category_of(*e.cat) : Cat::Other;
  if (!e.dur && cat != Cat::Other) fail("missing required field \"dur\" (an \"X\" event needs a duration)");
  if (!accept_fields(e, cat)) return;
  const std::int64_t start = *e.ts;
  const std::int64_t dur = e.dur.value_or(0);
  if (dur < 0) fail("negative \"dur\" (" + std::to_string(dur) + " ns); durations must be >= 0");
  const std::int64_t end = end_of(start, dur);
  note_start(start);
  note_end(end);
  const Args& a = e.args;
  const std::int64_t device = a.i(Arg::Device, id_or(e.pid, -1));
  switch (cat) {
    case Cat::Runtime:
    case Cat::Driver: {
      ApiCall r;
      r.kind = cat == Cat::Runtime ? ApiKind::Runtime : ApiKind::Driver;
      r.name = intern(*e.name);
      r.copy_kind = static_cast<CopyKind>(a.u(Arg::Kind, 0));
      r.cbid = narrow32(a.i(Arg::Cbid, -1), "args.cbid");
      r.pid = id_or(e.pid, -1);
      r.tid = id_or(e.tid, -1);
      r.start = start;
      r.end = end;
      r.correlation = a.u(Arg::Correlation, 0);
      r.external_id = a.u(Arg::ExternalId, 0);
      r.return_code = a.ss_return_code ? narrow32(*a.ss_return_code, "args.syncscope.return_code") : 0;
      r.device =
          a.ss_device ? narrow32(*a.ss_device, "args.syncscope.device") : narrow32(a.i(Arg::Device, -1), "args.device");
      api_.push(r);
      return;
    }
    case Cat::Kernel: {
      Kernel k = activity<Kernel>(e, device, start, end);
      k.name = intern(*e.name);
      if (a.has(Arg::Grid)) std::copy(std::begin(a.grid), std::end(a.grid), k.grid);
      if (a.has(Arg::Block)) std::copy(std::begin(a.block), std::end(a.block), k.block);
      k.registers_per_thread = narrow32(a.i(Arg::Registers, 0), "args.registers per thread");
      k.shared_memory_bytes = narrow32(a.i(Arg::SharedMemory, 0), "args.shared memory");
      if (a.process_group) k.process_group = intern(*a.process_group);
      collective_args(a, CollectiveArgs::On::Kernel, k.correlation);
      kernels_.push(k);
      return;
    }
    case Cat::Memcpy: return complete_memcpy(e, start, end);
    case Cat::Memset: {
      Memset m = activity<Memset>(e, device, start, end);
      m.memory_kind = parse_memset_name(*e.name);
      m.bytes = a.u(Arg::Bytes, 0);
      m.value = a.ss_value ? narrowu32(*a.ss_value, "args.syncscope.value") : 0;
      m.async = a.ss_async.value_or(false);
      memsets_.push(m);
      return;
    }
    case Cat::Sync: return complete_sync(e, device, start, end);
    case Cat::CudaEvent: {
      CudaEventRecord r;
      r.device = narrow32(device, "args.device");
      r.context = narrowu32(a.u(Arg::Context, 0), "args.context");
      r.stream = a.i(Arg::Stream, stream_of(e.tid));
      r.event_id = a.u(Arg::EventId, 0);
      r.event_sync_id = a.ss_event_sync_id.value_or(0);
      r.timestamp = start;
      r.correlation = a.u(Arg::Correlation, 0);
      events_.push(r);
      return;
    }
    case Cat::UserAnnotation:
    case Cat::GpuUserAnnotation:
    case Cat::CpuOp:
    case Cat::PythonFunction: return complete_range(e, cat, device, start, end);
    case Cat::Overhead: {
      OverheadRecord o;
      o.name = intern(*e.name);
      o.pid = id_or(e.pid, -1);
      o.tid = id_or(e.tid, -1);
      o.start = start;
      o.end = end;
      overheads_.push(o);
      return;
    }
    case Cat::Memory:  // never from category_of: memory events are instants, picked by name
    case Cat::Other: {
      OtherEvent o;
      o.category = e.cat ? intern(*e.cat) : kNoString;
      o.name = intern(*e.name);
      o.phase = 'X';
      o.pid = id_text(e.pid);
      o.tid = id_text(e.tid);
      o.start = start;
      o.duration = dur;
      ++unknown_[o.category];
      others_.push(o);
      return;
    }
  }
}

// The "X" events of handle_complete that take more than a few fields, one per kind.
void ChromeReader::complete_memcpy(const Event& e, Ns start, Ns end) {
  const Args& a = e.args;
  const std::int64_t dev = a.i(Arg::Device, a.i(Arg::InDevice, id_or(e.pid, -1)));
  Memcpy m = activity<Memcpy>(e, dev, start, end);
  if (!a.has(Arg::Context)) m.context = narrowu32(a.u(Arg::InContext, 0), "args.context");
  parse_memcpy_name(*e.name, m.kind, m.src_kind, m.dst_kind);
  if (m.kind == CopyKind::Unknown) m.kind = static_cast<CopyKind>(a.u(Arg::Kind, 0));  // ROCm: "kind": "HtoD"
  m.async = a.ss_async.value_or(false);
  m.bytes = a.u(Arg::Bytes, 0);
  if (a.ss_peer_device) {
    m.peer_device = narrow32(*a.ss_peer_device, "args.syncscope.peer_device");
  } else if (a.has(Arg::FromDevice) && a.has(Arg::ToDevice)) {
    // Kineto's peer-to-peer copies name source, executing and destination devices.
    const std::int64_t from = a.i(Arg::FromDevice, -1);
    m.peer_device = narrow32(from != dev ? from : a.i(Arg::ToDevice, -1), "args.fromDevice");
  }
  memcpys_.push(m);
}

void ChromeReader::complete_sync(const Event& e, std::int64_t device, Ns start, Ns end) {
  const Args& a = e.args;
  SyncRecord s;
  s.type = parse_kineto_sync_kind(a.sync_kind ? *a.sync_kind : *e.name);
  s.device = narrow32(device, "args.device");
  s.context = narrowu32(a.u(Arg::Context, 0), "args.context");
  // Kineto prints the stream's absolute value as tid (-1 becomes 1): only args are exact.
  s.stream = a.i(Arg::Stream, -1);
  s.event_id = a.u(Arg::WaitOnEventId, 0);
  s.event_sync_id = a.ss_event_sync_id.value_or(0);
  s.wait_on_stream = a.i(Arg::WaitOnStream, -1);
  s.start = start;
  s.end = end;
  s.correlation = a.u(Arg::Correlation, 0);
  s.external_id = a.u(Arg::ExternalId, 0);
  s.return_code = a.ss_return_code ? narrow32(*a.ss_return_code, "args.syncscope.return_code") : 0;
  s.is_query = a.ss_is_query.value_or(false);
  s.wait_on_event_record_correlation = a.i(Arg::WaitOnCorr, -1);
  syncs_.push(s);
}

void ChromeReader::complete_range(const Event& e, Cat cat, std::int64_t device, Ns start, Ns end) {
  const Args& a = e.args;
  Range r;
  r.kind = cat == Cat::UserAnnotation      ? RangeKind::UserAnnotation
           : cat == Cat::GpuUserAnnotation ? RangeKind::GpuUserAnnotation
           : cat == Cat::CpuOp             ? RangeKind::CpuOp
                                           : RangeKind::PythonFunction;
  if (a.ss_range_kind) {
    auto k = parse_range_kind(*a.ss_range_kind);
    if (!k) fail("field \"args.syncscope.range_kind\": unknown range kind \"" + std::string(*a.ss_range_kind) + "\"");
    r.kind = *k;
  }
  r.name = intern(*e.name);
  r.domain = a.ss_domain ? intern(*a.ss_domain) : kNoString;
  if (cat == Cat::GpuUserAnnotation) {
    // Kineto puts GPU annotations on the stream's track: pid = device, tid = stream.
    r.device = narrow32(device, "pid");
    r.stream = a.i(Arg::Stream, id_or(e.tid, -1));
    r.pid = a.ss_pid.value_or(-1);
    r.tid = a.ss_tid.value_or(-1);
  } else {
    r.pid = id_or(e.pid, -1);
    r.tid = id_or(e.tid, -1);
    r.device = a.ss_device ? narrow32(*a.ss_device, "args.syncscope.device") : -1;
    r.stream = a.ss_stream.value_or(-1);
  }
  r.start = start;
  r.end = end;
  r.external_id = a.u(Arg::ExternalId, 0);
  r.correlation = a.u(Arg::Correlation, 0);
  if (r.kind == RangeKind::CpuOp) collective_args(a, CollectiveArgs::On::CpuOp, 0);
  ranges_.push(r);
}

void ChromeReader::collective_args(const Args& a, CollectiveArgs::On on, std::uint64_t correlation) {
  if ((a.present & schema::kCollectiveArgs) == 0 && !a.process_group && !a.group_desc && !a.group_ranks &&
      !a.collective && !a.dtype)
    return;
  CollectiveArgs c;
  c.on = on;
  c.external_id = a.u(Arg::ExternalId, 0);
  c.correlation = correlation;
  c.seq = std::max<std::int64_t>(a.i(Arg::Seq, -1), -1);  // PyTorch writes it only when >= 0
  auto str = [&](const std::optional<std::string_view>& v) { return v ? intern(*v) : kNoString; };
  c.process_group = str(a.process_group);
  c.group_desc = str(a.group_desc);
  c.group_ranks = str(a.group_ranks);
  c.collective = str(a.collective);
  c.dtype = str(a.dtype);
  c.group_size = a.has(Arg::GroupSize) ? narrow32(a.i(Arg::GroupSize, -1), "args.Group size") : -1;
  c.in_nelems = a.i(Arg::InNelems, -1);
  c.out_nelems = a.i(Arg::OutNelems, -1);
  t_.collectives.push_back(c);
}

}  // namespace syncscope::io_detail
