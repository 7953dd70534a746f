// Idle-time attribution over the GPU window (definitions in syncscope/analysis/idle.hpp).
//
// One sort of all GPU activity by (device, stream, start) gives each activity the launch
// time of the previous activity of its stream; a second order by (device, start) gives the
// device timelines. Each gap between busy intervals is classified once, by the activity that
// ends it, with binary searches into sorted sync returns and stream-wait marks: O(n log n)
// in the number of records. A window's breakdown is then the measure of each class's
// IntervalSet inside it, so busy + classes == window holds exactly.
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "analysis_internal.hpp"
#include "idle_internal.hpp"

namespace syncscope {

IdleVerdict verdict_of(const IdleBreakdown& b) {
  if (b.window_ns <= 0) return IdleVerdict::NoGpuActivity;
  if (fraction(b.busy_ns, b.window_ns) >= kGpuBoundBusyFraction) return IdleVerdict::GpuBound;
  // The largest idle class names the bound; ties go to the class listed first (the one
  // the user can act on most directly: syncs, then the host, then dependencies).
  const std::pair<Ns, IdleVerdict> c[] = {{b.sync_bubble_ns, IdleVerdict::SyncBound},
                                          {b.host_wait_ns, IdleVerdict::HostBound},
                                          {b.dependency_wait_ns, IdleVerdict::DependencyBound},
                                          {b.other_ns, IdleVerdict::OtherIdle}};
  const auto* best = &c[0];
  for (const auto& x : c)
    if (x.first > best->first) best = &x;
  return best->second;
}

std::string_view verdict_name(IdleVerdict v) {
  switch (v) {
    case IdleVerdict::NoGpuActivity: return "no-gpu-activity";
    case IdleVerdict::GpuBound: return "gpu-bound";
    case IdleVerdict::HostBound: return "host-bound";
    case IdleVerdict::SyncBound: return "sync-bound";
    case IdleVerdict::DependencyBound: return "dependency-bound";
    case IdleVerdict::OtherIdle: return "other-idle";
  }
  return "unknown";
}

std::string_view idle_class_name(IdleClass c) {
  switch (c) {
    case IdleClass::SyncBubble: return "sync_bubble";
    case IdleClass::HostWait: return "host_wait";
    case IdleClass::DependencyWait: return "dependency_wait";
    case IdleClass::Other: return "other";
  }
  return "other";
}

namespace analysis_detail {
namespace {

struct Act {
  std::int32_t device;
  std::int64_t stream;
  Ns start, end;
  Ns launch;       // start of the launching API call; kNoLaunch when not in the trace
  Ns prev_launch;  // launch of the previous activity of the same stream; kNoLaunch when none
};

// Host times of stream-wait-events. Records name the waiting stream; when the trace has no
// such record, each cudaStreamWaitEvent call counts for every stream (the call itself does
// not say which).
class WaitMarks {
 public:
  WaitMarks(const Trace& trace, const std::vector<Ns>& wait_call_starts) {
    for (const auto& s : trace.syncs)
      if (s.type == SyncType::StreamWaitEvent && s.stream >= 0) known_[{s.device, s.stream}].push_back(s.start);
    for (auto& [key, v] : known_) std::sort(v.begin(), v.end());
    if (known_.empty()) any_ = wait_call_starts;  // already sorted
  }
  // A wait for (device, stream) issued in (lo, hi].
  bool any_in(std::int32_t device, std::int64_t stream, Ns lo, Ns hi) const {
    auto in = [&](const std::vector<Ns>& v) {
      auto it = std::upper_bound(v.begin(), v.end(), lo);
      return it != v.end() && *it <= hi;
    };
    if (in(any_)) return true;
    for (std::int32_t d : {device, std::int32_t{-1}}) {
      auto it = known_.find({d, stream});
      if (it != known_.end() && in(it->second)) return true;
    }
    return false;
  }

 private:
  std::map<std::pair<std::int32_t, std::int64_t>, std::vector<Ns>> known_;
  std::vector<Ns> any_;
};

// Sync returns per device (index of the point), sorted; points of unknown device apply to all.
class SyncReturns {
 public:
  explicit SyncReturns(const std::vector<SyncPoint>& points) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto idx = static_cast<std::uint32_t>(i);
      (points[i].device < 0 ? unknown_ : by_device_[points[i].device]).emplace_back(points[i].end, idx);
    }
    for (auto& [d, v] : by_device_) std::sort(v.begin(), v.end());
    std::sort(unknown_.begin(), unknown_.end());
  }
  // The latest sync of `device` returning in [lo, hi]; UINT32_MAX when none.
  std::uint32_t last_in(std::int32_t device, Ns lo, Ns hi) const {
    std::uint32_t best = kNone;
    Ns best_t = std::numeric_limits<Ns>::min();
    auto look = [&](const std::vector<std::pair<Ns, std::uint32_t>>& v) {
      auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(hi, kNone));
      if (it == v.begin()) return;
      --it;
      if (it->first >= lo && it->first >= best_t) {
        best = it->second;
        best_t = it->first;
      }
    };
    if (auto it = by_device_.find(device); it != by_device_.end()) look(it->second);
    look(unknown_);
    return best;
  }
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

 private:
  std::map<std::int32_t, std::vector<std::pair<Ns, std::uint32_t>>> by_device_;
  std::vector<std::pair<Ns, std::uint32_t>> unknown_;
};

// A stream's gap that a sync ended, split by what the whole device did meanwhile: a sync
// bubble only where the device's own timeline has one (the device was idle behind a sync;
// its cause is the device's), dependency wait where another stream of the device ran, and
// the device's class elsewhere (host wait, other). So a stream's sync bubble is never more
// than its device's, and the pieces sum to the gap exactly.
void split_stream_sync_gap(IdleTimeline& tl, const IdleTimeline& device, Ns g0, Ns g1) {
  auto it = std::upper_bound(device.sync_gaps.begin(), device.sync_gaps.end(), g0,
                             [](Ns t, const IdleTimeline::SyncGap& g) { return t < g.end; });
  Ns bubble = 0;
  for (; it != device.sync_gaps.end() && it->start < g1; ++it) {
    const Ns a = std::max(g0, it->start), b = std::min(g1, it->end);
    if (b <= a) continue;
    tl.sync_gaps.push_back({a, b, it->point});
    bubble += b - a;
  }
  const auto measure = [&](IdleClass c) { return device.by_class[static_cast<int>(c)].measure(g0, g1); };
  const Ns busy = device.busy.measure(g0, g1);
  const Ns host = measure(IdleClass::HostWait), dependency = measure(IdleClass::DependencyWait);
  tl.class_total[static_cast<int>(IdleClass::SyncBubble)] += bubble;
  tl.class_total[static_cast<int>(IdleClass::HostWait)] += host;
  tl.class_total[static_cast<int>(IdleClass::DependencyWait)] += busy + dependency;
  tl.class_total[static_cast<int>(IdleClass::Other)] += (g1 - g0) - bubble - busy - host - dependency;
}

// Classifies the gaps of one timeline: `order` lists its activities by start. With
// `keep_sets`, each class as an IntervalSet (windows measure them); without (streams, only
// ever measured whole), only each class's total, which saves the memory. `device`: for a
// stream, its device's classified timeline (with sets).
IdleTimeline classify(const std::vector<Act>& acts, const std::vector<std::uint32_t>& order, std::size_t first,
                      std::size_t last, std::int64_t stream, const IdleTimeline* device, const SyncReturns& syncs,
                      const WaitMarks& waits, bool keep_sets) {
  const IntervalSet* device_busy = device ? &device->busy : nullptr;
  IdleTimeline tl;
  tl.device = acts[order[first]].device;
  tl.stream = stream;
  std::vector<std::pair<Ns, Ns>> buf;
  buf.reserve(last - first);
  for (std::size_t i = first; i < last; ++i) buf.emplace_back(acts[order[i]].start, acts[order[i]].end);
  tl.busy = IntervalSet(std::move(buf));
  if (tl.busy.empty()) return tl;
  tl.first = tl.busy.start(0);
  tl.last = tl.busy.end(tl.busy.size() - 1);
  std::vector<std::pair<Ns, Ns>> cls[kIdleClasses];
  std::size_t k = first;  // walks `order` to the activity that ends each gap
  for (std::size_t g = 0; g + 1 < tl.busy.size(); ++g) {
    const Ns g0 = tl.busy.end(g), g1 = tl.busy.start(g + 1);
    // The activity ending the gap: the first (by start) non-empty one starting at g1.
    while (k < last && (acts[order[k]].start < g1 || acts[order[k]].end <= acts[order[k]].start)) ++k;
    const Act& a = acts[order[k < last ? k : last - 1]];
    IdleClass c = IdleClass::Other;
    const Ns hi = a.launch == kNoLaunch ? g1 : std::min(g1, a.launch);
    const std::uint32_t sp = syncs.last_in(tl.device, g0, hi);
    if (sp != SyncReturns::kNone && device && !keep_sets) {
      split_stream_sync_gap(tl, *device, g0, g1);
      ++tl.gaps;
      continue;
    }
    if (sp != SyncReturns::kNone) {
      c = IdleClass::SyncBubble;
      tl.sync_gaps.push_back({g0, g1, sp});
    } else if (a.launch != kNoLaunch && a.launch > g0) {
      c = IdleClass::HostWait;
    } else if (a.launch != kNoLaunch && (waits.any_in(a.device, a.stream, a.prev_launch, a.launch) ||
                                         (device_busy && device_busy->measure(g0, g1) > 0))) {
      c = IdleClass::DependencyWait;
    }
    if (keep_sets) cls[static_cast<int>(c)].emplace_back(g0, g1);
    tl.class_total[static_cast<int>(c)] += g1 - g0;
    ++tl.gaps;
  }
  tl.has_sets = keep_sets;
  if (keep_sets)
    for (int c = 0; c < kIdleClasses; ++c) tl.by_class[c] = IntervalSet(std::move(cls[c]));
  return tl;
}

}  // namespace

IdleAttribution::IdleAttribution(const Trace& trace, const std::vector<SyncPoint>& points,
                                 const std::vector<Ns>& wait_call_starts, const LaunchIndex& launches)
    : points_(&points) {
  // All activity in (start, end) order: a merge of the three record vectors, which
  // Trace::finalize sorted that way.
  std::vector<Act> acts;
  acts.reserve(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  {
    std::size_t i = 0, j = 0, k = 0;
    const auto& K = trace.kernels;
    const auto& C = trace.memcpys;
    const auto& S = trace.memsets;
    auto before = [](const GpuActivity& x, const GpuActivity& y) {
      return std::tie(x.start, x.end) < std::tie(y.start, y.end);
    };
    while (i < K.size() || j < C.size() || k < S.size()) {
      const GpuActivity* g = nullptr;
      int which = 0;
      if (i < K.size()) g = &K[i], which = 0;
      if (j < C.size() && (!g || before(C[j], *g))) g = &C[j], which = 1;
      if (k < S.size() && (!g || before(S[k], *g))) g = &S[k], which = 2;
      (which == 0 ? i : which == 1 ? j : k)++;
      acts.push_back({g->device, g->stream, g->start, g->end, launches.start(g->correlation), kNoLaunch});
    }
  }
  if (acts.empty()) return;
  if (!std::is_sorted(acts.begin(), acts.end(),
                      [](const Act& x, const Act& y) { return std::tie(x.start, x.end) < std::tie(y.start, y.end); }))
    std::stable_sort(acts.begin(), acts.end(),
                     [](const Act& x, const Act& y) { return std::tie(x.start, x.end) < std::tie(y.start, y.end); });

  // Orders by (device, stream, start) and (device, start): counting sorts of the start order
  // into a few buckets, O(n), stable.
  auto bucket_order = [&](auto key_of) {
    std::map<decltype(key_of(acts[0])), std::uint32_t> ids;
    for (const auto& a : acts) ids.emplace(key_of(a), 0);
    std::uint32_t next = 0;
    for (auto& [key, id] : ids) id = next++;
    std::vector<std::uint32_t> bucket(acts.size()), count(next + 1, 0);
    auto last = ids.begin();
    for (std::size_t i = 0; i < acts.size(); ++i) {
      const auto key = key_of(acts[i]);
      if (last->first != key) last = ids.find(key);
      bucket[i] = last->second;
      ++count[last->second + 1];
    }
    for (std::uint32_t b = 0; b < next; ++b) count[b + 1] += count[b];
    std::vector<std::uint32_t> out(acts.size());
    for (std::size_t i = 0; i < acts.size(); ++i) out[count[bucket[i]]++] = static_cast<std::uint32_t>(i);
    return out;
  };
  const std::vector<std::uint32_t> order =
      bucket_order([](const Act& a) { return std::make_pair(a.device, a.stream); });
  for (std::size_t i = 1; i < order.size(); ++i) {
    const Act& p = acts[order[i - 1]];
    Act& a = acts[order[i]];
    if (p.device == a.device && p.stream == a.stream) a.prev_launch = p.launch;
  }
  const std::vector<std::uint32_t> by_device = bucket_order([](const Act& a) { return a.device; });

  const SyncReturns syncs(points);
  const WaitMarks waits(trace, wait_call_starts);

  for (std::size_t i = 0; i < by_device.size();) {
    std::size_t j = i;
    while (j < by_device.size() && acts[by_device[j]].device == acts[by_device[i]].device) ++j;
    devices_.push_back(classify(acts, by_device, i, j, -1, nullptr, syncs, waits, true));
    i = j;
  }
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    const Act& a = acts[order[i]];
    while (j < order.size() && acts[order[j]].device == a.device && acts[order[j]].stream == a.stream) ++j;
    const IdleTimeline* dev = nullptr;
    for (const auto& d : devices_)
      if (d.device == a.device) dev = &d;
    const IdleTimeline tl = classify(acts, order, i, j, a.stream, dev, syncs, waits, false);
    streams_.push_back(whole(tl));
    i = j;
  }
}

void IdleAttribution::add(const IdleTimeline& tl, Ns a, Ns b, IdleBreakdown& out) const {
  a = std::max(a, tl.first);
  b = std::min(b, tl.last);
  if (b <= a) return;
  out.window_ns += b - a;
  out.busy_ns += tl.busy.measure(a, b);
  const bool whole_window = a == tl.first && b == tl.last;
  for (int c = 0; c < kIdleClasses; ++c)
    out.of(static_cast<IdleClass>(c)) +=
        whole_window || !tl.has_sets ? tl.class_total[c] : tl.by_class[c].measure(a, b);
  auto it = std::upper_bound(tl.sync_gaps.begin(), tl.sync_gaps.end(), a,
                             [](Ns t, const IdleTimeline::SyncGap& g) { return t < g.end; });
  for (; it != tl.sync_gaps.end() && it->start < b; ++it)
    out.sync_bubble_by_cause[(*points_)[it->point].cause] += std::min(b, it->end) - std::max(a, it->start);
}

IdleBreakdown IdleAttribution::measure(Ns a, Ns b, bool all) const {
  IdleBreakdown out;
  for (const auto& tl : devices_) add(tl, all ? tl.first : a, all ? tl.last : b, out);
  return out;
}

TimelineIdle IdleAttribution::whole(const IdleTimeline& tl) const {
  TimelineIdle t;
  t.device = tl.device;
  t.stream = tl.stream;
  t.first_ns = tl.first;
  t.last_ns = tl.last;
  t.gaps = tl.gaps;
  add(tl, tl.first, tl.last, t.idle);
  t.verdict = verdict_of(t.idle);
  return t;
}

std::vector<TimelineIdle> IdleAttribution::devices() const {
  std::vector<TimelineIdle> out;
  out.reserve(devices_.size());
  for (const auto& tl : devices_) out.push_back(whole(tl));
  return out;
}

}  // namespace analysis_detail
}  // namespace syncscope
