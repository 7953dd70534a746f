// The two producers (producers.hpp): the simulator, and the measured backend.
#include "syncscope/pipeline/producers.hpp"

#include "syncscope/program/step_program.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope::pipeline {

Trace SimProducer::produce(const Job& job, const scenario::Scenario& s, const std::string& name) {
  program::Program prog = program::build_step_program(job.opts);
  sim::SimOptions so;
  // Deterministic: warm-up steps would be identical copies; only the measured ones run.
  so.steps = s.measure.repeat_steps;
  // A scenario's `host: cpp` runs the host without the profile's eager per-op costs.
  Trace t = s.host == "cpp" ? sim::simulate(prog, sim::with_cpp_host(profile_), so) : sim::simulate(prog, profile_, so);
  t.meta.trace_name = name;
  return t;
}

Trace MeasuredProducer::produce(const Job& job, const scenario::Scenario& s, const std::string& name) {
  MeasureRequest r;
  r.options = job.opts;
  r.warmup_steps = s.measure.warmup_steps;
  r.repeat_steps = s.measure.repeat_steps;
  r.trace_name = name;
  return backend_->measure(r);
}

}  // namespace syncscope::pipeline
