#include "syncscope/model/trace_predict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/glob.hpp"

namespace syncscope::model {

namespace {

std::string lower(std::string_view s) {
  std::string o(s);
  std::transform(o.begin(), o.end(), o.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return o;
}

bool contains_any(const std::string& lowered, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (lowered.find(k) != std::string::npos) return true;
  return false;
}

// Names of metadata / mask builds in packed-sequence training (Unsloth packing.py builds
// cu_seqlens / max_seqlen and the SDPA / xFormers masks).
bool is_rebuild_name(const std::string& lowered) {
  return contains_any(lowered, {"mask", "seqlen", "seq_len", "cu_seq", "packed_seq", "packing_metadata"});
}

// Data-dependent-shape ops whose result size the host must read: one sync each.
bool is_routing_cause(const std::string& lowered) {
  return contains_any(lowered, {"nonzero", "where", "masked_select", "bincount", "repeat_interleave", "unique"});
}

bool is_host_range(const Range& r) { return r.kind != RangeKind::GpuUserAnnotation; }

bool same_thread(std::int64_t a, std::int64_t b) { return a == -1 || b == -1 || a == b; }

struct Window {
  Ns start = 0, end = 0;
  std::int64_t pid = -1, tid = -1;
  std::string name;
  int step = -1;  // index into steps; -1 when the trace has none
};

// Disjoint sorted intervals; measure inside a window by binary search.
struct Union {
  std::vector<std::pair<Ns, Ns>> iv;
  void build(std::vector<std::pair<Ns, Ns>> v) {
    std::sort(v.begin(), v.end());
    iv.clear();
    for (const auto& [a, b] : v) {
      if (b <= a) continue;
      if (!iv.empty() && a <= iv.back().second) iv.back().second = std::max(iv.back().second, b);
      else iv.emplace_back(a, b);
    }
  }
  Ns measure(Ns a, Ns b) const {
    if (b <= a || iv.empty()) return 0;
    auto it = std::upper_bound(iv.begin(), iv.end(), std::make_pair(a, std::numeric_limits<Ns>::min()),
                               [](const auto& x, const auto& y) { return x.first < y.first; });
    if (it != iv.begin()) --it;
    Ns total = 0;
    for (; it != iv.end() && it->first < b; ++it) total += std::max<Ns>(0, std::min(b, it->second) - std::max(a, it->first));
    return total;
  }
};

Interval mean_ci(const std::vector<double>& v, int B, std::uint64_t seed, double level) {
  if (v.empty()) return {};
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  if (v.size() < 2 || B < 2) return Interval::exact(mean);
  Rng rng(seed);
  std::vector<double> draws;
  draws.reserve(static_cast<std::size_t>(B));
  for (int b = 0; b < B; ++b) {
    double s = 0;
    for (std::size_t i = 0; i < v.size(); ++i) s += v[rng.index(v.size())];
    draws.push_back(s / static_cast<double>(v.size()));
  }
  double tail = (1 - level) / 2;
  return {mean, std::min(mean, quantile(draws, tail)), std::max(mean, quantile(draws, 1 - tail))};
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }
std::string us(double ns) { return fmt::format("{:.1f} us", ns / 1e3); }

// Outermost matches only: a matching range nested in another match on the same thread is
// part of it (a module and its submodules, a python function and its cpu op).
std::vector<Window> outermost(std::vector<Window> w) {
  std::sort(w.begin(), w.end(), [](const Window& a, const Window& b) {
    return std::tie(a.tid, a.start, b.end) < std::tie(b.tid, b.start, a.end);
  });
  std::vector<Window> out;
  for (const auto& x : w) {
    bool nested = false;
    for (auto it = out.rbegin(); it != out.rend() && it->tid == x.tid; ++it) {
      if (it->start <= x.start && x.end <= it->end) {
        nested = true;
        break;
      }
      if (it->end <= x.start) break;
    }
    if (!nested) out.push_back(x);
  }
  std::sort(out.begin(), out.end(), [](const Window& a, const Window& b) { return a.start < b.start; });
  return out;
}

std::vector<Window> match_ranges(const Trace& t, const std::string& glob, bool annotations_only) {
  std::vector<Window> w;
  for (const auto& r : t.ranges) {
    if (!is_host_range(r)) continue;
    if (annotations_only && (r.kind == RangeKind::CpuOp || r.kind == RangeKind::PythonFunction)) continue;
    if (!glob_match(glob, t.str(r.name))) continue;
    w.push_back({r.start, r.end, r.pid, r.tid, std::string(t.str(r.name)), -1});
  }
  return outermost(std::move(w));
}

}  // namespace

std::optional<SlowdownEstimate> estimate_overlap_slowdown(const Trace& trace, int bootstrap, std::uint64_t seed) {
  constexpr std::uint64_t kMinCopyBytes = 1u << 20;
  // Copy intervals per (device, stream), merged per device excluding one stream on demand.
  std::map<std::int32_t, std::vector<std::pair<std::int64_t, std::pair<Ns, Ns>>>> copies;
  for (const auto& m : trace.memcpys)
    if (m.kind == CopyKind::HtoD && m.bytes >= kMinCopyBytes) copies[m.device].push_back({m.stream, {m.start, m.end}});
  if (copies.empty()) return std::nullopt;
  std::map<std::pair<std::int32_t, std::int64_t>, Union> beside_union;
  auto union_for = [&](std::int32_t dev, std::int64_t stream) -> const Union& {
    auto key = std::make_pair(dev, stream);
    if (auto it = beside_union.find(key); it != beside_union.end()) return it->second;
    std::vector<std::pair<Ns, Ns>> v;
    for (const auto& [s, iv] : copies[dev])
      if (s != stream) v.push_back(iv);
    Union u;
    u.build(std::move(v));
    return beside_union.emplace(key, std::move(u)).first->second;
  };
  std::map<StringId, std::pair<std::vector<double>, std::vector<double>>> by_name;  // alone, beside
  for (const auto& k : trace.kernels) {
    const Ns d = k.end - k.start;
    if (d <= 0 || !copies.count(k.device)) continue;
    const Ns ov = union_for(k.device, k.stream).measure(k.start, k.end);
    if (ov == 0) by_name[k.name].first.push_back(static_cast<double>(d));
    else if (2 * ov >= d) by_name[k.name].second.push_back(static_cast<double>(d));
  }
  std::vector<double> ratios;
  SlowdownEstimate est;
  for (const auto& [name, v] : by_name) {
    if (v.first.size() < 3 || v.second.size() < 3) continue;
    ratios.push_back(median(v.second) / median(v.first));
    est.alone += static_cast<int>(v.first.size());
    est.beside += static_cast<int>(v.second.size());
  }
  if (ratios.empty()) return std::nullopt;
  est.kernel_names = static_cast<int>(ratios.size());
  const double centre = median(ratios) - 1.0;
  est.sigma = Interval::exact(centre);
  if (ratios.size() >= 2 && bootstrap >= 2) {
    Rng rng(seed);
    std::vector<double> draws;
    for (int b = 0; b < bootstrap; ++b) {
      std::vector<double> r;
      for (std::size_t i = 0; i < ratios.size(); ++i) r.push_back(ratios[rng.index(ratios.size())]);
      draws.push_back(median(std::move(r)) - 1.0);
    }
    est.sigma.lo = std::min(centre, quantile(draws, (1 - kIntervalLevel) / 2));
    est.sigma.hi = std::max(centre, quantile(draws, 1 - (1 - kIntervalLevel) / 2));
  }
  return est;
}

bool is_row_scaled_kernel(std::string_view name) {
  const std::string n = lower(name);
  if (contains_any(n, {"gemm", "nvjet", "xmma", "cutlass", "cublas", "matmul", "bmm", "silu", "gelu", "swiglu"}))
    return true;
  for (std::string_view x : {"_proj", ".gate", ".up", ".down"})
    if (std::string_view(n).ends_with(x)) return true;
  return false;
}

PredictionReport predict_from_trace(const Trace& trace, const TracePredictOptions& opt, const std::string& source) {
  PredictionReport rep;
  rep.source = source;
  if (opt.profile) rep.gpu_profile = opt.profile->name;
  const double level = opt.propagation.level;

  // ---- steps and layers ----
  std::string layer_glob = opt.layer_glob;
  std::vector<Window> layers;
  if (!layer_glob.empty()) {
    layers = match_ranges(trace, layer_glob, false);
    if (layers.empty())
      rep.notes.push_back(fmt::format("--layer-range '{}' matches no host range in the trace", layer_glob));
  } else {
    for (const char* g : {"layer_*", "layer*", "Layer*", "*DecoderLayer*", "*decoder_layer*", "*.layers.*"}) {
      layers = match_ranges(trace, g, true);
      if (layers.size() >= 2) {
        layer_glob = g;
        rep.notes.push_back(fmt::format("layer ranges found by the default pattern '{}' ({} ranges); "
                                        "set --layer-range to choose another",
                                        g, layers.size()));
        break;
      }
      layers.clear();
    }
    if (layers.empty())
      rep.notes.push_back("no layer ranges found (tried layer_*, layer*, Layer*, *DecoderLayer*, *decoder_layer*, "
                          "*.layers.*): pass --layer-range GLOB naming one range per transformer layer");
  }

  AnalysisOptions aopt;
  aopt.step_glob = opt.step_glob;
  aopt.layer_glob = layer_glob;
  AnalysisResult an = analyze(trace, aopt);
  std::vector<Window> steps;
  for (const auto& s : an.steps) steps.push_back({s.start, s.end, -1, -1, s.name, -1});
  for (auto& l : layers) {
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (steps[i].start <= l.start && l.start < steps[i].end) l.step = static_cast<int>(i);
  }
  const std::size_t n_steps = std::max<std::size_t>(1, steps.size());

  std::optional<Interval> step_ns;
  if (!an.steps.empty()) {
    std::vector<double> d;
    for (const auto& s : an.steps) d.push_back(static_cast<double>(s.duration_ns));
    double tail = (1 - level) / 2;
    step_ns = Interval{median(d), quantile(d, tail), quantile(d, 1 - tail)};
    step_ns->lo = std::min(step_ns->lo, step_ns->value);
    step_ns->hi = std::max(step_ns->hi, step_ns->value);
    rep.notes.push_back(fmt::format("step time: median of {} '{}' ranges = {} (interval: {:.0f}% of steps)",
                                    d.size(), opt.step_glob, ms(step_ns->value), 100 * level));
    if (d.size() < 3) rep.notes.push_back("fewer than 3 steps: the step-time interval is the observed range only");
  } else {
    rep.notes.push_back(fmt::format("no step ranges match '{}': speedups need --step-range GLOB", opt.step_glob));
  }

  // ---- GPU work attributed to the host call that issued it (correlation id) ----
  // Host ranges and GPU time do not line up (the GPU runs behind the host), so a window's
  // GPU time is the time of the work launched inside it, not the GPU activity inside it.
  std::unordered_map<std::uint64_t, Ns> gpu_by_corr, kernel_by_corr, row_work_by_corr;
  std::unordered_map<StringId, bool> row_scaled;  // by kernel name: names repeat per launch
  for (const auto& x : trace.kernels)
    if (x.correlation) {
      gpu_by_corr[x.correlation] += x.end - x.start;
      kernel_by_corr[x.correlation] += x.end - x.start;
      auto [it, fresh] = row_scaled.try_emplace(x.name, false);
      if (fresh) it->second = is_row_scaled_kernel(trace.str(x.name));
      if (it->second) row_work_by_corr[x.correlation] += x.end - x.start;
    }
  for (const auto& x : trace.memcpys)
    if (x.correlation) gpu_by_corr[x.correlation] += x.end - x.start;
  for (const auto& x : trace.memsets)
    if (x.correlation) gpu_by_corr[x.correlation] += x.end - x.start;
  std::vector<std::size_t> api_order(trace.api_calls.size());
  for (std::size_t i = 0; i < api_order.size(); ++i) api_order[i] = i;
  std::sort(api_order.begin(), api_order.end(),
            [&](std::size_t a, std::size_t b) { return trace.api_calls[a].start < trace.api_calls[b].start; });
  // Calls of thread `tid` (-1: any) starting in [a, b).
  auto for_api_in = [&](Ns a, Ns b, std::int64_t tid, const auto& fn) {
    auto it = std::lower_bound(api_order.begin(), api_order.end(), a,
                               [&](std::size_t i, Ns t) { return trace.api_calls[i].start < t; });
    for (; it != api_order.end() && trace.api_calls[*it].start < b; ++it)
      if (same_thread(tid, trace.api_calls[*it].tid)) fn(trace.api_calls[*it]);
  };
  auto launched_ns = [&](const std::unordered_map<std::uint64_t, Ns>& by_corr, Ns a, Ns b, std::int64_t tid) {
    double total = 0;
    for_api_in(a, b, tid, [&](const ApiCall& c) {
      if (auto it = by_corr.find(c.correlation); c.correlation && it != by_corr.end())
        total += static_cast<double>(it->second);
    });
    return total;
  };
  const auto& syncs = an.sync_points;
  auto syncs_in = [&](const Window& w) {
    std::vector<const SyncPoint*> v;
    auto it = std::lower_bound(syncs.begin(), syncs.end(), w.start,
                               [](const SyncPoint& s, Ns t) { return s.start < t; });
    for (; it != syncs.end() && it->start < w.end; ++it)
      if (same_thread(w.tid, it->tid)) v.push_back(&*it);
    return v;
  };
  auto layer_count_text = [&](std::size_t n) {
    return steps.empty() ? fmt::format("{} layer ranges", n)
                         : fmt::format("{} layer ranges over {} steps", n, steps.size());
  };
  double round_trip_ns = 0;
  std::string round_trip_source;
  if (opt.profile && opt.profile->sync_round_trip_ns > 0) {
    round_trip_ns = opt.profile->sync_round_trip_ns;
    round_trip_source = "GPU profile " + opt.profile->name;
  } else if (!syncs.empty()) {
    std::vector<double> b;
    for (const auto& s : syncs)
      if (s.bubble_ns > 0) b.push_back(static_cast<double>(s.bubble_ns));
    if (!b.empty()) {
      round_trip_ns = quantile(b, 0.1);
      round_trip_source = "10th percentile of this trace's nonzero sync bubbles (no GPU profile given)";
    }
  }

  // ---- per-layer sync classification ----
  struct LayerStats {
    std::vector<const SyncPoint*> syncs, routing, packing;
    std::vector<Window> rebuilds;
  };
  std::vector<LayerStats> ls(layers.size());
  std::vector<Window> rebuild_ranges;
  {
    std::vector<Window> rr;
    for (const auto& r : trace.ranges) {
      if (!is_host_range(r)) continue;
      std::string n = lower(trace.str(r.name));
      if (is_rebuild_name(n)) rr.push_back({r.start, r.end, r.pid, r.tid, std::string(trace.str(r.name)), -1});
    }
    rebuild_ranges = outermost(std::move(rr));
  }
  std::map<std::string, int> cause_layers;  // cause -> layers it appears in (non-routing)
  for (std::size_t i = 0; i < layers.size(); ++i) {
    ls[i].syncs = syncs_in(layers[i]);
    for (const auto& r : rebuild_ranges)
      if (layers[i].start <= r.start && r.end <= layers[i].end && same_thread(layers[i].tid, r.tid))
        ls[i].rebuilds.push_back(r);
    std::set<std::string> seen;
    for (const auto* s : ls[i].syncs) {
      if (is_routing_cause(lower(s->cause))) ls[i].routing.push_back(s);
      else seen.insert(s->cause);
    }
    for (const auto& c : seen) cause_layers[c]++;
  }
  bool any_rebuild_range = false;
  for (const auto& l : ls) any_rebuild_range = any_rebuild_range || !l.rebuilds.empty();
  std::set<std::string> repeated_causes;
  for (const auto& [c, n] : cause_layers)
    if (layers.size() >= 2 && n >= 0.75 * static_cast<double>(layers.size())) repeated_causes.insert(c);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (const auto* s : ls[i].syncs) {
      if (is_routing_cause(lower(s->cause))) continue;
      bool in_rebuild = false;
      for (const auto& r : ls[i].rebuilds)
        if (r.start <= s->start && s->start < r.end && same_thread(r.tid, s->tid)) in_rebuild = true;
      if (any_rebuild_range ? in_rebuild : repeated_causes.count(s->cause) > 0) ls[i].packing.push_back(s);
    }
  }

  // ---- packing ----
  {
    FixPrediction f;
    f.fix = "packing";
    f.variant = "cached";
    PackingParams packing_params;
    // A layer usually runs more than once per step (forward, then backward or a checkpoint
    // recompute) under the same range name, and only the forward pass rebuilds metadata. So
    // the pattern is judged per distinct layer name (a name has it when any occurrence
    // does), L counts those names, and the per-layer parameters come from the occurrences
    // that hold the pattern. Traces that give every layer the same name fall back to
    // counting occurrences.
    auto has_pattern = [&](std::size_t i) { return !ls[i].packing.empty() || !ls[i].rebuilds.empty(); };
    std::map<std::string, bool> name_has;
    for (std::size_t i = 0; i < layers.size(); ++i) name_has[layers[i].name] = name_has[layers[i].name] || has_pattern(i);
    const bool by_name = name_has.size() >= 2;
    std::size_t units = by_name ? name_has.size() : layers.size(), with_pattern = 0;
    if (by_name) {
      for (const auto& [n, h] : name_has) with_pattern += h ? 1 : 0;
    } else {
      for (std::size_t i = 0; i < layers.size(); ++i) with_pattern += has_pattern(i) ? 1 : 0;
    }
    if (layers.size() < 2) {
      f.applicable = false;
      f.reason = "needs at least two layer ranges (--layer-range GLOB) to see a per-layer pattern";
    } else if (with_pattern < 0.75 * static_cast<double>(units)) {
      f.applicable = false;
      f.reason = fmt::format("no per-layer metadata/mask rebuild: {} of {} {} hold a sync with a repeated "
                             "cause or a range named like mask/seqlen/cu_seqlens (need at least 75%)",
                             with_pattern, units, by_name ? "distinct layer names" : "layer ranges");
    } else {
      std::vector<double> s_v, host_v, gpu_v, wh_v, wd_v, k_v;
      std::map<std::string, int> cause_count;
      std::map<std::string, int> range_count;
      std::size_t used = 0;
      for (std::size_t i = 0; i < layers.size(); ++i) {
        if (!has_pattern(i)) continue;
        ++used;
        const auto& w = layers[i];
        double bubble = 0, blocked = 0, rebuild_gpu = 0, rebuild_host = 0;
        for (const auto* s : ls[i].packing) {
          bubble += static_cast<double>(s->bubble_ns);
          cause_count[s->cause + " (" + s->api + ")"]++;
        }
        for (const auto* s : ls[i].syncs) blocked += static_cast<double>(s->blocked_ns);
        for (const auto& r : ls[i].rebuilds) {
          range_count[r.name]++;
          double in_blocked = 0;
          for (const auto* s : ls[i].syncs)
            if (r.start <= s->start && s->start < r.end) in_blocked += static_cast<double>(s->blocked_ns);
          rebuild_host += std::max(0.0, static_cast<double>(r.end - r.start) - in_blocked);
        }
        // GPU time (kernels, memsets) of the work launched inside the rebuild ranges.
        for (const auto& r : ls[i].rebuilds) rebuild_gpu += launched_ns(gpu_by_corr, r.start, r.end, r.tid);
        s_v.push_back(bubble + rebuild_gpu);
        host_v.push_back(std::max(0.0, static_cast<double>(w.end - w.start) - blocked));
        gpu_v.push_back(launched_ns(gpu_by_corr, w.start, w.end, w.tid));
        wh_v.push_back(rebuild_host);
        wd_v.push_back(rebuild_gpu);
        k_v.push_back(static_cast<double>(ls[i].packing.size()));
      }
      PackingParams p;
      p.layers = by_name ? static_cast<int>(with_pattern)
                         : static_cast<int>(std::lround(static_cast<double>(used) / static_cast<double>(n_steps)));
      p.s_ns = mean_ci(s_v, opt.bootstrap, opt.seed, level);
      p.syncs_per_layer = static_cast<int>(std::lround(median(k_v)));
      if (round_trip_ns > 0) {
        p.host_ns = mean_ci(host_v, opt.bootstrap, opt.seed + 1, level);
        p.gpu_ns = mean_ci(gpu_v, opt.bootstrap, opt.seed + 2, level);
        p.rebuild_host_ns = mean_ci(wh_v, opt.bootstrap, opt.seed + 3, level);
        p.rebuild_gpu_ns = mean_ci(wd_v, opt.bootstrap, opt.seed + 4, level);
        p.round_trip_ns = Interval::exact(round_trip_ns);
      }
      f = predict_packing(p, step_ns, opt.propagation);
      packing_params = p;
      f.evidence.push_back(fmt::format("{} matching '{}' ({} per step)", layer_count_text(layers.size()), layer_glob,
                                       p.layers));
      std::size_t nsync = 0;
      for (const auto& l : ls) nsync += l.packing.size();
      std::string causes;
      for (const auto& [c, n] : cause_count) causes += fmt::format("{}{} x{}", causes.empty() ? "" : ", ", c, n);
      f.evidence.push_back(fmt::format("{} sync points inside layers {} ({} per layer): {}", nsync,
                                       any_rebuild_range ? "inside the rebuild ranges" : "with a cause repeated in >= 75% of layers",
                                       p.syncs_per_layer, causes.empty() ? "none" : causes));
      if (any_rebuild_range) {
        std::string names;
        for (const auto& [n, c] : range_count) names += fmt::format("{}'{}' x{}", names.empty() ? "" : ", ", n, c);
        f.evidence.push_back(fmt::format("rebuild ranges: {}; their kernels: {} per layer on the GPU", names,
                                         ms(median(wd_v))));
      } else {
        f.evidence.push_back("no ranges named like mask/seqlen/cu_seqlens: s counts only the sync bubbles (the "
                             "rebuild's own GPU kernels are not attributed)");
        // A sync repeated in every layer is what a metadata rebuild looks like, but also what
        // any other per-layer host read looks like (a logged scalar, a data-dependent shape).
        f.notes.push_back(fmt::format(
            "weak evidence: only a sync cause repeated in every layer ({}), no rebuild range; this is the packing "
            "pattern only if that sync reads sequence metadata (cu_seqlens/max_seqlen). Wrap the rebuild in a "
            "record_function/NVTX range named like 'cu_seqlens' or 'mask' to confirm it",
            causes.empty() ? "none" : causes));
      }
      f.evidence.push_back(fmt::format("s per layer = sync bubbles + rebuild kernel time: mean {} over {} layers "
                                       "(bootstrap {:.0f}% interval)",
                                       ms(p.s_ns.value), layers.size(), 100 * level));
      if (round_trip_ns > 0)
        f.evidence.push_back(fmt::format("round trip r = {} ({})", us(round_trip_ns), round_trip_source));
      if (p.layers > 0 && static_cast<double>(layers.size()) / static_cast<double>(n_steps) > 0) {
        std::set<std::string> distinct;
        for (const auto& l : layers) distinct.insert(l.name);
        if (distinct.size() > 1 && static_cast<int>(distinct.size()) < p.layers)
          f.notes.push_back(fmt::format("{} layer occurrences per step but {} distinct names: layers run more "
                                        "than once per step (recompute?); the cache serves them all",
                                        p.layers, distinct.size()));
      }
    }
    if (!f.applicable) {
      FixPrediction d = f;
      d.variant = "device";
      rep.fixes.push_back(std::move(f));
      rep.fixes.push_back(std::move(d));
    } else {
      FixPrediction d = predict_packing(packing_params, step_ns, opt.propagation, "device");
      d.evidence = f.evidence;
      rep.fixes.push_back(std::move(f));
      rep.fixes.push_back(std::move(d));
    }
  }

  // ---- offload reload ----
  {
    constexpr std::uint64_t kMinReloadBytes = 1u << 20;
    std::vector<Window> bw;  // one backward window per step (or one overall)
    {
      std::map<int, Window> per_step;
      for (const auto& r : trace.ranges) {
        if (!is_host_range(r)) continue;
        if (lower(trace.str(r.name)).find("backward") == std::string::npos) continue;
        int step = -1;
        for (std::size_t i = 0; i < steps.size(); ++i)
          if (steps[i].start <= r.start && r.start < steps[i].end) step = static_cast<int>(i);
        auto [it, fresh] = per_step.try_emplace(step, Window{r.start, r.end, -1, -1, "backward", step});
        if (!fresh) {
          it->second.start = std::min(it->second.start, r.start);
          it->second.end = std::max(it->second.end, r.end);
        }
      }
      for (auto& [k, w] : per_step) bw.push_back(w);
    }
    std::unordered_map<std::uint64_t, Ns> api_start;
    for (const auto& a : trace.api_calls)
      if (a.correlation) api_start[a.correlation] = a.start;
    std::vector<const Memcpy*> reloads;
    for (const auto& m : trace.memcpys) {
      if (m.kind != CopyKind::HtoD || m.bytes < kMinReloadBytes) continue;
      Ns t = m.start;
      if (auto it = api_start.find(m.correlation); it != api_start.end()) t = it->second;
      for (const auto& w : bw)
        if (w.start <= t && t < w.end) {
          reloads.push_back(&m);
          break;
        }
    }
    FixPrediction base;
    base.fix = "offload";
    if (bw.empty()) {
      base.applicable = false;
      base.reason = "no backward ranges (host ranges whose name contains 'backward', e.g. torch.profiler's autograd "
                    "ops) to locate checkpoint reload copies in";
    } else if (reloads.size() < 2 * n_steps) {
      base.applicable = false;
      base.reason = fmt::format("{} host-to-device copies of >= 1 MiB inside backward ({} steps): no per-layer "
                                "checkpoint reload pattern",
                                reloads.size(), n_steps);
    } else if (opt.profile && opt.profile->unified_memory) {
      base.applicable = false;
      base.reason = "the GPU profile says unified memory (GB10 / APU): double-buffered reload is known to hurt there "
                    "(unsloth-zoo PR 928)";
    }
    if (!base.applicable) {
      for (const char* v : {"double", "prefetch"}) {
        FixPrediction f = base;
        f.variant = v;
        f.saving_ns = Interval::exact(0);
        rep.fixes.push_back(f);
      }
    } else {
      // Kernel time overlapping each copy on other streams of its device.
      std::map<std::pair<std::int32_t, std::int64_t>, Union> others;
      auto other_union = [&](std::int32_t dev, std::int64_t stream) -> const Union& {
        auto key = std::make_pair(dev, stream);
        auto it = others.find(key);
        if (it != others.end()) return it->second;
        std::vector<std::pair<Ns, Ns>> v;
        for (const auto& k : trace.kernels)
          if ((dev < 0 || k.device == dev) && k.stream != stream) v.emplace_back(k.start, k.end);
        Union u;
        u.build(std::move(v));
        return others.emplace(key, std::move(u)).first->second;
      };
      std::vector<double> c_v;
      double copy_total = 0, overlapped = 0, bytes = 0;
      for (const auto* m : reloads) {
        double d = static_cast<double>(m->end - m->start);
        c_v.push_back(d);
        copy_total += d;
        bytes += static_cast<double>(m->bytes);
        overlapped += static_cast<double>(other_union(m->device, m->stream).measure(m->start, m->end));
      }
      double overlap = copy_total > 0 ? overlapped / copy_total : 0;
      double bw_kernel = 0;  // kernels launched inside backward (any thread: autograd runs its own)
      for (const auto& w : bw) bw_kernel += launched_ns(kernel_by_corr, w.start, w.end, -1);
      const double per_step_reloads = static_cast<double>(reloads.size()) / static_cast<double>(n_steps);
      OffloadParams p;
      p.layers = static_cast<int>(std::lround(per_step_reloads));
      p.copy_ns = mean_ci(c_v, opt.bootstrap, opt.seed + 5, level);
      // Backward kernel time per reload; its interval is not measured (one number per step).
      p.compute_ns = Interval::exact(bw_kernel / static_cast<double>(reloads.size()));
      std::string sigma_evidence;
      if (opt.profile) {
        p.slowdown = Interval::exact(opt.profile->copy_compute_slowdown);
        p.unified_memory = opt.profile->unified_memory;
        sigma_evidence = fmt::format("overlap slowdown sigma = {:.3f} from GPU profile {}", p.slowdown.value,
                                     opt.profile->name);
      }
      if (auto est = estimate_overlap_slowdown(trace, opt.bootstrap, opt.seed + 7)) {
        // Measured in this very trace: preferred over the profile's value.
        p.slowdown = {std::max(0.0, est->sigma.value), std::max(0.0, est->sigma.lo), std::max(0.0, est->sigma.hi)};
        sigma_evidence = fmt::format("overlap slowdown sigma = {:.3f} [{:.3f}, {:.3f}] measured in this trace ({} kernel "
                                     "names, {} launches beside a copy vs {} alone)",
                                     p.slowdown.value, p.slowdown.lo, p.slowdown.hi, est->kernel_names, est->beside,
                                     est->alone);
      }
      p.prefetch_depth = std::max(2, opt.prefetch_depth);
      std::vector<std::string> evidence = {
          fmt::format("{} host-to-device copies of >= 1 MiB inside backward ranges ({:.1f} per step, mean {:.1f} MiB, "
                      "mean {} each)",
                      reloads.size(), per_step_reloads, bytes / static_cast<double>(reloads.size()) / (1 << 20),
                      ms(p.copy_ns.value)),
          fmt::format("backward kernel time per reload g = {}", ms(p.compute_ns.value)),
          fmt::format("{:.0f}% of the reload copy time overlaps kernels on other streams", 100 * overlap)};
      if (!sigma_evidence.empty()) evidence.push_back(sigma_evidence);
      for (const char* v : {"double", "prefetch"}) {
        FixPrediction f;
        if (overlap >= 0.5) {
          f = base;
          f.variant = v;
          f.applicable = false;
          f.reason = fmt::format("the reload copies already overlap compute ({:.0f}% of their time): the run looks "
                                 "double-buffered already",
                                 100 * overlap);
          f.saving_ns = Interval::exact(0);
        } else {
          f = predict_offload(p, v, step_ns, opt.propagation);
        }
        f.evidence = evidence;
        if (sigma_evidence.empty())
          f.notes.push_back("no GPU profile and no overlapped kernels to measure it: overlap slowdown sigma = 0 "
                            "(pass --gpu to use a profile's)");
        rep.fixes.push_back(std::move(f));
      }
    }
  }

  // ---- MoE routing ----
  {
    std::vector<double> counts, bubbles;
    std::size_t moe_layer_occ = 0;
    std::set<std::string> moe_layer_names;
    std::map<std::string, int> causes;
    double expert_gpu_ns = 0;  // GPU time launched from each layer's first routing sync on
    double expert_row_ns = 0;  // the GEMM and activation part of it (what padding multiplies)
    for (std::size_t i = 0; i < ls.size(); ++i) {
      const auto& l = ls[i];
      if (l.routing.size() < 2) continue;
      ++moe_layer_occ;
      moe_layer_names.insert(layers[i].name);
      counts.push_back(static_cast<double>(l.routing.size()));
      for (const auto* s : l.routing) {
        bubbles.push_back(static_cast<double>(s->bubble_ns));
        causes[s->cause]++;
      }
      expert_gpu_ns += launched_ns(gpu_by_corr, l.routing.front()->start, layers[i].end, layers[i].tid);
      expert_row_ns += launched_ns(row_work_by_corr, l.routing.front()->start, layers[i].end, layers[i].tid);
    }
    FixPrediction base;
    base.fix = "moe_routing";
    if (layers.empty()) {
      base.applicable = false;
      base.reason = "needs layer ranges (--layer-range GLOB) to find per-expert routing syncs";
    } else if (moe_layer_occ == 0) {
      base.applicable = false;
      base.reason = fmt::format("no run of nonzero/where-style syncs inside any of the {} layer ranges", layers.size());
    }
    if (!base.applicable) {
      for (const char* v : {"sorted", "device"}) {
        FixPrediction f = base;
        f.variant = v;
        f.saving_ns = Interval::exact(0);
        rep.fixes.push_back(f);
      }
    } else {
      MoeParams p;
      p.experts = static_cast<int>(std::lround(median(counts)));
      p.moe_layers = static_cast<int>(std::lround(static_cast<double>(moe_layer_occ) / static_cast<double>(n_steps)));
      p.passes = 1;
      p.per_expert_ns = mean_ci(bubbles, opt.bootstrap, opt.seed + 6, level);
      std::string cs;
      for (const auto& [c, n] : causes) cs += fmt::format("{}{} x{}", cs.empty() ? "" : ", ", c, n);
      const double per_step_expert_ns = expert_gpu_ns / static_cast<double>(n_steps);
      const double per_step_row_ns = expert_row_ns / static_cast<double>(n_steps);
      // Padding multiplies only the work that scales with an expert's rows: its GEMMs and
      // activation. The per-expert gathers, weights and accumulation keep their total size,
      // and the small per-expert launches of the loop mostly go away. When no kernel in the
      // routing region looks like a GEMM (names unknown to is_row_scaled_kernel), all of its
      // work is taken as row work: an upper bound on the padding's cost, said so in a note.
      const bool row_work_known = per_step_row_ns > 0;
      const double scaled_ns = row_work_known ? per_step_row_ns : per_step_expert_ns;
      // The segment form's inputs, per step: GPU busy, the bubbles of the syncs that stay,
      // and the host time left once the routing syncs and the per-expert launches go.
      if (!an.steps.empty()) {
        std::set<const SyncPoint*> routing;
        for (const auto& l : ls)
          if (l.routing.size() >= 2) routing.insert(l.routing.begin(), l.routing.end());
        const std::size_t S = an.steps.size();
        std::vector<double> busy(S, 0), other_bubbles(S, 0), routing_blocked(S, 0), launches(S, 0);
        auto step_of = [&](Ns t) -> std::optional<std::size_t> {
          for (std::size_t i = 0; i < S; ++i)
            if (an.steps[i].start <= t && t < an.steps[i].end) return i;
          return std::nullopt;
        };
        for (std::size_t i = 0; i < S; ++i) busy[i] = static_cast<double>(an.steps[i].gpu_busy_ns);
        for (const auto& sp : an.sync_points) {
          auto i = step_of(sp.start);
          if (!i) continue;
          if (routing.count(&sp)) routing_blocked[*i] += static_cast<double>(sp.blocked_ns);
          else other_bubbles[*i] += static_cast<double>(sp.bubble_ns);
        }
        for (std::size_t i = 0; i < ls.size(); ++i) {
          const auto& l = ls[i];
          if (l.routing.size() < 2 || layers[i].step < 0) continue;
          double api = 0, blocked = 0;
          for_api_in(l.routing.front()->start, layers[i].end, layers[i].tid,
                     [&](const ApiCall& c) { api += static_cast<double>(c.end - c.start); });
          for (const auto* sp : l.routing) blocked += static_cast<double>(sp->blocked_ns);
          // What remains of the region's host calls once its syncs are taken out: the
          // per-expert launches; the device variant keeps about one expert's worth.
          launches[static_cast<std::size_t>(layers[i].step)] +=
              std::max(0.0, api - blocked) * (1.0 - 1.0 / std::max(1, p.experts));
        }
        std::vector<double> host_after(S);
        for (std::size_t i = 0; i < S; ++i)
          host_after[i] = std::max(0.0, static_cast<double>(an.steps[i].duration_ns) - routing_blocked[i] - launches[i]);
        p.gpu_busy_ns = mean_ci(busy, opt.bootstrap, opt.seed + 8, level);
        p.other_bubble_ns = mean_ci(other_bubbles, opt.bootstrap, opt.seed + 9, level);
        p.host_after_ns = mean_ci(host_after, opt.bootstrap, opt.seed + 10, level);
      }
      for (const char* v : {"sorted", "device"}) {
        MoeParams pv = p;
        const bool padded = std::string(v) == "device" && opt.moe_top_k && *opt.moe_top_k > 0;
        const double ratio = padded ? static_cast<double>(p.experts) / static_cast<double>(*opt.moe_top_k) : 1.0;
        // Backward runs two GEMMs of the same size per forward GEMM. The measured row work
        // covers every pass that routes (forward, and a checkpoint recompute when a layer name
        // routes more than once per step); backward adds two forward passes' worth: in all
        // (E/k - 1) * measured * (1 + 2 / passes), 3x the forward work without recompute.
        const double passes =
            moe_layer_names.size() >= 2
                ? std::max(1.0, static_cast<double>(moe_layer_occ) / static_cast<double>(n_steps) /
                                    static_cast<double>(moe_layer_names.size()))
                : 1.0;
        const double extra_ns = padded ? (ratio - 1.0) * scaled_ns * (1.0 + 2.0 / passes) : 0.0;
        if (padded) pv.kernel_delta_ns = Interval::exact(-extra_ns);
        FixPrediction f = predict_moe(pv, v, step_ns, opt.propagation);
        if (padded) {
          f.evidence.push_back(fmt::format(
              "expert row work (GEMM and activation kernels launched from each layer's first routing sync to its "
              "end): {} per step in forward, of {} GPU time launched there; the device variant pads every expert "
              "to T rows, E/k = {:.2f} times that row work, over {:.0f} routing pass(es) per layer and backward "
              "(x{:.2f} the measured work): {} more per step",
              ms(per_step_row_ns), ms(per_step_expert_ns), ratio, passes, 1.0 + 2.0 / passes, ms(extra_ns)));
          if (!row_work_known)
            f.notes.push_back("no GEMM- or activation-like kernel names in the routing region: all of its GPU time "
                              "taken as row work, so the padding's cost is an upper bound");
        }
        f.evidence.push_back(fmt::format("{} of {} layer ranges hold a run of routing syncs; median {} per layer "
                                         "(taken as E): {}",
                                         moe_layer_occ, layers.size(), p.experts, cs));
        f.evidence.push_back(fmt::format("q = mean bubble of those syncs = {} (bootstrap {:.0f}% interval)",
                                         us(p.per_expert_ns.value), 100 * level));
        f.notes.push_back("moe_layers counts layer occurrences per step with routing syncs (a recompute pass counts "
                          "again), so passes = 1");
        if (std::string(v) == "device" && p.gpu_busy_ns)
          f.evidence.push_back(fmt::format(
              "per step: GPU busy {}, bubbles of the other syncs {}, host time without the routing syncs and the "
              "per-expert launches {} (the device variant runs at the longer of the two sides)",
              ms(p.gpu_busy_ns->value), ms(p.other_bubble_ns->value), ms(p.host_after_ns->value)));
        rep.fixes.push_back(std::move(f));
      }
    }
  }
  for (const auto& w : an.warnings) rep.notes.push_back("analysis: " + w);
  return rep;
}

}  // namespace syncscope::model
