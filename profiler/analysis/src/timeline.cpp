// extract_timeline: cuts one layer (or step) out of a trace as lanes of bars, for the report.
#include "syncscope/analysis/timeline.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "syncscope/core/glob.hpp"

namespace syncscope {

namespace {

struct Window {
  Ns start = 0, end = 0;
  std::string name;
};

bool inside(Ns s, Ns e, const Window& w) { return s >= w.start && e <= w.end; }

std::string stream_lane(std::int64_t stream, const Trace& t) {
  for (const auto& tn : t.track_names) {
    if (tn.tid == std::to_string(stream) && !tn.tid.empty()) return tn.name;
  }
  return "stream " + std::to_string(stream);
}

// The innermost host range (not a CPU op, not a GPU projection) that time `t` lies in.
std::string enclosing_range(const Trace& t, Ns at) {
  const Range* best = nullptr;
  for (const auto& r : t.ranges) {
    if (r.kind == RangeKind::GpuUserAnnotation || r.kind == RangeKind::CpuOp) continue;
    if (r.start <= at && at < r.end && (!best || r.end - r.start < best->end - best->start)) best = &r;
  }
  return best ? std::string(t.str(best->name)) : "no host range";
}

// The step to look in: the middle one (steady state, away from warm-up effects).
std::optional<Window> middle_step(const AnalysisResult& analysis) {
  if (analysis.steps.empty()) return std::nullopt;
  const auto& w = analysis.steps[analysis.steps.size() / 2];
  return Window{w.start, w.end, w.name};
}

// Layer ranges (host ranges matching opt.layer_glob) in that step.
std::vector<Window> layer_windows(const Trace& trace, const TimelineOptions& opt, const std::optional<Window>& step) {
  std::vector<Window> layers;
  for (const auto& r : trace.ranges) {
    if (r.kind == RangeKind::GpuUserAnnotation || r.kind == RangeKind::CpuOp) continue;
    if (opt.layer_glob.empty() || !glob_match(opt.layer_glob, trace.str(r.name))) continue;
    if (step && !inside(r.start, r.end, *step)) continue;
    layers.push_back({r.start, r.end, std::string(trace.str(r.name))});
  }
  return layers;
}

// Host API calls by correlation, to extend a host window to the GPU work it launched.
class Launches {
 public:
  explicit Launches(const Trace& trace) : trace_(trace) {
    for (const auto& c : trace.api_calls)
      if (c.correlation) by_corr_[c.correlation] = &c;
  }

  // Whether the work of correlation id `corr` was launched by a call starting in w.
  bool launched_in(std::uint64_t corr, const Window& w) const {
    auto it = by_corr_.find(corr);
    return it != by_corr_.end() && it->second->start >= w.start && it->second->start < w.end;
  }

  // w widened to the GPU work launched from it.
  Window gpu_extent(const Window& w) const {
    Window out = w;
    auto widen = [&](Ns s, Ns e, std::uint64_t corr) {
      if (!launched_in(corr, w)) return;
      out.start = std::min(out.start, s);
      out.end = std::max(out.end, e);
    };
    for (const auto& k : trace_.kernels) widen(k.start, k.end, k.correlation);
    for (const auto& m : trace_.memcpys) widen(m.start, m.end, m.correlation);
    for (const auto& m : trace_.memsets) widen(m.start, m.end, m.correlation);
    return out;
  }

  std::size_t count_h2d(const Window& w) const {
    std::size_t n = 0;
    for (const auto& m : trace_.memcpys)
      if (m.kind == CopyKind::HtoD && launched_in(m.correlation, w)) ++n;
    return n;
  }

 private:
  const Trace& trace_;
  std::map<std::uint64_t, const ApiCall*> by_corr_;
};

std::size_t count_syncs(const AnalysisResult& analysis, const Window& w) {
  std::size_t n = 0;
  for (const auto& s : analysis.sync_points)
    if (s.start >= w.start && s.start < w.end) ++n;
  return n;
}

// The host window to draw: a layer (the named one, else the middle of those with copies or
// syncs, whichever opt prefers), else the middle step, else the whole trace. Sets the
// strip's range and window names.
Window choose_window(const Trace& trace, const AnalysisResult& analysis, const TimelineOptions& opt,
                     const Launches& launches, TimelineStrip& strip) {
  const std::optional<Window> step = middle_step(analysis);
  std::vector<Window> layers = layer_windows(trace, opt, step);
  if (!opt.layer_name.empty()) {
    std::vector<Window> named;
    for (const auto& w : layers)
      if (w.name == opt.layer_name) named.push_back(w);
    if (!named.empty()) layers = named;
  }
  if (!layers.empty()) {
    std::vector<Window> preferred;
    for (const auto& w : layers)
      if (opt.prefer_copies ? launches.count_h2d(w) > 0 : count_syncs(analysis, w) > 0) preferred.push_back(w);
    if (preferred.empty())
      for (const auto& w : layers)
        if (launches.count_h2d(w) > 0 || count_syncs(analysis, w) > 0) preferred.push_back(w);
    const auto& pool = preferred.empty() ? layers : preferred;
    const Window chosen = pool[pool.size() / 2];
    strip.range = chosen.name;
    strip.window = step ? chosen.name + " in " + step->name : chosen.name;
    return chosen;
  }
  if (step) {
    strip.window = step->name;
    return *step;
  }
  auto [s, e] = trace.time_span();
  strip.window = "whole trace";
  return {s, e, "whole trace"};
}

// [s, e) clipped to the drawn window, relative to its start; none when outside (an instant
// on the window's edge is kept).
struct Clip {
  Window w;
  std::optional<std::pair<Ns, Ns>> operator()(Ns s, Ns e) const {
    const Ns cs = std::max(s, w.start), ce = std::min(e, w.end);
    if (ce <= cs && !(s == e && s >= w.start && s <= w.end)) return std::nullopt;
    return std::make_pair(cs - w.start, std::max(ce, cs) - w.start);
  }
};

// One GPU bar, times relative to the drawn window.
struct GpuBar {
  std::int64_t stream;
  Ns s, e;
  std::string kind, label;
};

// GPU activity of the window: everything running in it (including work launched before it,
// which is what a sync inside the window waits for), by stream and start. Work launched from
// outside the host range (queued before it, or launched after it while this range's work
// still runs) is drawn as "other": without a sync the GPU runs far behind the host, and the
// window then holds mostly earlier layers' kernels.
std::vector<GpuBar> gpu_bars(const Trace& trace, const Clip& clip, const Launches& launches,
                             const Window& host_window) {
  std::vector<GpuBar> gpu;
  auto own = [&](std::uint64_t corr, const char* kind) -> std::string {
    return launches.launched_in(corr, host_window) ? kind : "other";
  };
  for (const auto& k : trace.kernels)
    if (auto c = clip(k.start, k.end))
      gpu.push_back({k.stream, c->first, c->second, own(k.correlation, "kernel"), std::string(trace.str(k.name))});
  for (const auto& m : trace.memcpys) {
    if (auto c = clip(m.start, m.end)) {
      const char* kind = m.kind == CopyKind::HtoD ? "h2d" : m.kind == CopyKind::DtoH ? "d2h" : "copy";
      gpu.push_back({m.stream, c->first, c->second, own(m.correlation, kind),
                     "Memcpy " + std::string(kind_name(m.kind)) + " " + std::to_string(m.bytes) + " bytes"});
    }
  }
  for (const auto& m : trace.memsets)
    if (auto c = clip(m.start, m.end))
      gpu.push_back({m.stream, c->first, c->second, own(m.correlation, "kernel"), "Memset"});
  std::sort(gpu.begin(), gpu.end(),
            [](const GpuBar& a, const GpuBar& b) { return std::tie(a.stream, a.s) < std::tie(b.stream, b.s); });
  return gpu;
}

// Host: the chosen range itself, blocking calls as "sync" bars, the range's other API calls
// as thin "api" ticks (at most a third of opt.max_segments).
void add_host_segments(const Trace& trace, const AnalysisResult& analysis, const TimelineOptions& opt, const Clip& clip,
                       const Window& host_window, TimelineStrip& strip) {
  if (auto c = clip(host_window.start, host_window.end))
    strip.segments.push_back({"host", "range", c->first, c->second, host_window.name});
  std::set<std::pair<Ns, Ns>> sync_spans;
  for (const auto& sp : analysis.sync_points) {
    if (auto c = clip(sp.start, sp.end)) {
      const std::string cause = sp.cause.empty() ? sp.api : sp.cause;
      sync_spans.insert({sp.start, sp.end});
      if (sp.start >= host_window.start && sp.start < host_window.end) {
        strip.segments.push_back({"host", "sync", c->first, c->second, cause});
        ++strip.syncs;
      } else {
        // A wait drawn here because the window reaches the GPU work it waits for (a
        // step-end sync after a layer that has none): it belongs to the range it starts in.
        strip.segments.push_back({"host", "sync-elsewhere", c->first, c->second,
                                  cause + " in " + enclosing_range(trace, sp.start) + ", not in " + host_window.name});
      }
    }
  }
  std::size_t api_budget = opt.max_segments / 3;
  for (const auto& c : trace.api_calls) {
    if (api_budget == 0) break;
    if (sync_spans.count({c.start, c.end})) continue;
    if (c.start < host_window.start || c.start >= host_window.end) continue;
    if (auto cl = clip(c.start, c.end)) {
      strip.segments.push_back({"host", "api", cl->first, cl->second, std::string(trace.str(c.name))});
      --api_budget;
    }
  }
}

// GPU: one bar per activity on its stream's lane, neighbours of a kind merged when there
// are too many to draw.
void add_gpu_segments(const std::vector<GpuBar>& gpu, const std::map<std::int64_t, std::string>& lane_of,
                      const TimelineOptions& opt, TimelineStrip& strip) {
  const Ns merge_gap = gpu.size() > opt.max_segments ? strip.duration_ns / 2000 : -1;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    GpuBar g = gpu[i];
    std::size_t merged = 1;
    while (merge_gap >= 0 && i + 1 < gpu.size() && gpu[i + 1].stream == g.stream && gpu[i + 1].kind == g.kind &&
           gpu[i + 1].s - g.e <= merge_gap) {
      g.e = std::max(g.e, gpu[i + 1].e);
      ++i;
      ++merged;
    }
    if (merged > 1) g.label = std::to_string(merged) + " " + g.kind + "s";
    strip.segments.push_back({lane_of.at(g.stream), g.kind, g.s, g.e, g.label});
  }
}

// Bubbles: no GPU activity on any stream.
void add_bubbles(const std::vector<GpuBar>& gpu, TimelineStrip& strip) {
  std::vector<std::pair<Ns, Ns>> busy;
  for (const auto& g : gpu) busy.emplace_back(g.s, g.e);
  std::sort(busy.begin(), busy.end());
  Ns cursor = 0;
  for (const auto& [s, e] : busy) {
    if (s > cursor) {
      strip.segments.push_back({"gpu", "bubble", cursor, s, "GPU idle"});
      strip.bubble_ns += s - cursor;
    }
    cursor = std::max(cursor, e);
  }
  if (cursor < strip.duration_ns) {
    strip.segments.push_back({"gpu", "bubble", cursor, strip.duration_ns, "GPU idle"});
    strip.bubble_ns += strip.duration_ns - cursor;
  }
}

}  // namespace

TimelineStrip extract_timeline(const Trace& trace, const AnalysisResult& analysis, const TimelineOptions& opt) {
  TimelineStrip strip;
  const Launches launches(trace);
  const Window host_window = choose_window(trace, analysis, opt, launches, strip);
  const Clip clip{launches.gpu_extent(host_window)};
  strip.duration_ns = std::max<Ns>(1, clip.w.end - clip.w.start);
  const std::vector<GpuBar> gpu = gpu_bars(trace, clip, launches, host_window);

  // Lanes: host first, then streams in id order.
  std::set<std::int64_t> streams;
  for (const auto& g : gpu) streams.insert(g.stream);
  strip.lanes.push_back("host");
  std::map<std::int64_t, std::string> lane_of;
  for (auto s : streams) {
    lane_of[s] = stream_lane(s, trace);
    strip.lanes.push_back(lane_of[s]);
  }
  add_host_segments(trace, analysis, opt, clip, host_window, strip);
  add_gpu_segments(gpu, lane_of, opt, strip);
  add_bubbles(gpu, strip);
  strip.step = break_down_step(trace, analysis);
  return strip;
}

}  // namespace syncscope
