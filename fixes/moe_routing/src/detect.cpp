// The MoE routing fix's trace detector (FixSpec::detect, predict --trace): runs of
// nonzero/where-style syncs in a layer (one per expert), E and the per-expert cost q from
// them, and the device variant's segment inputs.
#include "internal.hpp"
#include "syncscope/fixes/moe_routing/closed_form.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace syncscope::fixes::moe_routing::detail {

using namespace syncscope::model;          // the closed forms and the report's types
using namespace syncscope::model::detail;  // TraceFacts and the detectors' shared helpers

namespace {

// The layer ranges that hold a run of routing syncs (two or more nonzero/where-style syncs).
struct MoeLayers {
  std::vector<bool> has;                                // per layer of facts.layers
  std::vector<std::vector<const SyncPoint*>> routing;   // per layer: its routing syncs (routing_syncs)
  std::unordered_map<std::uint64_t, Ns> query_by_corr;  // routing-query kernels' time by launch
  std::vector<double> counts;                           // routing syncs per routing layer
  std::vector<double> bubbles;                          // each routing sync's bubble
  std::size_t occurrences = 0;                          // routing layer occurrences in scope
  std::set<std::string> names;                          // their distinct names
  std::map<std::string, int> causes;                    // routing syncs by cause
  double expert_gpu_ns = 0;                             // GPU time launched from each layer's first routing sync on
  double expert_row_ns = 0;                             // the GEMM and activation part of it (what padding multiplies)
};

MoeLayers collect_moe_layers(const TraceFacts& facts) {
  MoeLayers m;
  m.routing = routing_syncs(facts);
  m.query_by_corr = query_work_by_corr(facts.trace);
  m.has.assign(facts.ls.size(), false);
  for (std::size_t i = 0; i < facts.ls.size(); ++i) {
    const auto& routing = m.routing[i];
    if (routing.size() < 2 || !facts.in_scope(i)) continue;
    m.has[i] = true;
    ++m.occurrences;
    m.names.insert(facts.layers[i].name);
    m.counts.push_back(static_cast<double>(routing.size()));
    for (const auto* s : routing) {
      m.bubbles.push_back(static_cast<double>(s->bubble_ns));
      m.causes[s->cause]++;
    }
    const Window& w = facts.layers[i];
    m.expert_gpu_ns += facts.launched_ns(facts.gpu_by_corr, routing.front()->start, w.end, w.tid);
    m.expert_row_ns += facts.launched_ns(facts.row_work_by_corr, routing.front()->start, w.end, w.tid);
  }
  return m;
}

// "" when the routing pattern can be predicted from; else why not.
std::string moe_not_applicable(const TraceFacts& facts, const MoeLayers& m) {
  if (facts.layers.empty()) return "needs layer ranges (--layer-range GLOB) to find per-expert routing syncs";
  if (m.occurrences == 0)
    return fmt::format("no run of nonzero/where-style syncs inside any of the {} layer ranges{}", facts.layers.size(),
                       facts.have_iterations() ? " within whole iterations" : "");
  if (!facts.have_iterations() && m.names.size() < 2)
    return fmt::format(
        "the routing layers share one name and there are no step ranges ('{}') or repeated "
        "forward, backward or optimizer ranges: MoE layers per step cannot be counted (pass "
        "--step-range GLOB)",
        facts.opt.step_glob);
  return facts.repeat_check(m.has, "the routing-sync pattern");
}

// Per routing layer occurrence: the routing-query launches and their GPU time.
struct QueryLaunches {
  std::map<std::size_t, double> count;
  std::map<std::size_t, double> gpu_ns;
};

// The sorted variant's segment form, per MoE call (one routing run in a layer range): each
// routing sync's segment saving, and the loop's routing-query launches with their own time
// (the host gap before the call plus the call; a merged count read's copy call is part of
// its sync's wait, so only its gap), host or GPU by the side that binds. Fills p's
// sync_saving_ns, query_launches, query_launch_ns and calls_per_step.
QueryLaunches sorted_segment_inputs(const TraceFacts& facts, const MoeLayers& m, double steps_seen, MoeParams& p) {
  QueryLaunches q;
  if (facts.round_trip_ns <= 0) return q;
  const double r = facts.round_trip_ns;
  std::vector<double> sync_saving, query_n, query_ns;
  for (std::size_t i = 0; i < facts.ls.size(); ++i) {
    const auto& l = facts.ls[i];
    if (!m.has[i]) continue;
    const Window& w = facts.layers[i];
    double s = 0;
    std::set<Ns> merged_reads;
    for (const auto* sp : m.routing[i]) {
      s += sync_removal_saving_ns(segment_of_sync(static_cast<double>(sp->blocked_ns),
                                                  static_cast<double>(sp->bubble_ns), r),
                                  r);
      if (sp->merged_copy) merged_reads.insert(sp->start);
    }
    double n = 0, host = 0, gpu = 0;
    Ns prev = w.start;
    facts.for_api_in(w.start, w.end, w.tid, [&](const ApiCall& c) {
      const double gap = static_cast<double>(std::max<Ns>(0, c.start - prev));
      if (auto qk = m.query_by_corr.find(c.correlation); c.correlation && qk != m.query_by_corr.end()) {
        ++n;
        host += gap + static_cast<double>(c.end - c.start);
        gpu += static_cast<double>(qk->second);
      } else if (merged_reads.count(c.start)) {
        ++n;
        host += gap;
        if (auto g = facts.gpu_by_corr.find(c.correlation); g != facts.gpu_by_corr.end())
          gpu += static_cast<double>(g->second);
      }
      prev = std::max(prev, c.end);
    });
    if (n <= 0) continue;
    q.count[i] = n;
    q.gpu_ns[i] = gpu;
    double blocked = 0;
    for (const auto* sp : l.syncs) blocked += static_cast<double>(sp->blocked_ns);
    const double layer_host = static_cast<double>(w.end - w.start) - blocked;
    const double layer_gpu = facts.launched_ns(facts.gpu_by_corr, w.start, w.end, w.tid);
    sync_saving.push_back(s / static_cast<double>(m.routing[i].size()));
    query_n.push_back(n);
    query_ns.push_back((layer_host >= layer_gpu ? host : gpu) / n);
  }
  if (!sync_saving.empty()) {
    p.sync_saving_ns = mean_ci(sync_saving, facts.opt.bootstrap, facts.opt.seed + 11, facts.level);
    p.query_launches = mean_ci(query_n, facts.opt.bootstrap, facts.opt.seed + 12, facts.level);
    p.query_launch_ns = mean_ci(query_ns, facts.opt.bootstrap, facts.opt.seed + 13, facts.level);
    p.calls_per_step = static_cast<double>(sync_saving.size()) / steps_seen;
  }
  return q;
}

// The shortest time a kernel takes: the trace's 10th percentile of kernel durations
// (calibrate's kernel_floor_ns estimator); 0 without kernels.
double kernel_floor_ns(const Trace& trace) {
  std::vector<double> d;
  for (const auto& k : trace.kernels) d.push_back(static_cast<double>(k.end - k.start));
  if (d.empty()) return 0;
  auto nth = d.begin() + static_cast<std::ptrdiff_t>(d.size() / 10);
  std::nth_element(d.begin(), nth, d.end());
  return *nth;
}

// What the device variant no longer issues, per step: host time of the launches (launches)
// and GPU time (removed_gpu).
struct RemovedWork {
  std::vector<double> launches, removed_gpu;
};

// What the device variant no longer issues, per MoE call, counted in the loop's own
// launches (derivation: docs/model-analytic.md, "MoE routing"). Between the first and the
// last routing sync the host runs E - 1 expert iterations of n_e launches each, q_e of them
// the routing query (is_routing_query_kernel, the count read); h is their mean host time
// (the framework's time between calls included). Forward: the loop's E n_e launches become
// the expert work once (n_e - q_e, one grouped launch per expert launch) plus
// kMoeDeviceRoutingLaunches on-device routing launches. Backward (once per layer, not per
// routing pass): autograd issues one backward launch per differentiable forward launch,
// n_e - q_e per expert, which the grouped form issues once instead of E times.
RemovedWork device_removed_work(const TraceFacts& facts, const MoeLayers& m, const QueryLaunches& q) {
  const std::size_t S = facts.an.steps.size();
  RemovedWork out{std::vector<double>(S, 0), std::vector<double>(S, 0)};
  const double kernel_floor = kernel_floor_ns(facts.trace);
  std::map<std::string, int> occ_per_name;
  for (std::size_t i = 0; i < facts.ls.size(); ++i)
    if (m.has[i]) occ_per_name[facts.layers[i].name]++;
  for (std::size_t i = 0; i < facts.ls.size(); ++i) {
    const auto& l = facts.ls[i];
    if (!m.has[i] || facts.layers[i].step < 0) continue;
    const SyncPoint* first = m.routing[i].front();
    const SyncPoint* last = m.routing[i].back();
    const Ns from = first->start + first->blocked_ns, to = last->start;
    double blocked = 0, calls = 0;
    for (const auto* sp : l.syncs)
      if (from <= sp->start && sp->start < to) blocked += static_cast<double>(sp->blocked_ns);
    facts.for_api_in(from, to, facts.layers[i].tid, [&](const ApiCall& c) {
      if (c.correlation && facts.gpu_by_corr.count(c.correlation)) ++calls;
    });
    const double iters = static_cast<double>(m.routing[i].size() - 1);
    if (calls <= 0 || iters <= 0) continue;
    const double host_busy = std::max(0.0, static_cast<double>(to - from) - blocked);
    const double h = host_busy / calls, n_e = calls / iters;
    const double E = static_cast<double>(m.routing[i].size());
    const auto qc = q.count.find(i);
    const double q_e = qc != q.count.end() ? qc->second / E : 0.0;
    const double work = std::max(0.0, n_e - q_e);
    const double fwd = E * n_e - work - kMoeDeviceRoutingLaunches;
    const double passes_here = facts.have_iterations()
                                   ? std::max(1.0, static_cast<double>(occ_per_name[facts.layers[i].name]) /
                                                       static_cast<double>(facts.n_steps))
                                   : 1.0;
    const double bwd = (E - 1) * work / passes_here;
    const auto step = static_cast<std::size_t>(facts.layers[i].step);
    out.launches[step] += std::max(0.0, fwd + bwd) * h;
    // The GPU side loses the query kernels' time and, per expert launch folded into a
    // grouped one, the shortest time a kernel takes: the work itself stays.
    const double folded = (E - 1) * work * (1.0 + 1.0 / passes_here) - kMoeDeviceRoutingLaunches;
    const auto qg = q.gpu_ns.find(i);
    out.removed_gpu[step] += (qg != q.gpu_ns.end() ? qg->second : 0.0) + std::max(0.0, folded) * kernel_floor;
  }
  return out;
}

// The device variant's segment form's inputs, per step: GPU busy, the bubbles of the syncs
// that stay, and the host time left once the routing syncs and the per-expert launches go.
// Fills p's gpu_busy_ns, other_bubble_ns and host_after_ns (when the trace has steps).
void device_segment_inputs(const TraceFacts& facts, const MoeLayers& m, const QueryLaunches& q, MoeParams& p) {
  if (facts.an.steps.empty()) return;
  std::set<const SyncPoint*> routing;
  for (const auto& l : m.routing)
    if (l.size() >= 2) routing.insert(l.begin(), l.end());
  const std::size_t S = facts.an.steps.size();
  std::vector<double> busy(S, 0), other_bubbles(S, 0), routing_blocked(S, 0);
  auto step_of = [&](Ns t) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < S; ++i)
      if (facts.an.steps[i].start <= t && t < facts.an.steps[i].end) return i;
    return std::nullopt;
  };
  for (std::size_t i = 0; i < S; ++i) busy[i] = static_cast<double>(facts.an.steps[i].gpu_busy_ns);
  for (const auto& sp : facts.an.sync_points) {
    auto i = step_of(sp.start);
    if (!i) continue;
    if (routing.count(&sp)) routing_blocked[*i] += static_cast<double>(sp.blocked_ns);
    else other_bubbles[*i] += static_cast<double>(sp.bubble_ns);
  }
  const RemovedWork removed = device_removed_work(facts, m, q);
  for (std::size_t i = 0; i < S; ++i) busy[i] = std::max(0.0, busy[i] - removed.removed_gpu[i]);
  std::vector<double> host_after(S);
  for (std::size_t i = 0; i < S; ++i)
    host_after[i] =
        std::max(0.0, static_cast<double>(facts.an.steps[i].duration_ns) - routing_blocked[i] - removed.launches[i]);
  p.gpu_busy_ns = mean_ci(busy, facts.opt.bootstrap, facts.opt.seed + 8, facts.level);
  p.other_bubble_ns = mean_ci(other_bubbles, facts.opt.bootstrap, facts.opt.seed + 9, facts.level);
  p.host_after_ns = mean_ci(host_after, facts.opt.bootstrap, facts.opt.seed + 10, facts.level);
}

// The expert work per step in forward: all GPU time launched in the routing regions, and
// its row-scaled part.
struct ExpertWork {
  double per_step_expert_ns = 0;
  double per_step_row_ns = 0;
};

// One variant's prediction from the parameters, with its evidence and notes.
FixPrediction predict_moe_variant(const TraceFacts& facts, const MoeLayers& m, const MoeParams& p,
                                  const ExpertWork& work, const char* v) {
  MoeParams pv = p;
  const std::optional<double> top_k = facts.opt.fix_number("moe_routing", kTopKTraceKey);
  const bool padded = std::string(v) == "device" && top_k && *top_k > 0;
  const double ratio = padded ? static_cast<double>(p.experts) / *top_k : 1.0;
  // Padding multiplies only the work that scales with an expert's rows: its GEMMs and
  // activation. The per-expert gathers, weights and accumulation keep their total size,
  // and the small per-expert launches of the loop mostly go away. When no kernel in the
  // routing region looks like a GEMM (names unknown to is_row_scaled_kernel), all of its
  // work is taken as row work: an upper bound on the padding's cost, said so in a note.
  const bool row_work_known = work.per_step_row_ns > 0;
  const double scaled_ns = row_work_known ? work.per_step_row_ns : work.per_step_expert_ns;
  // Backward runs two GEMMs of the same size per forward GEMM. The measured row work
  // covers every pass that routes (forward, and a checkpoint recompute when a layer name
  // routes more than once per step); backward adds two forward passes' worth: in all
  // (E/k - 1) * measured * (1 + 2 / passes), 3x the forward work without recompute.
  const double passes = m.names.size() >= 2 && facts.have_iterations()
                            ? std::max(1.0, static_cast<double>(m.occurrences) / static_cast<double>(facts.n_steps) /
                                                static_cast<double>(m.names.size()))
                            : 1.0;
  const double extra_ns = padded ? (ratio - 1.0) * scaled_ns * (1.0 + 2.0 / passes) : 0.0;
  if (padded) pv.kernel_delta_ns = Interval::exact(-extra_ns);
  FixPrediction f = predict_moe(pv, v, facts.step_ns, facts.opt.propagation);
  if (padded) {
    f.evidence.push_back(
        fmt::format("expert row work (GEMM and activation kernels launched from each layer's first routing sync to its "
                    "end): {} per step in forward, of {} GPU time launched there; the device variant pads every expert "
                    "to T rows, E/k = {:.2f} times that row work, over {:.0f} routing pass(es) per layer and backward "
                    "(x{:.2f} the measured work): {} more per step",
                    ms(work.per_step_row_ns), ms(work.per_step_expert_ns), ratio, passes, 1.0 + 2.0 / passes,
                    ms(extra_ns)));
    if (!row_work_known)
      f.notes.push_back(
          "no GEMM- or activation-like kernel names in the routing region: all of its GPU time "
          "taken as row work, so the padding's cost is an upper bound");
  }
  std::string cs;
  for (const auto& [c, n] : m.causes) cs += fmt::format("{}{} x{}", cs.empty() ? "" : ", ", c, n);
  f.evidence.push_back(
      fmt::format("{} of {} layer ranges hold a run of routing syncs; median {} per layer "
                  "(taken as E): {}",
                  m.occurrences, facts.layers.size(), p.experts, cs));
  f.evidence.push_back(fmt::format("q = mean bubble of those syncs = {} (bootstrap {:.0f}% interval)",
                                   us(p.per_expert_ns.value), 100 * facts.level));
  if (facts.have_iterations())
    f.notes.push_back(
        fmt::format("moe_layers counts layer occurrences per step with routing syncs over {} (a "
                    "recompute pass counts again), so passes = 1",
                    facts.iteration_source));
  else
    f.notes.push_back(
        "no step ranges or iteration markers: moe_layers counts each layer name with routing syncs "
        "once (one routing pass per step assumed)");
  if (std::string(v) == "sorted" && p.sync_saving_ns)
    f.evidence.push_back(
        fmt::format("per MoE call ({:.1f} per step): a routing sync's segment saving min(blocked, bubble) = {}; {:.1f} "
                    "routing-query launches (mask, nonzero/where, count read, token/slot index kernels) of {} own time "
                    "each; sorted launches {} per expert and {} per call instead",
                    p.calls_per_step, us(p.sync_saving_ns->value), p.query_launches->value,
                    us(p.query_launch_ns->value), kMoeSortedLaunchesPerExpert, kMoeSortedLaunchesPerCall));
  if (std::string(v) == "device" && p.gpu_busy_ns)
    f.evidence.push_back(fmt::format(
        "per step: GPU busy without the routing queries and the per-expert kernels' floor {}, bubbles of the other "
        "syncs {}, host time without the routing syncs and the per-expert launches {} (the device variant runs at "
        "the longer of the two sides)",
        ms(p.gpu_busy_ns->value), ms(p.other_bubble_ns->value), ms(p.host_after_ns->value)));
  return f;
}

}  // namespace

// MoE routing: runs of nonzero/where-style syncs in a layer; E = the median run length,
// q = their mean bubble; the device variant's segment form from per-step GPU busy and
// host time.
void detect(const TraceFacts& facts, PredictionReport& rep) {
  const MoeLayers m = collect_moe_layers(facts);
  FixPrediction base;
  base.fix = "moe_routing";
  if (std::string reason = moe_not_applicable(facts, m); !reason.empty()) {
    base.applicable = false;
    base.reason = reason;
    add_not_applicable(rep, base, {"sorted", "device"});
    return;
  }
  MoeParams p;
  p.experts = static_cast<int>(std::lround(median(m.counts)));
  // Per step: occurrences over whole iterations; without iterations, each distinct layer
  // name once (one routing pass per step assumed, said in a note).
  const double occ = static_cast<double>(m.occurrences);
  p.moe_layers = facts.have_iterations() ? static_cast<int>(std::lround(occ / static_cast<double>(facts.n_steps)))
                                         : static_cast<int>(m.names.size());
  p.passes = 1;
  p.per_expert_ns = mean_ci(m.bubbles, facts.opt.bootstrap, facts.opt.seed + 6, facts.level);
  // Occurrences per step: over whole iterations, else each name's occurrences (one pass).
  const double steps_seen =
      facts.have_iterations() ? static_cast<double>(facts.n_steps) : occ / static_cast<double>(m.names.size());
  const ExpertWork work{m.expert_gpu_ns / steps_seen, m.expert_row_ns / steps_seen};
  const QueryLaunches q = sorted_segment_inputs(facts, m, steps_seen, p);
  device_segment_inputs(facts, m, q, p);
  for (const char* v : {"sorted", "device"}) rep.fixes.push_back(predict_moe_variant(facts, m, p, work, v));
}

}  // namespace syncscope::fixes::moe_routing::detail
