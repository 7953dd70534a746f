#include "syncscope/model/trace_predict.hpp"
#include "syncscope/model/predict_inputs.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "syncscope/model/trace_predict_facts.hpp"

namespace syncscope::model {

using detail::contains_any;
using detail::lower;
using detail::median;
using detail::Union;

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

std::optional<double> TracePredictOptions::fix_number(const std::string& fix, const std::string& key) const {
  const auto f = fix_numbers.find(fix);
  if (f == fix_numbers.end()) return std::nullopt;
  const auto k = f->second.find(key);
  if (k == f->second.end()) return std::nullopt;
  return k->second;
}

const std::vector<double>& TracePredictOptions::fix_list(const std::string& fix, const std::string& key) const {
  static const std::vector<double> none;
  const auto f = fix_lists.find(fix);
  if (f == fix_lists.end()) return none;
  const auto k = f->second.find(key);
  return k == f->second.end() ? none : k->second;
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
  if (opt.profile) {
    rep.gpu_profile = opt.profile->name;
    if (auto it = opt.profile->provenance.find("traces"); it != opt.profile->provenance.end())
      rep.notes.push_back(fmt::format("GPU profile {} was fitted from trace(s) {} ({}; host costs: {})",
                                      opt.profile->name, it->second, opt.profile->measured_on,
                                      opt.profile->provenance.count("host_costs")
                                          ? opt.profile->provenance.at("host_costs")
                                          : "unknown"));
  }
  const detail::TraceFacts facts(trace, opt, rep);
  // Each registered fix's detector, in registry order.
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.detect) f.detect(facts, rep);
  for (const auto& w : facts.an.warnings) rep.notes.push_back("analysis: " + w);
  return rep;
}

}  // namespace syncscope::model
