#include "syncscope/model/trace_predict_facts.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "syncscope/core/glob.hpp"

namespace syncscope::model::detail {

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

bool is_data_dependent_shape_cause(const std::string& lowered) {
  return contains_any(lowered, {"nonzero", "where", "masked_select", "bincount", "repeat_interleave", "unique"});
}

void Union::build(std::vector<std::pair<Ns, Ns>> v) {
  std::sort(v.begin(), v.end());
  iv.clear();
  for (const auto& [a, b] : v) {
    if (b <= a) continue;
    if (!iv.empty() && a <= iv.back().second) iv.back().second = std::max(iv.back().second, b);
    else iv.emplace_back(a, b);
  }
}

Ns Union::measure(Ns a, Ns b) const {
  if (b <= a || iv.empty()) return 0;
  auto it = std::upper_bound(iv.begin(), iv.end(), std::make_pair(a, std::numeric_limits<Ns>::min()),
                             [](const auto& x, const auto& y) { return x.first < y.first; });
  if (it != iv.begin()) --it;
  Ns total = 0;
  for (; it != iv.end() && it->first < b; ++it)
    total += std::max<Ns>(0, std::min(b, it->second) - std::max(a, it->first));
  return total;
}

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

void add_not_applicable(PredictionReport& rep, const FixPrediction& base, std::initializer_list<const char*> variants) {
  for (const char* v : variants) {
    FixPrediction f = base;
    f.variant = v;
    f.saving_ns = Interval::exact(0);
    rep.fixes.push_back(std::move(f));
  }
}

TraceFacts::TraceFacts(const Trace& t, const TracePredictOptions& o, PredictionReport& rep)
    : trace(t), opt(o), level(o.propagation.level), layer_glob(o.layer_glob) {
  find_layers(rep);
  find_steps(rep);
  attribute_gpu_work();
  choose_round_trip();
  collect_layer_syncs();
}

void TraceFacts::find_layers(PredictionReport& rep) {
  if (!layer_glob.empty()) {
    layers = match_ranges(trace, layer_glob, false);
    if (layers.empty())
      rep.notes.push_back(fmt::format("--layer-range '{}' matches no host range in the trace", layer_glob));
    return;
  }
  for (const char* g : {"layer_*", "layer*", "Layer*", "*DecoderLayer*", "*decoder_layer*", "*.layers.*"}) {
    layers = match_ranges(trace, g, true);
    if (layers.size() >= 2) {
      layer_glob = g;
      rep.notes.push_back(
          fmt::format("layer ranges found by the default pattern '{}' ({} ranges); "
                      "set --layer-range to choose another",
                      g, layers.size()));
      return;
    }
    layers.clear();
  }
  rep.notes.push_back(
      "no layer ranges found (tried layer_*, layer*, Layer*, *DecoderLayer*, *decoder_layer*, "
      "*.layers.*): pass --layer-range GLOB naming one range per transformer layer");
}

void TraceFacts::find_steps(PredictionReport& rep) {
  AnalysisOptions aopt;
  aopt.step_glob = opt.step_glob;
  aopt.layer_glob = layer_glob;
  an = analyze(trace, aopt);
  for (const auto& s : an.steps) steps.push_back({s.start, s.end, -1, -1, s.name, -1});
  find_iterations(rep);
  for (auto& l : layers) l.step = iteration_of(l.start);
  n_steps = std::max<std::size_t>(1, iterations.size());
  std::set<std::string> names;
  for (const auto& l : layers) names.insert(l.name);
  distinct_layer_names = names.size();

  if (!an.steps.empty()) {
    std::vector<double> d;
    for (const auto& s : an.steps) d.push_back(static_cast<double>(s.duration_ns));
    double tail = (1 - level) / 2;
    step_ns = Interval{median(d), quantile(d, tail), quantile(d, 1 - tail)};
    step_ns->lo = std::min(step_ns->lo, step_ns->value);
    step_ns->hi = std::max(step_ns->hi, step_ns->value);
    rep.notes.push_back(fmt::format("step time: median of {} '{}' ranges = {} (interval: {:.0f}% of steps)", d.size(),
                                    opt.step_glob, ms(step_ns->value), 100 * level));
    if (d.size() < 3) rep.notes.push_back("fewer than 3 steps: the step-time interval is the observed range only");
  } else if (have_iterations()) {
    std::vector<double> d;
    for (const auto& w : iterations) d.push_back(static_cast<double>(w.end - w.start));
    double tail = (1 - level) / 2;
    step_ns = Interval{median(d), std::min(median(d), quantile(d, tail)), std::max(median(d), quantile(d, 1 - tail))};
    rep.notes.push_back(
        fmt::format("no step ranges match '{}'; {}: step time = their median, {} (interval: {:.0f}% "
                    "of iterations)",
                    opt.step_glob, iteration_source, ms(step_ns->value), 100 * level));
  } else {
    rep.notes.push_back(
        fmt::format("no step ranges match '{}' and no repeated forward, backward or optimizer ranges "
                    "mark iterations: per-step figures and speedups need --step-range GLOB (or "
                    "torch.profiler's prof.step())",
                    opt.step_glob));
  }
}

void TraceFacts::find_iterations(PredictionReport&) {
  if (!steps.empty()) {
    iterations = steps;
    iteration_source = fmt::format("{} step ranges '{}'", steps.size(), opt.step_glob);
    return;
  }
  IterationMarkers m = find_iteration_markers(trace);
  iterations = std::move(m.windows);
  iteration_source = std::move(m.description);
}

std::string TraceFacts::repeat_check(const std::vector<bool>& has, const std::string& what) const {
  if (!have_iterations()) return "";
  std::vector<int> with_layers(iterations.size(), 0), with_pattern(iterations.size(), 0);
  for (std::size_t i = 0; i < layers.size() && i < has.size(); ++i) {
    if (layers[i].step < 0) continue;
    with_layers[static_cast<std::size_t>(layers[i].step)] = 1;
    if (has[i]) with_pattern[static_cast<std::size_t>(layers[i].step)] = 1;
  }
  int n = 0, k = 0;
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    n += with_layers[i];
    k += with_pattern[i];
  }
  if (n == 0) return fmt::format("no layer range lies inside the {}: nothing per step to count", iteration_source);
  if (k < 0.75 * n)
    return fmt::format(
        "{} appears in only {} of the {} iterations that hold layers ({}): it does not repeat per "
        "step",
        what, k, n, iteration_source);
  return "";
}

int TraceFacts::iteration_of(Ns t) const {
  for (std::size_t i = 0; i < iterations.size(); ++i)
    if (iterations[i].start <= t && t < iterations[i].end) return static_cast<int>(i);
  return -1;
}

// Host ranges and GPU time do not line up (the GPU runs behind the host), so a window's GPU
// time is the time of the work launched inside it, not the GPU activity inside it.
void TraceFacts::attribute_gpu_work() {
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
  api_order_.resize(trace.api_calls.size());
  for (std::size_t i = 0; i < api_order_.size(); ++i) api_order_[i] = i;
  std::sort(api_order_.begin(), api_order_.end(),
            [&](std::size_t a, std::size_t b) { return trace.api_calls[a].start < trace.api_calls[b].start; });
}

std::vector<std::size_t>::const_iterator TraceFacts::first_api_at(Ns a) const {
  return std::lower_bound(api_order_.begin(), api_order_.end(), a,
                          [&](std::size_t i, Ns t) { return trace.api_calls[i].start < t; });
}

double TraceFacts::launched_ns(const std::unordered_map<std::uint64_t, Ns>& by_corr, Ns a, Ns b,
                               std::int64_t tid) const {
  double total = 0;
  for_api_in(a, b, tid, [&](const ApiCall& c) {
    if (auto it = by_corr.find(c.correlation); c.correlation && it != by_corr.end())
      total += static_cast<double>(it->second);
  });
  return total;
}

std::vector<const SyncPoint*> TraceFacts::syncs_in(const Window& w) const {
  const auto& syncs = an.sync_points;
  std::vector<const SyncPoint*> v;
  auto it = std::lower_bound(syncs.begin(), syncs.end(), w.start, [](const SyncPoint& s, Ns t) { return s.start < t; });
  for (; it != syncs.end() && it->start < w.end; ++it)
    if (same_thread(w.tid, it->tid)) v.push_back(&*it);
  return v;
}

std::string TraceFacts::layer_count_text(std::size_t n) const {
  return steps.empty() ? fmt::format("{} layer ranges", n)
                       : fmt::format("{} layer ranges over {} steps", n, steps.size());
}

void TraceFacts::choose_round_trip() {
  const auto& syncs = an.sync_points;
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
}

void TraceFacts::collect_layer_syncs() {
  ls.assign(layers.size(), {});
  for (std::size_t i = 0; i < layers.size(); ++i) ls[i].syncs = syncs_in(layers[i]);
}

}  // namespace syncscope::model::detail
