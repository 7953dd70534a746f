// The run pipeline (run.hpp): inputs, mode, jobs, traces, results, files, verdict.
#include "syncscope/pipeline/run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "model_notes.hpp"
#include "progress.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/pipeline/assemble.hpp"
#include "syncscope/pipeline/mode.hpp"
#include "syncscope/pipeline/outputs.hpp"
#include "syncscope/pipeline/producers.hpp"
#include "syncscope/pipeline/results_dir.hpp"
#include "syncscope/pipeline/sim_check.hpp"
#include "syncscope/pipeline/summary.hpp"
#include "syncscope/sim/memory_estimate.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope::pipeline {

namespace fs = std::filesystem;

namespace {

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// What the run knows beyond its inputs, filled as traces come in.
struct RunState {
  std::string mode;
  std::optional<model::GpuProfile> profile;
  std::string profile_name;
  std::vector<std::string> notes;
  model::Environment env;
};

// A measured run learns its GPU from the first trace; predictions need the round trip,
// overlap slowdown and memory kind: take the shipped profile named like this GPU unless
// --gpu-profile gave one.
void adopt_measured_gpu(const Trace& t, RunState& st) {
  st.env.gpu = t.devices.empty() ? "CUDA device" : t.devices.front().name;
  for (const auto& [k, v] : t.meta.extra) st.env.extra["tracer." + k] = v;
  if (st.profile) return;
  if (auto name = gpu_profile_for_device(st.env.gpu)) {
    st.profile = model::load_gpu_profile(*name);
    st.profile_name = *name;
    st.env.gpu_profile = *name;
    st.notes.push_back(
        fmt::format("predictions use the shipped GPU profile {} (matched to \"{}\"; pass "
                    "--gpu-profile with a `syncscope calibrate` profile to use measured values)",
                    *name, st.env.gpu));
  } else {
    st.notes.push_back("no GPU profile matches \"" + st.env.gpu + "\": predictions assume no copy/compute slowdown");
  }
}

}  // namespace

RunOutcome run(const RunRequest& request) {
  fixes::register_shipped_fixes();  // the registry every layer below reads (shipped.hpp)
  // ---- inputs and mode ----------------------------------------------------------------
  const std::vector<scenario::Scenario> scenarios = load_run_scenarios(request);
  const ModeChoice choice = choose_mode(request.device, request.backend_library);
  RunState st;
  st.mode = choice.mode;
  st.profile_name = request.gpu_profile;
  if (st.mode == "simulated") {
    if (st.profile_name.empty()) st.profile_name = "H200";
    st.profile = model::load_gpu_profile(st.profile_name);
    if (request.device == "auto") {
      const std::string msg = fmt::format("no CUDA device ({}): running the simulator with GPU profile {}",
                                          choice.why_no_cuda, st.profile->name);
      std::fprintf(stderr, "syncscope run: %s\n", msg.c_str());
      st.notes.push_back(msg);
    }
  } else if (!st.profile_name.empty()) {
    st.profile = model::load_gpu_profile(st.profile_name);
  }

  // ---- output directory and jobs ------------------------------------------------------
  // A --hf-config model is named in the default directory, so a second config
  // against the same scenario does not collide with the first.
  const OutputDir out_plan =
      plan_results_dir(request.out.empty()
                           ? default_results_dir(scenarios.front().name,
                                                 request.hf_config.empty() ? "" : scenarios.front().model.name, st.mode)
                           : fs::path(request.out),
                       request.force);
  const fs::path out = out_plan.requested;
  RunPlan plan = plan_jobs(scenarios);
  // The model named (stderr, notes, env.extra), and what it has that the run leaves out.
  const std::size_t first_model_note = st.notes.size();
  describe_models(scenarios, plan, request, st.notes, st.env);
  // The step's GPU memory against the profile's: exit 2 before anything runs when over it.
  check_models_memory(scenarios, plan, st.profile ? &*st.profile : nullptr, st.profile_name, request.force_memory,
                      st.notes, st.env);
  const std::vector<std::string> model_notes(st.notes.begin() + static_cast<std::ptrdiff_t>(first_model_note),
                                             st.notes.end());

  std::unique_ptr<Producer> producer;
  std::unique_ptr<SimProducer> checker;  // simulates measured runs for sim_check.json
  if (st.mode == "simulated") producer = std::make_unique<SimProducer>(*st.profile);
  else producer = std::make_unique<MeasuredProducer>(choice.backend);

  // Measured traces to compare simulated ones with (--compare-measured DIR).
  MeasuredTraces measured_traces;
  if (!request.compare_measured.empty()) {
    if (st.mode != "simulated") throw InputError("--compare-measured needs the simulator (--device sim)");
    measured_traces = read_compare_measured(request.compare_measured, st.notes);
  }

  // Before allocating: each simulated variant's memory against what the machine has.
  if (st.mode == "simulated")
    for (const auto& [key, ji] : plan.first_job_of_key)
      sim::check_simulation_memory(plan.jobs[ji].opts, scenarios[plan.jobs[ji].scenario].measure.repeat_steps, key);
  const fs::path partial = make_partial_dir(out_plan);
  PartialDirGuard guard{partial};
  std::fprintf(stderr, "syncscope run: %s mode, %zu scenario(s), writing %s\n", st.mode.c_str(), scenarios.size(),
               out.string().c_str());

  // ---- traces -------------------------------------------------------------------------
  std::map<std::string, TraceSummary> summaries;
  st.env.commit = build_commit();
  st.env.date_utc = utc_now_iso8601();
  st.env.host = hostname();
  if (st.profile) st.env.gpu_profile = st.profile_name;
  StripLayers strips;
  Progress progress(plan.produce_order.size());
  std::size_t index = 0;
  for (std::size_t ji : plan.produce_order) {
    const Job& job = plan.jobs[ji];
    const scenario::Scenario& s = scenarios[job.scenario];
    const std::string label = job_label(s, job);
    progress.begin(index++, label);
    Trace t = producer->produce(job, s, label);
    if (st.mode == "measured" && st.env.gpu.empty()) adopt_measured_gpu(t, st);
    const std::string trace_file = "traces/" + file_stem(s.name, job, !s.measure.layer_sweep.empty()) + ".json.gz";
    write_trace(t, partial / trace_file);
    TraceSummary sum = summarize_trace(t, trace_file, label, job, s, strips);
    if (st.mode == "measured") {
      // Check the simulator against this measurement with the GPU's profile.
      if (!checker && st.profile) checker = std::make_unique<SimProducer>(*st.profile);
      if (checker) sum.sim_check = check_measured(t, *checker, job, s, label);
    } else if (auto it = measured_traces.find(
                   measured_trace_key(s.name, scenario::fix_name(job.fix), job.variant, job.layers));
               it != measured_traces.end()) {
      sum.sim_check = check_simulated(t, it->second, st.profile->name);
    }
    if (plan.baseline_keys.count(job.key))
      sum.prediction = predict_baseline(t, trace_file, job, s, st.mode, st.profile, choice.backend.get(), st.env);
    summaries.emplace(job.key, std::move(sum));
  }
  progress.done();

  // ---- results ------------------------------------------------------------------------
  RunOutcome outcome;
  model::RunResults& results = outcome.results;
  results.mode = st.mode;
  if (st.mode == "simulated") {
    st.env.gpu = st.profile->name;
    st.env.extra["simulator"] = "syncscope-sim";
    st.env.extra["gpu_profile_description"] = st.profile->description;
    // Whether `syncscope calibrate` produced the profile; not "measured": a simulated run
    // measures nothing.
    st.env.extra["gpu_profile_calibrated"] = st.profile->measured ? "true" : "false";
  } else {
    const RuntimeVersions v = choice.backend->runtime_versions();
    st.env.driver = v.driver;
    st.env.cuda = v.cuda_runtime;
    st.env.libtorch = v.libtorch;
  }
  // A profile fitted from traces (calibrate --from-trace) says where it came from.
  if (st.profile)
    for (const auto& [k, v] : st.profile->provenance) st.env.extra["gpu_profile_" + k] = v;
  // A scenario's `host: cpp` simulates without the profile's per-op host costs: say so.
  if (st.mode == "simulated")
    for (const auto& s : scenarios)
      if (s.host == "cpp")
        st.env.extra["gpu_profile_host_costs"] = sim::with_cpp_host(*st.profile).provenance.at("host_costs");
  results.env = st.env;
  results.notes = st.notes;
  assemble_variants(scenarios, plan.jobs, summaries, results);
  fit_layer_sweeps(scenarios, results);

  // ---- files --------------------------------------------------------------------------
  write_run_outputs(partial, out, results, scenarios, plan.jobs, summaries);
  publish(partial, out_plan, request.force);
  guard.published = true;

  // ---- verdict ------------------------------------------------------------------------
  outcome.validation = model::validate_results(results, (out / "results.json").string());
  outcome.out = out;
  outcome.model_notes = model_notes;
  outcome.traces = plan.produce_order.size();
  return outcome;
}

}  // namespace syncscope::pipeline
