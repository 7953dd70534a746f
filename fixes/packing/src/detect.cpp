// The packing fix's trace detector (FixSpec::detect, predict --trace): layers whose
// attention rebuilds the packed-sequence metadata with host syncs, the per-layer cost s and
// the closed form's inputs from them (model/README.md, "Predicting from a trace").
#include "internal.hpp"
#include "syncscope/fixes/packing/closed_form.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace syncscope::fixes::packing::detail {

using namespace syncscope::model;          // the closed forms and the report's types
using namespace syncscope::model::detail;  // TraceFacts and the detectors' shared helpers

namespace {

// One rebuilding layer occurrence: its step (-1 without steps), start, and the time the
// cache removes from it (ns): its wall time in the trace less max(H_i - w_h,i, D_i - w_d,i).
struct Occurrence {
  int step;
  Ns start;
  double removed_ns;
};

// The segment form evaluated per occurrence and summed, replacing its mean-input value.
// Derivation (ns). The mean form is L(k r + w_h + max(H - w_h, D)) - [first + (L-1)
// max(H - w_h, D - w_d)] with H, D averaged over all rebuilding occurrences. It misses:
// (1) max() is convex: the forward's occurrences (host-bound) and the checkpoint
//     recompute's (more host and GPU work each) fall in different regimes, and the mean
//     puts them all in one. Per occurrence i the cache removes wall_i - max(H_i - w_h,i,
//     D_i - w_d,i), wall_i = H_i + the blocked time of its syncs.
// (2) a sync's blocked time is r plus the GPU work still queued when it is issued, not k r.
//     The first rebuild after the forward's last sync waits for everything launched
//     since, outside any layer (the LM head, the loss and its backward): a wait once per
//     step, whatever L. Without the syncs the host issues the recompute layers while the
//     GPU runs that work, so the cache removes the wait with the rest of the range.
// Each step keeps its first occurrence's rebuild (the cache is filled there), and with
// windows that change from layer to layer (TracePredictOptions::fix_lists, kVisitWindowsTraceKey) the
// rebuild of every occurrence where Unsloth's one-entry mask cache misses, so
//   saved = (sum over rebuilding occurrences of removed_i - sum over steps of the kept removed_i) / steps.
// A kept occurrence is charged its whole removed_i: its metadata read (1 of the 3 reads)
// is still served by the cache there, a saving this leaves out (an under-estimate of r + the
// metadata kernels per miss).
// Condition: the cached step absorbs the removed waits only while its host stays the longer
// path (the GPU work it no longer waits for is overlapped, not removed); a cached step
// that turns GPU-bound saves less. On qwen3-0.6b (host: cpp, sim) the wait is 1.78 ms per
// step and the convexity 30 us per recompute occurrence (model/README.md).
void apply_per_occurrence_sum(const std::vector<Occurrence>& occ, const TraceFacts& facts,
                              const std::vector<bool>& misses, FixPrediction& f) {
  double total = 0;
  std::map<int, std::vector<const Occurrence*>> by_step;
  for (const auto& o : occ) {
    total += o.removed_ns;
    by_step[o.step].push_back(&o);
  }
  for (auto& [step, os] : by_step) {
    std::stable_sort(os.begin(), os.end(),
                     [](const Occurrence* a, const Occurrence* b) { return a->start < b->start; });
    if (misses.size() == os.size()) {
      for (std::size_t i = 0; i < os.size(); ++i)
        if (misses[i]) total -= os[i]->removed_ns;
    } else {
      // The occurrences do not pair with the builds: the first, and the other misses at
      // the step's mean.
      const auto m = static_cast<double>(std::count(misses.begin(), misses.end(), true));
      double sum = 0;
      for (const auto* o : os) sum += o->removed_ns;
      total -= os.front()->removed_ns;
      if (m > 1) total -= (m - 1) * sum / static_cast<double>(os.size());
    }
  }
  const double saved = total / static_cast<double>(std::max<std::size_t>(1, facts.n_steps));
  const double delta = saved - f.saving_ns.value;
  f.alternatives["segment model, mean inputs"] = f.saving_ns;
  f.alternatives["segment model"] =
      Interval{saved, std::max(0.0, f.saving_ns.lo + delta), std::max(saved, f.saving_ns.hi + delta)};
  f.saving_ns = f.alternatives["segment model"];
  f.formula =
      "segment model per occurrence: sum over rebuilding occurrences but each step's first (and mask cache misses) of "
      "wall_i - max(H_i - w_h,i, D_i - w_d,i), per step";
  f.notes.push_back(fmt::format(
      "summed per rebuilding occurrence: {} against {} from mean inputs (the syncs' waits for GPU work launched "
      "before their layer, and each occurrence's own regime; the interval is the mean form's, shifted)",
      ms(saved), ms(saved - delta)));
  attach_speedup(f, facts.step_ns, facts.opt.propagation);
}

// Whether layer i counts and holds the pattern: a packing sync or a rebuild range.
bool layer_has_packing(const TraceFacts& facts, const PackingLayers& pl, std::size_t i) {
  return facts.in_scope(i) && pl.has(i);
}

// A layer usually runs more than once per step (forward, then backward or a checkpoint
// recompute) under the same range name. Whether the pattern is there is judged per
// distinct layer name (a name has it when any occurrence does); what the cache saves is
// counted in rebuilds: every occurrence per step that rebuilds (the forward's and, under
// gradient checkpointing, the recompute's: 2L for Unsloth's uncached path) but the first,
// so L is the rebuilding occurrences per step when steps are known, else the names.
// Traces that give every layer the same name are judged by occurrence.
struct PackingPattern {
  std::vector<bool> has;  // per layer
  bool by_name = false;   // judged per distinct name (two or more names)
  std::size_t units = 0, with_pattern = 0;
};

PackingPattern find_packing_pattern(const TraceFacts& facts, const PackingLayers& pl) {
  PackingPattern pat;
  pat.has.resize(facts.layers.size());
  for (std::size_t i = 0; i < pat.has.size(); ++i) pat.has[i] = layer_has_packing(facts, pl, i);
  std::map<std::string, bool> name_has;
  for (std::size_t i = 0; i < facts.layers.size(); ++i) {
    bool& h = name_has[facts.layers[i].name];
    h = h || layer_has_packing(facts, pl, i);
  }
  pat.by_name = name_has.size() >= 2;
  if (pat.by_name) {
    pat.units = name_has.size();
    for (const auto& [n, h] : name_has) pat.with_pattern += h ? 1 : 0;
  } else {
    for (std::size_t i = 0; i < facts.layers.size(); ++i) {
      pat.units += facts.in_scope(i) ? 1 : 0;
      pat.with_pattern += pat.has[i] ? 1 : 0;
    }
  }
  return pat;
}

// "" when the pattern can be predicted from; else why not.
std::string packing_not_applicable(const TraceFacts& facts, const PackingPattern& pat) {
  const std::string repeats = facts.repeat_check(pat.has, "the rebuild pattern");
  if (facts.layers.size() < 2) return "needs at least two layer ranges (--layer-range GLOB) to see a per-layer pattern";
  if (!pat.by_name && !facts.have_iterations())
    return fmt::format(
        "the layer ranges share one name and there are no step ranges ('{}') or repeated "
        "forward, backward or optimizer ranges: layers per step cannot be counted (pass "
        "--step-range GLOB)",
        facts.opt.step_glob);
  if (!repeats.empty()) return repeats;
  if (pat.with_pattern < 0.75 * static_cast<double>(pat.units))
    return fmt::format(
        "no per-layer metadata/mask rebuild: {} of {} {} hold a sync with a repeated "
        "cause or a range named like mask/seqlen/cu_seqlens (need at least 75%)",
        pat.with_pattern, pat.units, pat.by_name ? "distinct layer names" : "layer ranges");
  return "";
}

// Per rebuilding layer occurrence: s (sync bubbles + rebuild kernel time), host and GPU
// work, the rebuild's host and GPU part, the packing syncs; and the causes and range names.
struct PackingSamples {
  std::vector<double> s_v, host_v, gpu_v, wh_v, wd_v, k_v;
  std::vector<Occurrence> occ;  // per rebuilding occurrence (apply_per_occurrence_sum)
  std::map<std::string, int> cause_count;
  std::map<std::string, int> range_count;
  std::size_t used = 0;  // rebuilding occurrences
};

PackingSamples collect_packing_samples(const TraceFacts& facts, const PackingLayers& pl) {
  PackingSamples ps;
  for (std::size_t i = 0; i < facts.layers.size(); ++i) {
    if (!layer_has_packing(facts, pl, i)) continue;
    ++ps.used;
    const auto& w = facts.layers[i];
    double bubble = 0, blocked = 0, rebuild_gpu = 0, rebuild_host = 0;
    for (const auto* s : pl.syncs[i]) {
      bubble += static_cast<double>(s->bubble_ns);
      ps.cause_count[s->cause + " (" + s->api + ")"]++;
    }
    for (const auto* s : facts.ls[i].syncs) blocked += static_cast<double>(s->blocked_ns);
    for (const auto& r : pl.rebuilds[i]) {
      ps.range_count[r.name]++;
      double in_blocked = 0;
      for (const auto* s : facts.ls[i].syncs)
        if (r.start <= s->start && s->start < r.end) in_blocked += static_cast<double>(s->blocked_ns);
      rebuild_host += std::max(0.0, static_cast<double>(r.end - r.start) - in_blocked);
    }
    // GPU time (kernels, memsets) of the work launched inside the rebuild ranges.
    for (const auto& r : pl.rebuilds[i]) rebuild_gpu += facts.launched_ns(facts.gpu_by_corr, r.start, r.end, r.tid);
    ps.s_v.push_back(bubble + rebuild_gpu);
    ps.host_v.push_back(std::max(0.0, static_cast<double>(w.end - w.start) - blocked));
    ps.gpu_v.push_back(facts.launched_ns(facts.gpu_by_corr, w.start, w.end, w.tid));
    ps.wh_v.push_back(rebuild_host);
    ps.wd_v.push_back(rebuild_gpu);
    ps.k_v.push_back(static_cast<double>(pl.syncs[i].size()));
    // The occurrence's wall time with the rebuild (its host work, the rebuild, and every
    // sync's blocked time, which includes waiting for GPU work launched before the layer:
    // after the forward, the LM head and loss) against its time without: the larger of its
    // host and GPU work less the rebuild's (the segment form's max(H - w_h, D - w_d)).
    const double wall = static_cast<double>(w.end - w.start);
    const double cached = std::max(ps.host_v.back() - rebuild_host, ps.gpu_v.back() - rebuild_gpu);
    ps.occ.push_back({w.step, w.start, std::max(0.0, wall - cached)});
  }
  return ps;
}

PackingParams packing_params(const TraceFacts& facts, const PackingPattern& pat, const PackingSamples& ps) {
  PackingParams p;
  p.layers = pat.by_name && !facts.have_iterations()
                 ? static_cast<int>(pat.with_pattern)
                 : static_cast<int>(std::lround(static_cast<double>(ps.used) / static_cast<double>(facts.n_steps)));
  p.s_ns = mean_ci(ps.s_v, facts.opt.bootstrap, facts.opt.seed, facts.level);
  p.syncs_per_layer = static_cast<int>(std::lround(median(ps.k_v)));
  if (facts.round_trip_ns > 0) {
    p.host_ns = mean_ci(ps.host_v, facts.opt.bootstrap, facts.opt.seed + 1, facts.level);
    p.gpu_ns = mean_ci(ps.gpu_v, facts.opt.bootstrap, facts.opt.seed + 2, facts.level);
    p.rebuild_host_ns = mean_ci(ps.wh_v, facts.opt.bootstrap, facts.opt.seed + 3, facts.level);
    p.rebuild_gpu_ns = mean_ci(ps.wd_v, facts.opt.bootstrap, facts.opt.seed + 4, facts.level);
    p.round_trip_ns = Interval::exact(facts.round_trip_ns);
  }
  return p;
}

// What the prediction rests on: the layers, the syncs and their causes, the rebuild ranges
// (or the weak evidence without them), s, the round trip, a checkpoint recompute.
void add_packing_evidence(const TraceFacts& facts, const PackingLayers& pl, const PackingParams& p,
                          const PackingSamples& ps, FixPrediction& f) {
  f.evidence.push_back(fmt::format("{} matching '{}' ({} per step)", facts.layer_count_text(facts.layers.size()),
                                   facts.layer_glob, p.layers));
  std::size_t nsync = 0;
  for (const auto& l : pl.syncs) nsync += l.size();
  std::string causes;
  for (const auto& [c, n] : ps.cause_count) causes += fmt::format("{}{} x{}", causes.empty() ? "" : ", ", c, n);
  const char* where = pl.any_rebuild_range ? "inside the rebuild ranges" : "with a cause repeated in >= 75% of layers";
  f.evidence.push_back(fmt::format("{} sync points inside layers {} ({} per layer): {}", nsync, where,
                                   p.syncs_per_layer, causes.empty() ? "none" : causes));
  if (pl.any_rebuild_range) {
    std::string names;
    for (const auto& [n, c] : ps.range_count) names += fmt::format("{}'{}' x{}", names.empty() ? "" : ", ", n, c);
    f.evidence.push_back(
        fmt::format("rebuild ranges: {}; their kernels: {} per layer on the GPU", names, ms(median(ps.wd_v))));
  } else {
    f.evidence.push_back(
        "no ranges named like mask/seqlen/cu_seqlens: s counts only the sync bubbles (the "
        "rebuild's own GPU kernels are not attributed)");
    // A sync repeated in every layer is what a metadata rebuild looks like, but also what
    // any other per-layer host read looks like (a logged scalar, a data-dependent shape).
    f.notes.push_back(fmt::format(
        "weak evidence: only a sync cause repeated in every layer ({}), no rebuild range; this is the packing "
        "pattern only if that sync reads sequence metadata (cu_seqlens/max_seqlen). Wrap the rebuild in a "
        "record_function/NVTX range named like 'cu_seqlens' or 'mask' to confirm it",
        causes.empty() ? "none" : causes));
  }
  f.evidence.push_back(
      fmt::format("s per layer = sync bubbles + rebuild kernel time: mean {} over {} layers "
                  "(bootstrap {:.0f}% interval)",
                  ms(p.s_ns.value), facts.layers.size(), 100 * facts.level));
  if (facts.round_trip_ns > 0)
    f.evidence.push_back(fmt::format("round trip r = {} ({})", us(facts.round_trip_ns), facts.round_trip_source));
  if (p.layers > 0 && static_cast<double>(facts.layers.size()) / static_cast<double>(facts.n_steps) > 0) {
    std::set<std::string> distinct;
    for (const auto& l : facts.layers) distinct.insert(l.name);
    if (distinct.size() > 1 && static_cast<int>(distinct.size()) < p.layers)
      f.notes.push_back(
          fmt::format("{} rebuilds per step but {} distinct layer names: layers rebuild more "
                      "than once per step (a checkpoint recompute); the cache serves them all",
                      p.layers, distinct.size()));
  }
}

}  // namespace

// Packing: per-layer metadata/mask rebuilds (ranges named like them, or syncs whose cause
// repeats in most layers); s per layer = those syncs' bubbles + the rebuild kernels' time.
void detect(const TraceFacts& facts, PredictionReport& rep) {
  const PackingLayers pl = find_packing_layers(facts);
  const PackingPattern pat = find_packing_pattern(facts, pl);
  if (std::string reason = packing_not_applicable(facts, pat); !reason.empty()) {
    FixPrediction f;
    f.fix = "packing";
    f.variant = "cached";
    f.applicable = false;
    f.reason = reason;
    FixPrediction d = f;
    d.variant = "device";
    rep.fixes.push_back(std::move(f));
    rep.fixes.push_back(std::move(d));
    return;
  }
  const PackingSamples ps = collect_packing_samples(facts, pl);
  PackingParams p = packing_params(facts, pat, ps);
  std::vector<int> windows;
  for (const double w : facts.opt.fix_list("packing", kVisitWindowsTraceKey)) windows.push_back(static_cast<int>(w));
  const std::vector<bool> misses = packing_mask_cache_misses(windows);
  if (!misses.empty()) {
    p.cached_rebuilds =
        std::clamp(static_cast<int>(std::count(misses.begin(), misses.end(), true)), 1, std::max(1, p.layers));
    p.cached_rebuilds_why = fmt::format(
        "over the step's {} metadata builds in issue order, windows from the model's "
        "layer types; the trace shows {} rebuilding layers per step",
        misses.size(), p.layers);
  }
  FixPrediction f = predict_packing(p, facts.step_ns, facts.opt.propagation);
  if (facts.round_trip_ns > 0 && !ps.occ.empty()) apply_per_occurrence_sum(ps.occ, facts, misses, f);
  add_packing_evidence(facts, pl, p, ps, f);
  FixPrediction d = predict_packing(p, facts.step_ns, facts.opt.propagation, "device");
  d.evidence = f.evidence;
  rep.fixes.push_back(std::move(f));
  rep.fixes.push_back(std::move(d));
}

}  // namespace syncscope::fixes::packing::detail
