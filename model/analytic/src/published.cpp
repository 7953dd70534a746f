#include "syncscope/model/published.hpp"

#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::model {

const std::vector<PublishedSpeedup>& published_speedups() {
  // Every registered fix's figures, in registry order.
  static const std::vector<PublishedSpeedup> figures = [] {
    std::vector<PublishedSpeedup> f;
    for (const fixes::FixSpec& spec : fixes::fix_registry())
      if (spec.published)
        for (auto& p : spec.published())
          f.push_back({p.model, spec.name, p.variant, p.training, p.forward_speedup, p.step_speedup, p.source});
    return f;
  }();
  return figures;
}

std::vector<PublishedCheck> published_checks(const RunResults& results) {
  std::vector<PublishedCheck> out;
  for (const auto& v : results.variants) {
    if (!v.network || v.baseline) continue;
    for (const auto& p : published_speedups()) {
      if (p.model != v.network->model || p.fix != v.fix || p.variant != v.variant) continue;
      auto add = [&](const char* what, double published, const Estimate& measured) {
        if (published <= 0 || measured.value <= 0) return;
        if (published_scenario(v.scenario) && !published_scenario_shows(v.scenario, what)) return;
        PublishedCheck c;
        c.scenario = v.scenario;
        c.fix = v.fix;
        c.variant = v.variant;
        c.model = p.model;
        c.what = what;
        c.published = published;
        c.measured = measured.value;
        c.difference = (measured.value - published) / published;
        c.training_published = p.training;
        c.training_run = v.network->training;
        c.source = p.source;
        out.push_back(std::move(c));
      };
      add("forward", p.forward_speedup, v.forward_speedup);
      add("step", p.step_speedup, v.measured_speedup);
    }
  }
  return out;
}

}  // namespace syncscope::model
