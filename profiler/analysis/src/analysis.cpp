// Window statistics (whole trace, steps, layers) over the sync points and GPU activity.
//
// Every per-device quantity (busy, kernel time, copy time and overlapped copy time per
// direction) is built once as a sorted disjoint IntervalSet; a window's value is then its
// measure inside the window, O(log n) per window and device. Counts by start use sorted
// start vectors the same way. Clipping a union to a window equals the union of the
// clipped intervals, so the per-window numbers are exact, not approximations.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <tuple>

#include "analysis_internal.hpp"
#include "gpu_internal.hpp"
#include "hta_extras_internal.hpp"
#include "idle_internal.hpp"
#include "interval_set.hpp"
#include "legacy_ranges.hpp"
#include "syncscope/core/glob.hpp"

namespace syncscope {

using analysis_detail::DeviceTimeline;
using analysis_detail::IntervalSet;

namespace {

struct DeviceSets {
  std::int32_t device = -1;
  IntervalSet busy;
  IntervalSet kernel;
  IntervalSet compute;          // kernels that are not communication
  IntervalSet comm;             // communication (NCCL/RCCL) kernels
  IntervalSet comm_overlapped;  // comm ∩ compute: communication hidden behind compute
  IntervalSet h2d_copy, h2d_overlapped;
  IntervalSet d2h_copy, d2h_overlapped;
};

struct StreamInterval {
  std::int32_t device;
  std::int64_t stream;
  Ns start, end;
  bool operator<(const StreamInterval& o) const {
    return std::tie(device, stream, start, end) < std::tie(o.device, o.stream, o.start, o.end);
  }
};

// Pieces of time on one device during which `count` streams run kernels; `stream_sum` is
// the sum of their stream ids (mod 2^64), which names the stream when count == 1.
struct KernelSegment {
  Ns start, end;
  std::uint32_t count;
  std::uint64_t stream_sum;
};

// Merges sorted intervals of one (device, stream) run [first, last) in place into `out`.
void merge_run(const std::vector<StreamInterval>& v, std::size_t first, std::size_t last,
               std::vector<std::pair<Ns, Ns>>& out) {
  for (std::size_t k = first; k < last; ++k) {
    if (v[k].end <= v[k].start) continue;
    if (!out.empty() && v[k].start <= out.back().second) out.back().second = std::max(out.back().second, v[k].end);
    else out.emplace_back(v[k].start, v[k].end);
  }
}

// Kernel concurrency segments of one device from its kernels [first, last) in `kernels`
// (sorted by stream, start).
std::vector<KernelSegment> kernel_segments(const std::vector<StreamInterval>& kernels, std::size_t first,
                                           std::size_t last) {
  struct Edge {
    Ns t;
    int delta;
    std::uint64_t stream;
  };
  std::vector<Edge> edges;
  std::vector<std::pair<Ns, Ns>> merged;
  for (std::size_t i = first; i < last;) {
    std::size_t j = i;
    while (j < last && kernels[j].stream == kernels[i].stream) ++j;
    merged.clear();
    merge_run(kernels, i, j, merged);
    const auto s = static_cast<std::uint64_t>(kernels[i].stream);
    for (const auto& [a, b] : merged) {
      edges.push_back({a, +1, s});
      edges.push_back({b, -1, s});
    }
    i = j;
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::vector<KernelSegment> segs;
  std::uint32_t count = 0;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < edges.size();) {
    const Ns t = edges[i].t;
    for (; i < edges.size() && edges[i].t == t; ++i) {
      count = static_cast<std::uint32_t>(static_cast<int>(count) + edges[i].delta);
      sum += edges[i].delta > 0 ? edges[i].stream : (~edges[i].stream + 1);  // wrap-around subtract
    }
    if (i < edges.size() && count > 0) segs.push_back({t, edges[i].t, count, sum});
  }
  return segs;
}

// Intersection of two sets (both sorted and disjoint): one merge pass.
IntervalSet intersect(const IntervalSet& x, const IntervalSet& y) {
  std::vector<std::pair<Ns, Ns>> out;
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const Ns a = std::max(x.start(i), y.start(j)), b = std::min(x.end(i), y.end(j));
    if (a < b) out.emplace_back(a, b);
    if (x.end(i) < y.end(j)) ++i;
    else ++j;
  }
  return IntervalSet(std::move(out));
}

// Copy union and "copy while a kernel runs on another stream of the device" for copies of
// one direction on one device (`copies` [first, last) sorted by stream, start).
void copy_overlap(const std::vector<StreamInterval>& copies, std::size_t first, std::size_t last,
                  const std::vector<KernelSegment>& segs, IntervalSet& copy_set, IntervalSet& overlapped_set) {
  std::vector<std::pair<Ns, Ns>> all, over, merged;
  for (std::size_t i = first; i < last;) {
    std::size_t j = i;
    while (j < last && copies[j].stream == copies[i].stream) ++j;
    const auto s = static_cast<std::uint64_t>(copies[i].stream);
    merged.clear();
    merge_run(copies, i, j, merged);
    for (const auto& [a, b] : merged) {
      all.emplace_back(a, b);
      auto it = std::upper_bound(segs.begin(), segs.end(), a, [](Ns t, const KernelSegment& g) { return t < g.end; });
      for (; it != segs.end() && it->start < b; ++it) {
        const bool other_stream = it->count >= 2 || (it->count == 1 && it->stream_sum != s);
        if (other_stream) over.emplace_back(std::max(a, it->start), std::min(b, it->end));
      }
    }
    i = j;
  }
  copy_set = IntervalSet(std::move(all));
  overlapped_set = IntervalSet(std::move(over));
}

// Per interned kernel name: 1 when it is a communication kernel (judged once per name).
std::vector<std::uint8_t> communication_names(const Trace& trace) {
  std::vector<std::uint8_t> memo(trace.strings.size(), 2);  // 2: not judged yet
  for (const auto& k : trace.kernels) {
    if (k.name >= memo.size() || memo[k.name] != 2) continue;
    memo[k.name] = is_communication_kernel(trace.str(k.name)) ? 1 : 0;
  }
  return memo;
}

bool is_comm(const std::vector<std::uint8_t>& memo, const Kernel& k) {
  return k.name < memo.size() && memo[k.name] == 1;
}

std::vector<DeviceSets> build_device_sets(const Trace& trace, const std::vector<DeviceTimeline>& timelines) {
  std::vector<StreamInterval> kernels, h2d, d2h, comm;
  kernels.reserve(trace.kernels.size());
  const auto comm_memo = communication_names(trace);
  for (const auto& k : trace.kernels) {
    kernels.push_back({k.device, k.stream, k.start, k.end});
    if (is_comm(comm_memo, k)) comm.push_back({k.device, k.stream, k.start, k.end});
  }
  for (const auto& m : trace.memcpys) {
    if (m.kind == CopyKind::HtoD) h2d.push_back({m.device, m.stream, m.start, m.end});
    if (m.kind == CopyKind::DtoH) d2h.push_back({m.device, m.stream, m.start, m.end});
  }
  std::sort(kernels.begin(), kernels.end());
  std::sort(comm.begin(), comm.end());
  std::sort(h2d.begin(), h2d.end());
  std::sort(d2h.begin(), d2h.end());
  auto device_range = [](const std::vector<StreamInterval>& v, std::int32_t d) {
    auto lo = std::lower_bound(v.begin(), v.end(), d,
                               [](const StreamInterval& x, std::int32_t dev) { return x.device < dev; });
    auto hi = std::upper_bound(v.begin(), v.end(), d,
                               [](std::int32_t dev, const StreamInterval& x) { return dev < x.device; });
    return std::make_pair(static_cast<std::size_t>(lo - v.begin()), static_cast<std::size_t>(hi - v.begin()));
  };

  std::vector<DeviceSets> out;
  std::vector<std::pair<Ns, Ns>> buf;
  for (const auto& tl : timelines) {
    DeviceSets ds;
    ds.device = tl.device;
    buf.clear();
    buf.reserve(tl.starts.size());
    for (std::size_t i = 0; i < tl.starts.size(); ++i) buf.emplace_back(tl.starts[i], tl.ends[i]);
    ds.busy = IntervalSet(buf);
    auto [k0, k1] = device_range(kernels, tl.device);
    buf.clear();
    for (std::size_t i = k0; i < k1; ++i) buf.emplace_back(kernels[i].start, kernels[i].end);
    ds.kernel = IntervalSet(buf);
    {
      // Compute: the kernels that are not communication, as one sorted pass over both
      // (kernels and comm are sorted the same way, comm a sub-sequence of kernels).
      auto [c0, c1] = device_range(comm, tl.device);
      std::vector<std::pair<Ns, Ns>> cbuf, kbuf;
      std::size_t c = c0;
      for (std::size_t i = k0; i < k1; ++i) {
        const auto& k = kernels[i];
        if (c < c1 && !(k < comm[c]) && !(comm[c] < k)) {
          cbuf.emplace_back(k.start, k.end);
          ++c;
        } else {
          kbuf.emplace_back(k.start, k.end);
        }
      }
      ds.comm = IntervalSet(std::move(cbuf));
      ds.compute = IntervalSet(std::move(kbuf));
      ds.comm_overlapped = intersect(ds.comm, ds.compute);
    }
    const auto segs = kernel_segments(kernels, k0, k1);
    auto [h0, h1] = device_range(h2d, tl.device);
    copy_overlap(h2d, h0, h1, segs, ds.h2d_copy, ds.h2d_overlapped);
    auto [e0, e1] = device_range(d2h, tl.device);
    copy_overlap(d2h, e0, e1, segs, ds.d2h_copy, ds.d2h_overlapped);
    out.push_back(std::move(ds));
  }
  return out;
}

// Everything a window needs, sorted once.
struct Indexes {
  std::vector<DeviceSets> devices;
  std::vector<Ns> kernel_starts;
  std::vector<Ns> comm_kernel_starts;
  std::vector<Ns> memcpy_starts;
  std::vector<std::uint64_t> memcpy_bytes_prefix;  // over memcpy_starts order
  const std::vector<SyncPoint>* points = nullptr;  // sorted by start
  const std::vector<Ns>* wait_starts = nullptr;
  const analysis_detail::IdleAttribution* idle = nullptr;
};

std::pair<std::size_t, std::size_t> start_range(const std::vector<Ns>& starts, Ns a, Ns b, bool all) {
  if (all) return {0, starts.size()};
  auto lo = std::lower_bound(starts.begin(), starts.end(), a);
  auto hi = std::lower_bound(lo, starts.end(), b);
  return {static_cast<std::size_t>(lo - starts.begin()), static_cast<std::size_t>(hi - starts.begin())};
}

void finish_overlap(OverlapStats& o) { o.fraction = fraction(o.overlapped_ns, o.copy_ns); }

// `all`: the whole-trace window, which takes every record whatever its timestamps.
WindowStats window_stats(const Indexes& ix, std::string name, std::int32_t index, Ns a, Ns b, bool all) {
  WindowStats w;
  w.name = std::move(name);
  w.index = index;
  w.start = a;
  w.end = b;
  w.duration_ns = std::max<Ns>(0, b - a);
  const Ns lo = all ? std::numeric_limits<Ns>::min() : a;
  const Ns hi = all ? std::numeric_limits<Ns>::max() : b;
  for (const auto& d : ix.devices) {
    const Ns busy = d.busy.measure(lo, hi);
    w.gpu_busy_by_device[d.device] = busy;
    w.gpu_busy_ns += busy;
    w.kernel_ns += d.kernel.measure(lo, hi);
    w.compute_kernel_ns += d.compute.measure(lo, hi);
    w.comm.kernel_ns += d.comm.measure(lo, hi);
    w.comm.overlapped_ns += d.comm_overlapped.measure(lo, hi);
    w.h2d.copy_ns += d.h2d_copy.measure(lo, hi);
    w.h2d.overlapped_ns += d.h2d_overlapped.measure(lo, hi);
    w.d2h.copy_ns += d.d2h_copy.measure(lo, hi);
    w.d2h.overlapped_ns += d.d2h_overlapped.measure(lo, hi);
  }
  finish_overlap(w.h2d);
  finish_overlap(w.d2h);
  w.comm.overlap_fraction = fraction(w.comm.overlapped_ns, w.comm.kernel_ns);
  auto [k0, k1] = start_range(ix.kernel_starts, a, b, all);
  w.kernels = k1 - k0;
  auto [n0, n1] = start_range(ix.comm_kernel_starts, a, b, all);
  w.comm.kernels = n1 - n0;
  auto [m0, m1] = start_range(ix.memcpy_starts, a, b, all);
  w.memcpys = m1 - m0;
  w.memcpy_bytes = ix.memcpy_bytes_prefix[m1] - ix.memcpy_bytes_prefix[m0];

  const auto& pts = *ix.points;
  auto p0 = all ? pts.begin()
                : std::lower_bound(pts.begin(), pts.end(), a, [](const SyncPoint& p, Ns t) { return p.start < t; });
  for (auto it = p0; it != pts.end() && (all || it->start < b); ++it) {
    ++w.syncs.total;
    ++w.syncs.by_cause[it->cause];
    ++w.syncs.by_api[it->api];
    if (it->polling) ++w.syncs.polling;
    w.syncs.blocked_ns += it->blocked_ns;
    w.syncs.bubble_ns += it->bubble_ns;
  }
  auto [s0, s1] = start_range(*ix.wait_starts, a, b, all);
  w.syncs.stream_wait_events = s1 - s0;
  w.idle = ix.idle->measure(a, b, all);
  w.verdict = verdict_of(w.idle);
  return w;
}

// Host ranges (not GPU projections) whose name matches `glob`, by start.
std::vector<const Range*> matching_ranges(const Trace& trace, const std::string& glob, const AnalysisOptions& options) {
  std::vector<const Range*> out;
  if (glob.empty()) return out;
  std::vector<std::int8_t> memo(trace.strings.size(), -1);  // per interned name: -1 unknown, 0/1
  for (const auto& r : trace.ranges) {
    if (r.kind == RangeKind::GpuUserAnnotation) continue;
    if (options.pid && r.pid != *options.pid) continue;
    if (r.name >= memo.size()) continue;
    auto& m = memo[r.name];
    if (m < 0) m = glob_match(glob, trace.str(r.name)) ? 1 : 0;
    if (m) out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(), [](const Range* x, const Range* y) {
    return std::tie(x->start, y->end) < std::tie(y->start, x->end);
  });
  // The same marker recorded twice (e.g. as a user annotation and an NVTX range of the same
  // name and interval) is one window.
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Range* x, const Range* y) {
                          return x->name == y->name && x->start == y->start && x->end == y->end;
                        }),
            out.end());
  return out;
}

// Names of host ranges that look like step or layer markers, with their trailing number
// replaced by '*' ("train_step#2" -> "train_step#*"), for the "matched nothing" warning.
std::string range_name_suggestions(const Trace& trace, std::string_view needle) {
  // Per interned name: -2 not looked at yet, -1 not step-like, else index into `patterns`.
  std::vector<std::int32_t> memo(trace.strings.size(), -2);
  std::vector<std::pair<std::string, std::uint64_t>> patterns;
  std::map<std::string, std::int32_t> pattern_index;
  for (const auto& r : trace.ranges) {
    if (r.kind == RangeKind::GpuUserAnnotation || r.kind == RangeKind::CpuOp) continue;
    if (r.name >= memo.size()) continue;
    auto& m = memo[r.name];
    if (m == -2) {
      m = -1;
      std::string_view n = trace.str(r.name);
      std::string lower(n);
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      const bool numbered = !n.empty() && std::isdigit(static_cast<unsigned char>(n.back()));
      if (lower.find(needle) != std::string::npos || numbered) {
        std::string pattern(n);
        while (!pattern.empty() && std::isdigit(static_cast<unsigned char>(pattern.back()))) pattern.pop_back();
        if (numbered) pattern += '*';
        auto [it, fresh] = pattern_index.try_emplace(pattern, static_cast<std::int32_t>(patterns.size()));
        if (fresh) patterns.emplace_back(pattern, 0);
        m = it->second;
      }
    }
    if (m >= 0) ++patterns[static_cast<std::size_t>(m)].second;
  }
  // Names that say "step" ("layer") first, then by how often they occur.
  auto says = [&](const std::string& p) {
    std::string lower(p);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return lower.find(needle) != std::string::npos;
  };
  std::stable_sort(patterns.begin(), patterns.end(), [&](const auto& x, const auto& y) {
    const bool sx = says(x.first), sy = says(y.first);
    return sx != sy ? sx : x.second > y.second;
  });
  std::string out;
  for (std::size_t i = 0; i < patterns.size() && i < 5; ++i) {
    if (i) out += ", ";
    out += "'" + patterns[i].first + "' (" + std::to_string(patterns[i].second) + ")";
  }
  if (!patterns.empty() && says(patterns[0].first))
    out += "; try --" + std::string(needle) + "-range '" + patterns[0].first + "'";
  return out;
}

}  // namespace

Ns union_length(std::vector<std::pair<Ns, Ns>> intervals) { return IntervalSet(std::move(intervals)).total(); }

// Holistic Trace Analysis classifies a kernel as communication when its name starts with
// "nccl" (hta/utils/utils.py, is_nccl_kernel): NCCL names its kernels ncclKernel_* (before
// 2.19) and ncclDevKernel_* (2.19 on); RCCL, hipified from NCCL, keeps those names, and
// some RCCL builds add rcclGenericKernel.
bool is_communication_kernel(std::string_view name) {
  return name.substr(0, 4) == "nccl" || name.substr(0, 4) == "rccl";
}

Distribution distribution(std::vector<double> values) {
  Distribution d;
  d.n = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  // Linear interpolation between closest ranks (numpy's default "linear" method).
  auto pct = [&](double p) {
    const double pos = p * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
  };
  d.min = values.front();
  d.max = values.back();
  d.median = pct(0.5);
  d.p10 = pct(0.1);
  d.p90 = pct(0.9);
  return d;
}

std::vector<SyncPoint> find_sync_points(const Trace& trace, const AnalysisOptions& options) {
  const auto timelines = analysis_detail::build_timelines(trace);
  return analysis_detail::scan_sync_points(trace, options, timelines).points;
}

namespace {

// The sorted starts every window's statistics search: kernels (and communication kernels),
// copies with a prefix sum of their bytes; the device sets. The pointers are left to set.
Indexes build_indexes(const Trace& trace, const std::vector<DeviceTimeline>& timelines) {
  Indexes ix;
  ix.devices = build_device_sets(trace, timelines);
  ix.kernel_starts.reserve(trace.kernels.size());
  const auto comm_memo = communication_names(trace);
  for (const auto& k : trace.kernels) {
    ix.kernel_starts.push_back(k.start);
    if (is_comm(comm_memo, k)) ix.comm_kernel_starts.push_back(k.start);
  }
  std::sort(ix.kernel_starts.begin(), ix.kernel_starts.end());
  std::sort(ix.comm_kernel_starts.begin(), ix.comm_kernel_starts.end());
  std::vector<std::pair<Ns, std::uint64_t>> mc;
  mc.reserve(trace.memcpys.size());
  for (const auto& m : trace.memcpys) mc.emplace_back(m.start, m.bytes);
  std::sort(mc.begin(), mc.end());
  ix.memcpy_starts.reserve(mc.size());
  ix.memcpy_bytes_prefix.assign(mc.size() + 1, 0);
  for (std::size_t i = 0; i < mc.size(); ++i) {
    ix.memcpy_starts.push_back(mc[i].first);
    ix.memcpy_bytes_prefix[i + 1] = ix.memcpy_bytes_prefix[i] + mc[i].second;
  }
  return ix;
}

// The statistics of each range (steps or layers), in the order matching_ranges gives.
std::vector<WindowStats> ranges_stats(const Indexes& ix, const Trace& trace, const std::vector<const Range*>& ranges) {
  std::vector<WindowStats> out;
  out.reserve(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i)
    out.push_back(window_stats(ix, std::string(trace.str(ranges[i]->name)), static_cast<std::int32_t>(i),
                               ranges[i]->start, ranges[i]->end, false));
  return out;
}

StepSummary summarize(const std::vector<WindowStats>& windows) {
  StepSummary ss;
  if (windows.empty()) return ss;
  auto over = [&](auto metric) {
    std::vector<double> v;
    v.reserve(windows.size());
    for (const auto& s : windows) v.push_back(static_cast<double>(metric(s)));
    return distribution(std::move(v));
  };
  ss.duration_ns = over([](const WindowStats& s) { return s.duration_ns; });
  ss.gpu_busy_ns = over([](const WindowStats& s) { return s.gpu_busy_ns; });
  ss.compute_kernel_ns = over([](const WindowStats& s) { return s.compute_kernel_ns; });
  ss.comm_kernel_ns = over([](const WindowStats& s) { return s.comm.kernel_ns; });
  ss.syncs = over([](const WindowStats& s) { return s.syncs.total; });
  ss.sync_blocked_ns = over([](const WindowStats& s) { return s.syncs.blocked_ns; });
  ss.sync_bubble_ns = over([](const WindowStats& s) { return s.syncs.bubble_ns; });
  ss.h2d_overlap_fraction = over([](const WindowStats& s) { return s.h2d.fraction; });
  ss.d2h_overlap_fraction = over([](const WindowStats& s) { return s.d2h.fraction; });
  return ss;
}

// Sync points by cause, the costliest (blocked + bubble) first, then the most frequent.
std::vector<Offender> worst_offenders(const std::vector<SyncPoint>& points) {
  std::map<std::string, Offender> by_cause;
  for (const auto& p : points) {
    auto& o = by_cause[p.cause];
    o.cause = p.cause;
    ++o.count;
    o.blocked_ns += p.blocked_ns;
    o.bubble_ns += p.bubble_ns;
  }
  std::vector<Offender> worst;
  for (auto& [cause, o] : by_cause) worst.push_back(std::move(o));
  std::stable_sort(worst.begin(), worst.end(), [](const Offender& x, const Offender& y) {
    const Ns cx = x.blocked_ns + x.bubble_ns, cy = y.blocked_ns + y.bubble_ns;
    return cx != cy ? cx > cy : x.count > y.count;
  });
  return worst;
}

// What the figures cannot show, each with how to record a trace that can: the reader's
// warnings first, then the scan's.
void add_warnings(const Trace& trace, const AnalysisOptions& options, const analysis_detail::SyncScan& scan,
                  bool no_steps, bool no_layers, std::vector<std::string>& w) {
  w.insert(w.end(), trace.meta.warnings.begin(), trace.meta.warnings.end());  // the reader's, first
  if (trace.meta.dropped_records > 0)
    w.push_back(std::to_string(trace.meta.dropped_records) +
                " records were dropped by the tracer: counts are lower bounds");
  const bool no_gpu = trace.kernels.empty() && trace.memcpys.empty() && trace.memsets.empty();
  if (no_gpu)
    w.push_back(
        "the trace has no GPU activity (kernels, copies, memsets): GPU busy time, bubbles and overlap are 0; "
        "record with CUDA activities enabled (torch.profiler: ProfilerActivity.CUDA)");
  if (scan.api_calls_considered == 0) {
    if (!trace.syncs.empty())
      w.push_back("the trace has " + std::to_string(trace.syncs.size()) +
                  " cuda_sync records but no CUDA runtime/driver API calls: sync points are counted from API "
                  "calls, so none were counted");
    else
      w.push_back(std::string("the trace has no CUDA runtime/driver API calls") +
                  (options.pid ? " for pid " + std::to_string(*options.pid) : std::string()) +
                  ": sync points cannot be counted");
  }
  if (!options.step_glob.empty() && no_steps) {
    const std::string hint = range_name_suggestions(trace, "step");
    w.push_back(
        "no host range matches --step-range '" + options.step_glob + "': no per-step statistics" +
        (hint.empty() ? std::string("; the trace has no step-like ranges") : "; ranges that look like steps: " + hint));
  }
  if (!options.layer_glob.empty() && no_layers) {
    const std::string hint = range_name_suggestions(trace, "layer");
    w.push_back("no host range matches --layer-range '" + options.layer_glob + "'" +
                (hint.empty() ? std::string() : "; ranges that look like layers: " + hint));
  }
  if (const std::uint64_t n = scan.unresolved_sync_copies + scan.unresolved_async_copies; n > 0)
    w.push_back(std::to_string(n) +
                " memcpy calls were not counted as sync points because the trace does not say whether "
                "they block the host (" +
                std::to_string(scan.unresolved_sync_copies) + " synchronous without a direction, " +
                std::to_string(scan.unresolved_async_copies) +
                " async device-to-host into host memory of unknown kind, not followed by a sync of their stream); "
                "record with CUDA activities so each call has its GPU copy record");
  for (const auto& rw : trace.meta.read_warnings) w.push_back(describe(rw));
  if (scan.monitor_poll_queries > 0)
    w.push_back(std::to_string(scan.monitor_poll_queries) + " polled cudaEventQuery calls on " +
                std::to_string(scan.monitor_poll_threads) +
                " thread(s) that neither queue GPU work nor block on it (a watchdog, such as PyTorch's NCCL watchdog "
                "thread pt_nccl_watchdg, which polls its collectives' events every 100 ms) are not counted as sync "
                "points: such a thread's waits delay no GPU work");
  if (scan.unknown_device_points > 0)
    w.push_back(std::to_string(scan.unknown_device_points) +
                " sync points have no device in a multi-device trace: their bubble is the largest over devices");
  if (!trace.meta.unknown_categories.empty()) {
    std::uint64_t n = 0;
    std::string cats;
    for (const auto& [cat, count] : trace.meta.unknown_categories) {
      // torch.profiler writes these in every trace for its own display (the "PyTorch
      // Profiler" span, iteration markers without a category): nothing to warn about.
      if (cat == "Trace" || cat == "(none)") continue;
      n += count;
      if (cats.size() < 80) cats += (cats.empty() ? "" : ", ") + cat;
    }
    if (n > 0)
      w.push_back(std::to_string(n) + " events of categories the analysis does not model were ignored (" + cats + ")");
  }
}

}  // namespace

AnalysisResult analyze(const Trace& trace, const AnalysisOptions& options) {
  AnalysisResult r;
  r.source = trace.meta.trace_name;
  r.meta = trace.meta;
  r.options = options;

  const auto timelines = analysis_detail::build_timelines(trace);
  auto scan = analysis_detail::scan_sync_points(trace, options, timelines);
  r.sync_points = std::move(scan.points);

  Indexes ix = build_indexes(trace, timelines);
  ix.points = &r.sync_points;
  ix.wait_starts = &scan.stream_wait_starts;
  const analysis_detail::LaunchIndex launches(trace);
  const analysis_detail::IdleAttribution idle(trace, r.sync_points, scan.stream_wait_starts, launches);
  ix.idle = &idle;
  r.idle_by_device = idle.devices();
  r.idle_by_stream = idle.streams();
  r.gpu = analysis_detail::gpu_analyses(trace, r.sync_points, launches);
  // HTA's analyses we lacked (hta_extras.hpp): kernels per ATen op, queue length over time.
  analysis_detail::aten_op_kernels(trace, launches, r.gpu.aten_ops);
  analysis_detail::queue_series(trace, launches, options.queue_full, r.gpu.queue_series);
  r.gpu.memory = analyze_memory(trace, options.pid);  // memory (issue 38): memory.hpp
  r.gpu.kernel_sequences = analysis_detail::kernel_sequences(trace, launches, options.sequences);

  const auto [t0, t1] = trace.time_span();
  r.totals = window_stats(ix, "trace", 0, t0, t1, true);
  // Legacy torch.profiler traces hold their markers as uncategorized events (legacy_ranges.hpp).
  std::vector<Range> legacy_steps, legacy_layers;
  auto steps = matching_ranges(trace, options.step_glob, options);
  if (steps.empty()) {
    legacy_steps = analysis_detail::legacy_ranges(trace, options.step_glob, options);
    for (const auto& x : legacy_steps) steps.push_back(&x);
  }
  r.steps = ranges_stats(ix, trace, steps);
  auto layers = matching_ranges(trace, options.layer_glob, options);
  if (layers.empty()) {
    legacy_layers = analysis_detail::legacy_ranges(trace, options.layer_glob, options);
    for (const auto& x : legacy_layers) layers.push_back(&x);
  }
  r.layers = ranges_stats(ix, trace, layers);
  r.step_summary = summarize(r.steps);
  r.layer_summary = summarize(r.layers);
  r.worst = worst_offenders(r.sync_points);
  add_warnings(trace, options, scan, steps.empty(), layers.empty(), r.warnings);
  return r;
}

}  // namespace syncscope
