// The offload fix's trace detector (FixSpec::detect, predict --trace): host-to-device reloads
// ahead of each layer's backward, their copy time c against the layer's compute g, and the
// closed form's inputs from them.
#include "internal.hpp"
#include "syncscope/fixes/offload/closed_form.hpp"
#include "syncscope/model/trace_predict_facts.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace syncscope::fixes::offload::detail {

using namespace syncscope::model;          // the closed forms and the report's types
using namespace syncscope::model::detail;  // TraceFacts and the detectors' shared helpers

// Offload reload (predictions only from evidence that fits): host-to-device copies of >= 1 MiB launched
// inside a backward range on the thread that runs it (the autograd thread in torch.profiler
// traces; input batches are copied by the main thread before forward), repeating in every
// iteration with a count near the layer count. c = their duration, g = backward kernel time
// per reload; copies already overlapping compute mean the fix is in place. Unsloth keeps the
// last layer's input on the GPU and reloads L-1: with L-1 reloads per step and L
// layer names, L = reloads + 1.
namespace {

constexpr std::uint64_t kMinReloadBytes = 1u << 20;

// Where backward runs: outermost host ranges named like backward (autograd nodes, a
// "backward" record_function or NVTX range), Python frames excluded (the main thread's
// Tensor.backward frame waits while the autograd thread runs).
std::vector<Window> backward_ranges(const Trace& trace) {
  std::vector<Window> w;
  for (const auto& r : trace.ranges) {
    if (!is_host_range(r) || r.kind == RangeKind::PythonFunction) continue;
    if (lower(trace.str(r.name)).find("backward") == std::string::npos) continue;
    w.push_back({r.start, r.end, r.pid, r.tid, std::string(trace.str(r.name)), -1});
  }
  return outermost(std::move(w));
}

struct Reloads {
  std::vector<const Memcpy*> copies;  // reloads inside whole iterations
  std::vector<int> per_iteration;     // reloads per iteration
  std::size_t elsewhere = 0;          // >= 1 MiB H2D copies not launched inside backward on its thread
  std::size_t no_call = 0;            // copies whose launching call is not in the trace
  double backward_kernel_ns = 0;      // kernels launched inside backward, whole iterations
  double backward_host_ns = 0;        // host time inside backward (sync waits excluded), whole iterations
};

Reloads find_reloads(const TraceFacts& facts, const std::vector<Window>& bw) {
  const Trace& trace = facts.trace;
  Reloads out;
  out.per_iteration.assign(facts.iterations.size(), 0);
  std::unordered_map<std::uint64_t, const ApiCall*> call_of;
  for (const auto& a : trace.api_calls)
    if (a.correlation) call_of[a.correlation] = &a;
  auto inside_backward = [&](Ns t, std::int64_t tid) {
    auto it = std::upper_bound(bw.begin(), bw.end(), t, [](Ns x, const Window& w) { return x < w.start; });
    for (auto r = std::make_reverse_iterator(it); r != bw.rend(); ++r)
      if (r->start <= t && t < r->end && same_thread(r->tid, tid)) return true;
    return false;
  };
  for (const auto& m : trace.memcpys) {
    if (m.kind != CopyKind::HtoD || m.bytes < kMinReloadBytes) continue;
    auto c = call_of.find(m.correlation);
    if (!m.correlation || c == call_of.end()) {
      ++out.no_call;
      continue;
    }
    if (!inside_backward(c->second->start, c->second->tid)) {
      ++out.elsewhere;
      continue;
    }
    const int i = facts.iteration_of(c->second->start);
    if (i < 0) continue;
    ++out.per_iteration[static_cast<std::size_t>(i)];
    out.copies.push_back(&m);
  }
  for (const auto& w : bw) {
    if (facts.iteration_of(w.start) < 0) continue;
    out.backward_kernel_ns += facts.launched_ns(facts.kernel_by_corr, w.start, w.end, w.tid);
    // The host's own time: the range less the time it sat blocked in syncs (a blocked host
    // issues nothing, so that time is the GPU's, not the host's).
    double blocked = 0;
    for (const auto* sp : facts.syncs_in(w)) blocked += static_cast<double>(std::min(sp->end, w.end) - sp->start);
    out.backward_host_ns += std::max(0.0, static_cast<double>(w.end - w.start) - blocked);
  }
  return out;
}

// Why the reloads are no per-layer checkpoint reload pattern, or "" when they are one.
std::string reject_reloads(const TraceFacts& facts, const Reloads& r, double per_step) {
  std::vector<double> counts(r.per_iteration.begin(), r.per_iteration.end());
  const double med = median(counts);
  const std::string where = fmt::format(
      "{} host-to-device copies of >= 1 MiB launched inside backward ranges on the backward thread over {} ({} "
      "more launched outside backward or on another thread, e.g. input batches{})",
      r.copies.size(), facts.iteration_source, r.elsewhere,
      r.no_call ? fmt::format("; {} without their launching call in the trace", r.no_call) : "");
  if (med < 2) return where + ": no per-layer checkpoint reload pattern";
  const double tol = std::max(1.0, 0.25 * med);
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (std::abs(counts[i] - med) > tol)
      return fmt::format("{}: the count does not repeat per step ({} in iteration {}, median {:.0f})", where, counts[i],
                         i, med);
  const double L = static_cast<double>(facts.distinct_layer_names);
  if (L >= 2 && std::abs(per_step - L) > std::max(2.0, 0.25 * L))
    return fmt::format("{}: {:.1f} per step is not near the {} layer ranges' count", where, per_step, L);
  return "";
}

}  // namespace

void detect(const TraceFacts& facts, PredictionReport& rep) {
  const std::vector<Window> bw = backward_ranges(facts.trace);
  FixPrediction base;
  base.fix = "offload";
  Reloads reloads;
  double per_step_reloads = 0;
  if (bw.empty()) {
    base.applicable = false;
    base.reason =
        "no backward ranges (host ranges whose name contains 'backward', e.g. torch.profiler's autograd "
        "ops) to locate checkpoint reload copies in";
  } else if (!facts.have_iterations()) {
    base.applicable = false;
    base.reason = fmt::format(
        "no step ranges ('{}') and no repeated forward, backward or optimizer ranges to find "
        "iterations: reloads per step cannot be counted (pass --step-range GLOB)",
        facts.opt.step_glob);
  } else {
    reloads = find_reloads(facts, bw);
    per_step_reloads = static_cast<double>(reloads.copies.size()) / static_cast<double>(facts.iterations.size());
    base.reason = reject_reloads(facts, reloads, per_step_reloads);
    base.applicable = base.reason.empty();
    if (base.applicable && facts.opt.profile && facts.opt.profile->unified_memory) {
      base.applicable = false;
      base.reason =
          "the GPU profile says unified memory (GB10 / APU): double-buffered reload is known to hurt there "
          "(unsloth-zoo PR 928)";
    }
  }
  if (!base.applicable) {
    add_not_applicable(rep, base, {"double", "prefetch"});
  } else {
    // Kernel time overlapping each copy on other streams of its device.
    std::map<std::pair<std::int32_t, std::int64_t>, Union> others;
    auto other_union = [&](std::int32_t dev, std::int64_t stream) -> const Union& {
      auto key = std::make_pair(dev, stream);
      auto it = others.find(key);
      if (it != others.end()) return it->second;
      std::vector<std::pair<Ns, Ns>> v;
      for (const auto& k : facts.trace.kernels)
        if ((dev < 0 || k.device == dev) && k.stream != stream) v.emplace_back(k.start, k.end);
      Union u;
      u.build(std::move(v));
      return others.emplace(key, std::move(u)).first->second;
    };
    std::vector<double> c_v;
    double copy_total = 0, overlapped = 0, bytes = 0;
    for (const auto* m : reloads.copies) {
      double d = static_cast<double>(m->end - m->start);
      c_v.push_back(d);
      copy_total += d;
      bytes += static_cast<double>(m->bytes);
      overlapped += static_cast<double>(other_union(m->device, m->stream).measure(m->start, m->end));
    }
    double overlap = copy_total > 0 ? overlapped / copy_total : 0;
    const double n_reloads = static_cast<double>(reloads.copies.size());
    const int per_step = static_cast<int>(std::lround(per_step_reloads));
    // Unsloth's kept last layer: L - 1 reloads with L layers; its first reload then overlaps
    // the last layer's backward, so all L - 1 can hide: the forms with L = reloads + 1.
    const bool kept_last = static_cast<int>(facts.distinct_layer_names) == per_step + 1;
    OffloadParams p;
    p.layers = kept_last ? per_step + 1 : per_step;
    p.copy_ns = mean_ci(c_v, facts.opt.bootstrap, facts.opt.seed + 5, facts.level);
    // Backward kernel time per reload; its interval is not measured (one number per step).
    p.compute_ns = Interval::exact(reloads.backward_kernel_ns / n_reloads);
    // Host issue time per layer, h: the backward ranges hold every layer's backward (the
    // kept last layer's too), so per step over the L layers; not measured per layer, so no
    // interval.
    p.host_ns = Interval::exact(reloads.backward_host_ns / static_cast<double>(facts.iterations.size()) /
                                static_cast<double>(p.layers));
    std::string sigma_evidence;
    if (facts.opt.profile) {
      p.slowdown = Interval::exact(facts.opt.profile->copy_compute_slowdown);
      p.unified_memory = facts.opt.profile->unified_memory;
      sigma_evidence =
          fmt::format("overlap slowdown sigma = {:.3f} from GPU profile {}", p.slowdown.value, facts.opt.profile->name);
    }
    if (auto est = estimate_overlap_slowdown(facts.trace, facts.opt.bootstrap, facts.opt.seed + 7)) {
      // Measured in this very trace: preferred over the profile's value.
      p.slowdown = {std::max(0.0, est->sigma.value), std::max(0.0, est->sigma.lo), std::max(0.0, est->sigma.hi)};
      sigma_evidence = fmt::format(
          "overlap slowdown sigma = {:.3f} [{:.3f}, {:.3f}] measured in this trace ({} kernel "
          "names, {} launches beside a copy vs {} alone)",
          p.slowdown.value, p.slowdown.lo, p.slowdown.hi, est->kernel_names, est->beside, est->alone);
    }
    p.prefetch_depth = std::max(2, trace_prefetch_depth(facts.opt));
    std::vector<std::string> evidence = {
        fmt::format("{} host-to-device copies of >= 1 MiB launched inside backward ranges on the backward thread "
                    "({:.1f} per step over {}, mean {:.1f} MiB, mean {} each; {} other such copies ignored)",
                    reloads.copies.size(), per_step_reloads, facts.iteration_source, bytes / n_reloads / (1 << 20),
                    ms(p.copy_ns.value), reloads.elsewhere),
        fmt::format("backward kernel time per reload g = {}", ms(p.compute_ns.value)),
        fmt::format("backward host time per layer h = {} (sync waits excluded)", ms(p.host_ns->value)),
        fmt::format("{:.0f}% of the reload copy time overlaps kernels on other streams", 100 * overlap)};
    if (!sigma_evidence.empty()) evidence.push_back(sigma_evidence);
    if (kept_last)
      evidence.push_back(
          fmt::format("{} reloads per step with {} layer ranges: the last layer's input stays on the "
                      "GPU (as Unsloth does), so L = reloads + 1 = {}",
                      per_step, facts.distinct_layer_names, p.layers));
    else if (facts.distinct_layer_names < 2)
      evidence.push_back("no layer ranges: the reload count could not be checked against the layer count");
    for (const char* v : {"double", "prefetch"}) {
      FixPrediction f;
      if (overlap >= 0.5) {
        f = base;
        f.variant = v;
        f.applicable = false;
        f.reason = fmt::format(
            "the reload copies already overlap compute ({:.0f}% of their time): the run looks "
            "double-buffered already",
            100 * overlap);
        f.saving_ns = Interval::exact(0);
      } else {
        f = predict_offload(p, v, facts.step_ns, facts.opt.propagation);
      }
      f.evidence = evidence;
      if (sigma_evidence.empty())
        f.notes.push_back(
            "no GPU profile and no overlapped kernels to measure it: overlap slowdown sigma = 0 "
            "(pass --gpu to use a profile's)");
      rep.fixes.push_back(std::move(f));
    }
  }
}

}  // namespace syncscope::fixes::offload::detail
