// One window of a trace cut into lanes for `syncscope view` (view.hpp): a lane per host
// thread (its outermost ranges and its API calls), per GPU stream (kernels, memsets) and per
// copy engine (copies by direction, per device). Past ViewOptions::detail_limit bars a lane
// is aggregated into ViewOptions::buckets equal time buckets, each one bar carrying the
// busy union, the event count and the longest event's name, so the page's element count
// stays bounded whatever the trace's size.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_set>

#include "html_format.hpp"
#include "view_internal.hpp"

namespace syncscope::view_detail {

namespace {

struct Event {
  Ns start, end;
  ViewBarKind kind;
  std::string_view name;
};

struct LaneAcc {
  ViewLane lane;
  std::vector<Event> events;
};

std::string short_name(std::string_view s) {
  constexpr std::size_t kMax = 120;  // templated kernel names run to kilobytes
  return clip(s, kMax);
}

ViewBarKind copy_kind(CopyKind k) {
  switch (k) {
    case CopyKind::HtoD: return ViewBarKind::H2D;
    case CopyKind::DtoH: return ViewBarKind::D2H;
    default: return ViewBarKind::Copy;
  }
}

// Aggregation: per bucket the busy union (merged intervals clipped to it), the events that
// start in it (an event starting before the window counts in the first), the kind with the
// most busy time and the longest event.
std::vector<ViewBar> aggregate(std::vector<Event>& ev, Ns ws, Ns we, std::size_t buckets) {
  const double bw = static_cast<double>(we - ws) / static_cast<double>(buckets);
  auto bucket_of = [&](Ns t) {
    const auto b = static_cast<std::ptrdiff_t>(static_cast<double>(std::max<Ns>(t - ws, 0)) / bw);
    return static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(b, 0, static_cast<std::ptrdiff_t>(buckets) - 1));
  };
  auto lo_of = [&](std::size_t b) { return ws + static_cast<Ns>(static_cast<double>(b) * bw); };
  struct Acc {
    std::uint32_t events = 0;
    Ns busy = 0, first = -1, last = -1;
    Ns by_kind[8] = {};
    const Event* longest = nullptr;
  };
  std::vector<Acc> acc(buckets);
  std::stable_sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) { return a.start < b.start; });
  Ns cur_hi = std::numeric_limits<Ns>::min();
  auto flush = [&](Ns lo, Ns hi, const Event* kind_of) {
    for (std::size_t b = bucket_of(lo); b < buckets; ++b) {
      const Ns blo = lo_of(b), bhi = b + 1 == buckets ? we : lo_of(b + 1);
      if (blo >= hi) break;
      const Ns a = std::max(lo, blo), z = std::min(hi, bhi);
      if (z <= a) continue;
      acc[b].busy += z - a;
      acc[b].by_kind[static_cast<int>(kind_of->kind)] += z - a;
      acc[b].first = acc[b].first < 0 ? a : std::min(acc[b].first, a);
      acc[b].last = std::max(acc[b].last, z);
    }
  };
  for (const Event& e : ev) {
    const Ns s = std::max(e.start, ws), z = std::min(e.end, we);
    Acc& a = acc[bucket_of(s)];
    ++a.events;
    if (!a.longest || e.end - e.start > a.longest->end - a.longest->start) a.longest = &e;
    if (z <= s) continue;
    // Merge into the running union; what is new beyond it goes to the buckets.
    if (z > cur_hi) {
      flush(std::max(cur_hi, s), z, &e);
      cur_hi = z;
    }
  }
  std::vector<ViewBar> bars;
  for (std::size_t b = 0; b < buckets; ++b) {
    const Acc& a = acc[b];
    if (a.events == 0 && a.busy == 0) continue;
    ViewBar bar;
    bar.kind =
        static_cast<ViewBarKind>(std::max_element(std::begin(a.by_kind), std::end(a.by_kind)) - std::begin(a.by_kind));
    bar.start = a.first >= 0 ? a.first : lo_of(b);
    bar.end = a.last >= 0 ? a.last : bar.start;
    bar.events = a.events;
    bar.busy_ns = a.busy;
    bar.label = fmt::format("{} event(s) starting here", a.events);
    if (a.longest) bar.label += "; longest: " + short_name(a.longest->name);
    bars.push_back(std::move(bar));
  }
  return bars;
}

}  // namespace

void cut_lanes(const Trace& trace, ViewTrace& v, const ViewOptions& o) {
  Ns ws = v.window_start, we = v.window_end;
  // The window reaches to the end of the GPU work its host calls launched (queued work runs
  // after the step's host range has closed).
  std::unordered_set<std::uint64_t> launched;
  for (const auto& c : trace.api_calls)
    if (c.start >= ws && c.start < we && c.correlation != 0) launched.insert(c.correlation);
  auto extend = [&](const GpuActivity& a) {
    if (a.correlation != 0 && launched.count(a.correlation)) we = std::max(we, a.end);
  };
  if (v.has_step) {
    for (const auto& k : trace.kernels) extend(k);
    for (const auto& m : trace.memcpys) extend(m);
    for (const auto& m : trace.memsets) extend(m);
  }
  v.window_end = we;
  auto in = [&](Ns s, Ns e) { return e > ws && s < we; };

  using Key = std::tuple<int, std::int64_t, std::int64_t>;  // lane kind, then (pid, tid) or (device, stream/kind)
  std::map<Key, LaneAcc> lanes;
  auto lane = [&](ViewLane::Kind kind, std::int64_t a, std::int64_t b) -> LaneAcc& {
    auto [it, fresh] = lanes.try_emplace({static_cast<int>(kind), a, b});
    if (fresh) {
      ViewLane& l = it->second.lane;
      l.kind = kind;
      if (kind == ViewLane::Kind::Host) {
        l.pid = a, l.tid = b, l.name = fmt::format("host pid {} tid {}", a, b);
      } else {
        l.device = static_cast<std::int32_t>(a);
        l.stream = kind == ViewLane::Kind::Stream ? b : -1;
        l.name = kind == ViewLane::Kind::Stream
                     ? fmt::format("GPU {} stream {}", a, b)
                     : fmt::format("GPU {} copies {}", a, kind_name(static_cast<CopyKind>(b)));
      }
    }
    return it->second;
  };
  for (const auto& r : trace.ranges)
    if (r.kind != RangeKind::GpuUserAnnotation && r.depth <= 0 && in(r.start, r.end))
      lane(ViewLane::Kind::Host, r.pid, r.tid)
          .events.push_back({r.start, r.end, ViewBarKind::Range, trace.str(r.name)});
  for (const auto& c : trace.api_calls)
    if (in(c.start, c.end))
      lane(ViewLane::Kind::Host, c.pid, c.tid).events.push_back({c.start, c.end, ViewBarKind::Api, trace.str(c.name)});
  for (const auto& k : trace.kernels)
    if (in(k.start, k.end)) {
      const std::string_view n = trace.str(k.name);
      lane(ViewLane::Kind::Stream, k.device, k.stream)
          .events.push_back({k.start, k.end, is_communication_kernel(n) ? ViewBarKind::Comm : ViewBarKind::Kernel, n});
    }
  for (const auto& m : trace.memsets)
    if (in(m.start, m.end))
      lane(ViewLane::Kind::Stream, m.device, m.stream)
          .events.push_back({m.start, m.end, ViewBarKind::Memset, "Memset"});
  for (const auto& m : trace.memcpys)
    if (in(m.start, m.end))
      lane(ViewLane::Kind::CopyEngine, m.device, static_cast<std::int64_t>(m.kind))
          .events.push_back({m.start, m.end, copy_kind(m.kind), kind_name(m.kind)});

  std::vector<LaneAcc*> order;
  for (auto& [key, l] : lanes) order.push_back(&l);
  if (order.size() > o.max_lanes) {  // keep the busiest lanes, in their drawing order
    std::vector<LaneAcc*> by_events = order;
    std::stable_sort(by_events.begin(), by_events.end(),
                     [](const LaneAcc* a, const LaneAcc* b) { return a->events.size() > b->events.size(); });
    std::unordered_set<const LaneAcc*> keep(by_events.begin(),
                                            by_events.begin() + static_cast<std::ptrdiff_t>(o.max_lanes));
    std::erase_if(order, [&](const LaneAcc* l) { return !keep.count(l); });
    v.sampling_notes.push_back(
        fmt::format("{} of {} lanes drawn (those with the most events in the window)", o.max_lanes, lanes.size()));
  }
  std::size_t aggregated = 0;
  for (LaneAcc* l : order) {
    ViewLane out = std::move(l->lane);
    out.events = l->events.size();
    v.events_in_window += out.events;
    if (l->events.size() > o.detail_limit && we > ws) {
      out.aggregated = true;
      ++aggregated;
      out.bars = aggregate(l->events, ws, we, o.buckets);
    } else {
      for (const Event& e : l->events)
        out.bars.push_back({e.kind, e.start, e.end, 1, e.end - e.start, short_name(e.name)});
    }
    v.bars_drawn += out.bars.size();
    v.lanes.push_back(std::move(out));
  }
  if (aggregated > 0)
    v.sampling_notes.push_back(fmt::format(
        "{} lane(s) with more than {} events in the window are drawn aggregated: {} equal time buckets of {} each, "
        "a bar per bucket whose shade is the busy share of the bucket (its tooltip gives the event count and the "
        "longest event); {} events are drawn as {} bars",
        aggregated, o.detail_limit, o.buckets,
        html::duration_text(static_cast<double>(we - ws) / static_cast<double>(o.buckets)), v.events_in_window,
        v.bars_drawn));
}

}  // namespace syncscope::view_detail
