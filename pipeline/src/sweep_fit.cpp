// L sweeps: step time against depth for each fixed variant (assemble.hpp, fit_layer_sweeps).
#include <fmt/format.h>

#include "syncscope/core/error.hpp"
#include "syncscope/model/fit.hpp"
#include "syncscope/pipeline/assemble.hpp"

namespace syncscope::pipeline {

void fit_layer_sweeps(const std::vector<scenario::Scenario>& scenarios, model::RunResults& results) {
  for (const scenario::Scenario& s : scenarios) {
    if (s.measure.layer_sweep.size() < 2) continue;
    for (const auto& f : s.fixes) {
      const std::string base = scenario::baseline_variant(f.fix);
      for (const auto& v : f.variants) {
        if (v == base) continue;
        std::vector<model::RunObservation> obs;
        for (const auto& r : results.variants)
          if (r.scenario == s.name && r.fix == scenario::fix_name(f.fix) && (r.variant == v || r.variant == base))
            obs.push_back({r.variant, r.layers, 0, r.step_time_ns.value});
        try {
          model::SavingFit fit = model::fit_per_layer_saving(obs, base, v);
          for (auto& r : results.variants) {
            if (r.scenario != s.name || r.fix != scenario::fix_name(f.fix) || r.variant != v) continue;
            r.model_parameters["fit_per_layer_saving_ns"] = fit.per_layer_saving.value;
            r.model_parameters["fit_per_layer_saving_ns_lo"] = fit.per_layer_saving.lo;
            r.model_parameters["fit_per_layer_saving_ns_hi"] = fit.per_layer_saving.hi;
            r.model_parameters["fit_intercept_difference_ns"] = fit.intercept_difference.value;
          }
        } catch (const InputError& e) {
          results.notes.push_back(
              fmt::format("{} {}={}: L-sweep fit failed: {}", s.name, scenario::fix_name(f.fix), v, e.what()));
        }
      }
    }
  }
}

}  // namespace syncscope::pipeline
