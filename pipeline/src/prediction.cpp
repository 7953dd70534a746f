// The baseline's prediction from its own trace (summary.hpp, predict_baseline).
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"  // the MoE padding price (docs/fix-registry.md)
#include "syncscope/pipeline/summary.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::pipeline {

model::PredictionReport predict_baseline(const Trace& t, const std::string& trace_file, const Job& job,
                                         const scenario::Scenario& s, const std::string& mode,
                                         const std::optional<model::GpuProfile>& profile,
                                         const MeasuredBackend* backend, model::Environment& env) {
  // Predict from the baseline's own trace, as `syncscope predict --trace` would.
  model::TracePredictOptions po;
  po.layer_glob = run_analysis_options().layer_glob;
  po.profile = profile;
  for (const auto& f : s.fixes) {
    const fixes::FixSpec& spec = fixes::fix_spec(f.fix);
    if (spec.trace_predict_options) spec.trace_predict_options(f, job.opts, po);
    if (!f.numbers.empty()) po.fix_numbers[spec.name] = f.numbers;
  }
  // The padding price applies only where MoE "device" pads (capacity-padded bmm): the
  // simulator models the grouped GEMM (options "auto"), a measured run asks LibTorch.
  if (s.model.is_moe()) {
    bool padded = fixes::moe_routing::expert_gemm(job.opts) == "padded";
    if (mode == "measured") {
      if (backend == nullptr) throw Error("a measured run without its measured backend");
      program::StepOptions dev = job.opts;
      fixes::moe_routing::set_variant(dev, fixes::moe_routing::Variant::Device);
      dev.device = "cuda";
      std::string why;
      padded = backend->moe_expert_gemm(dev, &why) == "padded";
      if (padded) env.extra["moe_device_expert_gemm"] = "padded: " + why;
      else env.extra["moe_device_expert_gemm"] = "grouped (at::_grouped_mm)";
    }
    if (mode == "simulated")
      env.extra["moe_device_expert_gemm"] =
          padded ? "padded (modelled)" : "grouped (modelled: at::_grouped_mm, LibTorch >= 2.8 on sm90+)";
    if (padded) po.fix_numbers["moe_routing"][fixes::moe_routing::kTopKTraceKey] = s.model.num_experts_per_tok;
  }
  return model::predict_from_trace(t, po, trace_file);
}

}  // namespace syncscope::pipeline
