// The baseline's prediction from its own trace (summary.hpp, predict_baseline).
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/fix_spec.hpp"
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
  // The scenario's numbers for each fix first (a key named as the fix's trace_key reaches its
  // detector: logging's logging_steps), then the fix's own hook, whose values win (the hook
  // used to run first and the scenario's map replaced what it set: offload's prefetch depth
  // when the scenario gave only its budget, which fell back to the same default).
  for (const auto& f : s.fixes) {
    const fixes::FixSpec& spec = fixes::fix_spec(f.fix);
    for (const auto& [key, value] : f.numbers) po.fix_numbers[spec.name][key] = value;
    if (spec.trace_predict_options) spec.trace_predict_options(f, job.opts, po);
  }
  // What every fix says about this run for the prediction, tested or not (MoE routing on an
  // MoE model: the device variant's expert GEMM, asked of the measured backend in a measured
  // run, and its padding price).
  for (const fixes::FixSpec& spec : fixes::fix_registry()) {
    if (!spec.run_prediction_setup) continue;
    fixes::RunPredictionContext ctx{s, job.opts, mode, po, env.extra, {}};
    if (mode == "measured")
      ctx.device_choice = [backend, id = spec.id](const program::StepOptions& o, std::string* why) {
        if (backend == nullptr) throw Error("a measured run without its measured backend");
        return backend->fix_device_choice(o, id, why);
      };
    spec.run_prediction_setup(ctx);
  }
  return model::predict_from_trace(t, po, trace_file);
}

}  // namespace syncscope::pipeline
