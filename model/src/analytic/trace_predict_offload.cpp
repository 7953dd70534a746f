#include "trace_predict_facts.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace syncscope::model::detail {

// Offload reload: host-to-device copies of >= 1 MiB inside backward ranges; c = their
// duration, g = backward kernel time per reload; copies already overlapping compute mean
// the fix is in place.
void detect_offload(const TraceFacts& facts, PredictionReport& rep) {
  constexpr std::uint64_t kMinReloadBytes = 1u << 20;
  std::vector<Window> bw;  // one backward window per step (or one overall)
  {
    std::map<int, Window> per_step;
    for (const auto& r : facts.trace.ranges) {
      if (!is_host_range(r)) continue;
      if (lower(facts.trace.str(r.name)).find("backward") == std::string::npos) continue;
      int step = -1;
      for (std::size_t i = 0; i < facts.steps.size(); ++i)
        if (facts.steps[i].start <= r.start && r.start < facts.steps[i].end) step = static_cast<int>(i);
      auto [it, fresh] = per_step.try_emplace(step, Window{r.start, r.end, -1, -1, "backward", step});
      if (!fresh) {
        it->second.start = std::min(it->second.start, r.start);
        it->second.end = std::max(it->second.end, r.end);
      }
    }
    for (auto& [k, w] : per_step) bw.push_back(w);
  }
  std::unordered_map<std::uint64_t, Ns> api_start;
  for (const auto& a : facts.trace.api_calls)
    if (a.correlation) api_start[a.correlation] = a.start;
  std::vector<const Memcpy*> reloads;
  for (const auto& m : facts.trace.memcpys) {
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
  } else if (reloads.size() < 2 * facts.n_steps) {
    base.applicable = false;
    base.reason = fmt::format("{} host-to-device copies of >= 1 MiB inside backward ({} steps): no per-layer "
                              "checkpoint reload pattern",
                              reloads.size(), facts.n_steps);
  } else if (facts.opt.profile && facts.opt.profile->unified_memory) {
    base.applicable = false;
    base.reason = "the GPU profile says unified memory (GB10 / APU): double-buffered reload is known to hurt there "
                  "(unsloth-zoo PR 928)";
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
    for (const auto* m : reloads) {
      double d = static_cast<double>(m->end - m->start);
      c_v.push_back(d);
      copy_total += d;
      bytes += static_cast<double>(m->bytes);
      overlapped += static_cast<double>(other_union(m->device, m->stream).measure(m->start, m->end));
    }
    double overlap = copy_total > 0 ? overlapped / copy_total : 0;
    double bw_kernel = 0;  // kernels launched inside backward (any thread: autograd runs its own)
    for (const auto& w : bw) bw_kernel += facts.launched_ns(facts.kernel_by_corr, w.start, w.end, -1);
    const double per_step_reloads = static_cast<double>(reloads.size()) / static_cast<double>(facts.n_steps);
    OffloadParams p;
    p.layers = static_cast<int>(std::lround(per_step_reloads));
    p.copy_ns = mean_ci(c_v, facts.opt.bootstrap, facts.opt.seed + 5, facts.level);
    // Backward kernel time per reload; its interval is not measured (one number per step).
    p.compute_ns = Interval::exact(bw_kernel / static_cast<double>(reloads.size()));
    std::string sigma_evidence;
    if (facts.opt.profile) {
      p.slowdown = Interval::exact(facts.opt.profile->copy_compute_slowdown);
      p.unified_memory = facts.opt.profile->unified_memory;
      sigma_evidence = fmt::format("overlap slowdown sigma = {:.3f} from GPU profile {}", p.slowdown.value,
                                   facts.opt.profile->name);
    }
    if (auto est = estimate_overlap_slowdown(facts.trace, facts.opt.bootstrap, facts.opt.seed + 7)) {
      // Measured in this very trace: preferred over the profile's value.
      p.slowdown = {std::max(0.0, est->sigma.value), std::max(0.0, est->sigma.lo), std::max(0.0, est->sigma.hi)};
      sigma_evidence = fmt::format("overlap slowdown sigma = {:.3f} [{:.3f}, {:.3f}] measured in this trace ({} kernel "
                                   "names, {} launches beside a copy vs {} alone)",
                                   p.slowdown.value, p.slowdown.lo, p.slowdown.hi, est->kernel_names, est->beside,
                                   est->alone);
    }
    p.prefetch_depth = std::max(2, facts.opt.prefetch_depth);
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
        f = predict_offload(p, v, facts.step_ns, facts.opt.propagation);
      }
      f.evidence = evidence;
      if (sigma_evidence.empty())
        f.notes.push_back("no GPU profile and no overlapped kernels to measure it: overlap slowdown sigma = 0 "
                          "(pass --gpu to use a profile's)");
      rep.fixes.push_back(std::move(f));
    }
  }
}

}  // namespace syncscope::model::detail
