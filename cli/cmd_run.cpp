// `syncscope run`: scenarios -> traces -> analyses -> model predictions -> results.json,
// results.csv, timelines.json, report.html (and sim_check.json when the simulator is
// compared with measurements). Measured on a CUDA GPU with the LibTorch reference steps
// under the CUPTI tracer, or simulated from the step programs with a GPU profile. Each mode
// needs its libraries; a build without them says which mode is unavailable and why.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/glob.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/io/trace_io.hpp"

#if defined(SYNCSCOPE_SCENARIO_AVAILABLE) && defined(SYNCSCOPE_MODEL_AVAILABLE) && defined(SYNCSCOPE_PROGRAM_AVAILABLE)
#define SYNCSCOPE_RUN_PIPELINE 1
#include <nlohmann/json.hpp>

#include "syncscope/kernels/step_options.hpp"
#include "syncscope/model/fit.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/results.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/model/validate.hpp"
#include "syncscope/reports/html_report.hpp"
#include "syncscope/scenario/scenario.hpp"
#endif

#if defined(SYNCSCOPE_RUN_PIPELINE) && defined(SYNCSCOPE_SIM_AVAILABLE)
#define SYNCSCOPE_RUN_SIM 1
#include "syncscope/kernels/step_program.hpp"
#include "syncscope/sim/compare.hpp"
#include "syncscope/sim/simulator.hpp"
#endif

#if defined(SYNCSCOPE_RUN_PIPELINE) && defined(SYNCSCOPE_KERNELS_AVAILABLE) && defined(SYNCSCOPE_TRACER_AVAILABLE)
#define SYNCSCOPE_RUN_MEASURED 1
#include "syncscope/kernels/step.hpp"
#include "syncscope/tracer/nvtx.hpp"
#include "syncscope/tracer/tracer.hpp"
// Versions for provenance, straight from the CUDA runtime the tracer links (declared here
// so this host-only file needs no CUDA header; both return cudaError_t, 0 on success).
extern "C" int cudaDriverGetVersion(int* version);
extern "C" int cudaRuntimeGetVersion(int* version);
#endif

namespace syncscope::cli {

#ifndef SYNCSCOPE_RUN_PIPELINE

void add_run_command(CLI::App& app, Context&) {
  auto* cmd = app.add_subcommand("run", "Run scenarios (unavailable in this build: needs syncscope_scenario, syncscope_model and syncscope_program)");
  cmd->allow_extras();
  cmd->callback([] {
    throw Error("syncscope run is unavailable in this build: it needs the scenario loader (syncscope_scenario), the "
                "model (syncscope_model) and the step programs (syncscope_program)");
  });
}

#else

namespace {

namespace fs = std::filesystem;

struct RunArgs {
  std::vector<std::string> scenarios;
  std::string device = "auto";
  std::string gpu_profile;  // "" : H200 in simulation, matched to the GPU when measured
  std::string out;
  bool force = false;
  std::optional<int> layers;
  std::optional<int> repeats;
  std::optional<int> warmup;
  std::string hf_config;
  std::string compare_measured;
};

// One variant of one fix at one depth: the unit a results row describes.
struct Job {
  std::size_t scenario = 0;
  Fix fix = Fix::Packing;
  std::string variant;
  bool baseline = false;
  int layers = 0;
  double tolerance = 0.1;
  kernels::StepOptions opts;
  std::string key;       // identical step options share one trace
  std::string base_key;  // the baseline run of this fix at this depth
};

// What is kept of one trace after it is processed.
struct TraceSummary {
  std::string trace_file;  // relative to the results directory
  Estimate step_ns;
  double syncs = 0, bubble = 0, blocked = 0, h2d = 0, d2h = 0;
  std::vector<std::string> warnings;
  std::optional<model::PredictionReport> prediction;  // when it is a baseline
  std::optional<TimelineStrip> strip;
  std::optional<nlohmann::json> sim_check;
};

class Progress {
 public:
  explicit Progress(std::size_t total) : tty_(::isatty(STDERR_FILENO) == 1), total_(total) {}
  void begin(std::size_t index, const std::string& what) {
    const std::string line = fmt::format("[{}/{}] {} ...", index + 1, total_, what);
    if (tty_) {
      std::fprintf(stderr, "\r\033[2K%s", line.c_str());
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }
  void done() {
    if (tty_) std::fprintf(stderr, "\r\033[2K");
    std::fflush(stderr);
  }
  ~Progress() { done(); }

 private:
  bool tty_;
  std::size_t total_;
};

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string variant_option_key(const kernels::StepOptions& o) {
  return fmt::format("L{}/packing={}/offload={}/moe={}", o.layers, o.packing, o.offload.empty() ? "off" : o.offload,
                     o.moe);
}

std::string file_stem(const std::string& scenario, const Job& j, bool sweep) {
  std::string s = fmt::format("{}__{}-{}", scenario, fix_name(j.fix), j.variant);
  if (sweep) s += fmt::format("__L{}", j.layers);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

kernels::StepOptions step_options(const Scenario& s, Fix fix, const std::string& variant, int layers, int depth) {
  kernels::StepOptions o;
  o.model = s.model;
  o.batch = s.batch;
  o.dtype = s.dtype;
  o.layers = layers;
  o.seed = s.batch.seed;
  // The fix under test takes the variant; every other fix stays at its baseline.
  o.packing = fix == Fix::Packing ? variant : baseline_variant(Fix::Packing);
  o.offload = s.offload ? (fix == Fix::Offload ? variant : std::string(baseline_variant(Fix::Offload))) : "";
  o.moe = fix == Fix::MoeRouting ? variant : baseline_variant(Fix::MoeRouting);
  o.prefetch_depth = depth;
  // Reload schedules are compared with every layer offloaded, measured and simulated alike:
  // left to the device (-1), the memory-aware plan keeps every layer resident on a large GPU
  // and `prefetch` would then measure "no offload" rather than a schedule.
  o.offload_budget_bytes = 0;
  return o;
}

Estimate step_estimate(const AnalysisResult& a) {
  // The interval is min..max over the steps: a handful of repeats gives no honest
  // confidence interval, and their spread is what a reader needs to judge a speedup.
  Estimate e;
  const auto& d = a.step_summary.duration_ns;
  e.value = d.median;
  e.lo = d.min;
  e.hi = d.max;
  e.n = static_cast<int>(d.n);
  return e;
}

// baseline / variant, with the interval from the two ranges.
Estimate speedup_estimate(const Estimate& base, const Estimate& v) {
  Estimate e;
  if (v.value <= 0 || base.value <= 0) return e;
  e.value = base.value / v.value;
  e.lo = v.hi > 0 ? base.lo / v.hi : e.value;
  e.hi = v.lo > 0 ? base.hi / v.lo : e.value;
  e.lo = std::min(e.lo, e.value);
  e.hi = std::max(e.hi, e.value);
  e.n = std::min(base.n, v.n);
  return e;
}

// Creates DIR.partial-XXXXXX next to DIR.
fs::path make_partial_dir(const fs::path& dir) {
  fs::path parent = dir.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw Error(fmt::format("cannot create {}: {}", parent.string(), ec.message()));
  std::string tmpl = (parent / (dir.filename().string() + ".partial-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw Error(fmt::format("cannot create a directory next to {}", dir.string()));
  // mkdtemp makes it private (0700); results are meant to be shared like any new directory.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmpl.c_str(), 0777 & ~mask);
  fs::create_directories(fs::path(tmpl) / "traces");
  return tmpl;
}

// Moves the finished partial directory to DIR, replacing an old DIR only with --force.
void publish(const fs::path& partial, const fs::path& dir, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!force) throw InputError(fmt::format("{} exists (created meanwhile?): use --force to replace it", dir.string()));
    fs::path old = dir;
    old += ".old-" + partial.filename().string().substr(partial.filename().string().rfind('-') + 1);
    fs::rename(dir, old, ec);
    if (ec) throw Error(fmt::format("cannot move {} aside: {}", dir.string(), ec.message()));
    fs::rename(partial, dir, ec);
    if (ec) throw Error(fmt::format("cannot rename {} to {}: {}", partial.string(), dir.string(), ec.message()));
    fs::remove_all(old, ec);
    return;
  }
  fs::rename(partial, dir, ec);
  if (ec) throw Error(fmt::format("cannot rename {} to {}: {}", partial.string(), dir.string(), ec.message()));
}

// A run that stops half-way: the partial directory keeps the complete files written so
// far (each written atomically), or goes away when there are none.
struct PartialDirGuard {
  fs::path dir;
  bool published = false;
  ~PartialDirGuard() {
    if (published || dir.empty()) return;
    std::error_code ec;
    bool any_file = false;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      any_file |= it->is_regular_file(ec);
    if (!any_file) {
      fs::remove_all(dir, ec);
    } else {
      std::fprintf(stderr, "syncscope run: stopped; the complete files written so far are in %s\n", dir.c_str());
    }
  }
};

// Which way traces are produced.
class Producer {
 public:
  virtual ~Producer() = default;
  virtual Trace produce(const Job& job, const Scenario& s, const std::string& name) = 0;
};

#ifdef SYNCSCOPE_RUN_SIM
class SimProducer : public Producer {
 public:
  explicit SimProducer(GpuProfile p) : profile_(std::move(p)) {}
  Trace produce(const Job& job, const Scenario& s, const std::string& name) override {
    program::Program prog = kernels::build_step_program(job.opts);
    sim::SimOptions so;
    // Deterministic: warm-up steps would be identical copies; only the measured ones run.
    so.steps = s.measure.repeat_steps;
    Trace t = sim::simulate(prog, profile_, so);
    t.meta.trace_name = name;
    return t;
  }
  const GpuProfile& profile() const { return profile_; }

 private:
  GpuProfile profile_;
};
#endif

#ifdef SYNCSCOPE_RUN_MEASURED
class CudaProducer : public Producer {
 public:
  Trace produce(const Job& job, const Scenario& s, const std::string& name) override {
    kernels::StepOptions o = job.opts;
    o.device = "cuda";
    kernels::ReferenceStep step(o);
    for (int i = 0; i < s.measure.warmup_steps; ++i) step.run();
    step.synchronize();
    TracerOptions to;
    to.trace_name = name;
    // Every variant is traced the same way, so CUPTI stays attached between variants rather
    // than being finalized and re-attached for each (its slowdown after profiling matters
    // only to untraced work, and the process ends after the run).
    to.finalize_on_stop = false;
    Tracer tracer(to);
    tracer.start();
    for (int i = 0; i < s.measure.repeat_steps; ++i) {
      // The analyses find steps by this name, as in torch.profiler traces.
      const std::string range = "ProfilerStep#" + std::to_string(i);
      nvtx::push(range.c_str());
      step.run();
      nvtx::pop();
    }
    tracer.stop();
    Trace t = tracer.take();
    if (!nvtx::kEnabled)
      throw Error("this build has no NVTX: measured steps cannot be delimited (rebuild with the tracer)");
    return t;
  }
};
#endif

std::optional<std::string> gpu_profile_for_device(const std::string& device_name) {
  // Shipped profiles are named by the GPU ("H200", "H100", "B200", ...): the first whose
  // name the device name contains.
  std::vector<std::string> names;
  try {
    names = shipped_gpu_profiles();
  } catch (const Error&) {
    return std::nullopt;
  }
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  auto upper = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& n : names)
    if (upper(device_name).find(upper(n)) != std::string::npos) return n;
  return std::nullopt;
}

int run_command(const RunArgs& args) {
  // ---- inputs -------------------------------------------------------------------------
  std::vector<Scenario> scenarios;
  for (const auto& f : args.scenarios) scenarios.push_back(load_scenario(f));
  if (!args.hf_config.empty()) {
    ModelShape m = load_hf_config(args.hf_config);
    for (auto& s : scenarios) replace_model(s, m, args.hf_config);
  }
  for (auto& s : scenarios) {
    if (args.layers) {
      s.measure.layers_override = *args.layers;
      s.measure.layer_sweep.clear();
    }
    if (args.repeats) s.measure.repeat_steps = *args.repeats;
    if (args.warmup) s.measure.warmup_steps = *args.warmup;
    validate_scenario(s);
  }
  {
    std::set<std::string> names;
    for (const auto& s : scenarios)
      if (!names.insert(s.name).second)
        throw InputError(fmt::format("scenario name {} given twice ({}): results would collide", s.name, s.source.string()));
  }
  if (args.device != "auto" && args.device != "cuda" && args.device != "sim")
    throw InputError("--device: expected auto, cuda or sim, got " + args.device);

  // ---- mode ---------------------------------------------------------------------------
  std::string mode;
  std::vector<std::string> notes;
  std::string why_no_cuda;
#ifdef SYNCSCOPE_RUN_MEASURED
  const bool measured_built = true;
  const bool have_device = kernels::cuda_available() && cuda_device_available(&why_no_cuda);
  if (!have_device && why_no_cuda.empty()) why_no_cuda = "LibTorch reports no CUDA support or device";
#else
  const bool measured_built = false;
  const bool have_device = false;
  why_no_cuda = "this build has no LibTorch+CUDA reference steps or no CUPTI tracer";
#endif
#ifdef SYNCSCOPE_RUN_SIM
  const bool sim_built = true;
#else
  const bool sim_built = false;
#endif
  if (args.device == "cuda") {
    if (!measured_built)
      throw Error("--device cuda is unavailable in this build: it needs the LibTorch reference steps "
                  "(syncscope_kernels, SYNCSCOPE_ENABLE_TORCH with a CUDA LibTorch) and the CUPTI tracer "
                  "(syncscope_tracer, SYNCSCOPE_ENABLE_CUDA)");
    if (!have_device) throw Error("--device cuda: no CUDA device (" + why_no_cuda + ")");
    mode = "measured";
  } else if (args.device == "sim") {
    if (!sim_built)
      throw Error("--device sim is unavailable in this build: it needs the simulator (syncscope_sim) and the step "
                  "programs (syncscope_program)");
    mode = "simulated";
  } else if (have_device) {
    mode = "measured";
  } else {
    if (!sim_built)
      throw Error("no CUDA device (" + why_no_cuda + ") and no simulator in this build: nothing can run");
    mode = "simulated";
  }

  std::optional<GpuProfile> profile;
  std::string profile_name = args.gpu_profile;
  if (mode == "simulated") {
    if (profile_name.empty()) profile_name = "H200";
    profile = load_gpu_profile(profile_name);
    if (args.device == "auto") {
      const std::string msg =
          fmt::format("no CUDA device ({}): running the simulator with GPU profile {}", why_no_cuda, profile->name);
      std::fprintf(stderr, "syncscope run: %s\n", msg.c_str());
      notes.push_back(msg);
    }
  } else if (!profile_name.empty()) {
    profile = load_gpu_profile(profile_name);
  }

  // ---- output directory ---------------------------------------------------------------
  const fs::path out = args.out.empty() ? fs::path("out") / (scenarios.front().name + "-" + mode) : fs::path(args.out);
  if (fs::exists(out) && !args.force)
    throw InputError(fmt::format("{} exists: choose another --out or pass --force to replace it", out.string()));

  // ---- jobs ---------------------------------------------------------------------------
  std::vector<Job> jobs;
  std::map<std::string, std::size_t> first_job_of_key;
  for (std::size_t si = 0; si < scenarios.size(); ++si) {
    const Scenario& s = scenarios[si];
    std::vector<int> depths = s.measure.layer_sweep.empty() ? std::vector<int>{s.layers()} : s.measure.layer_sweep;
    for (int L : depths) {
      for (const auto& f : s.fixes) {
        const std::string base = baseline_variant(f.fix);
        for (const auto& v : f.variants) {
          Job j;
          j.scenario = si;
          j.fix = f.fix;
          j.variant = v;
          j.baseline = v == base;
          j.layers = L;
          j.tolerance = f.tolerance;
          j.opts = step_options(s, f.fix, v, L, f.prefetch_depth);
          j.key = s.name + "/" + variant_option_key(j.opts);
          j.base_key = s.name + "/" + variant_option_key(step_options(s, f.fix, base, L, f.prefetch_depth));
          jobs.push_back(std::move(j));
        }
      }
    }
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) first_job_of_key.emplace(jobs[i].key, i);
  std::set<std::string> baseline_keys;
  for (const auto& j : jobs) baseline_keys.insert(j.base_key);

  std::unique_ptr<Producer> producer;
#ifdef SYNCSCOPE_RUN_SIM
  std::unique_ptr<SimProducer> checker;  // simulates measured runs for sim_check.json
#endif
  if (mode == "simulated") {
#ifdef SYNCSCOPE_RUN_SIM
    producer = std::make_unique<SimProducer>(*profile);
#endif
  } else {
#ifdef SYNCSCOPE_RUN_MEASURED
    producer = std::make_unique<CudaProducer>();
#endif
  }

  // Measured traces to compare simulated ones with (--compare-measured DIR).
  std::map<std::string, fs::path> measured_traces;
  if (!args.compare_measured.empty()) {
    if (mode != "simulated") throw InputError("--compare-measured needs the simulator (--device sim)");
    RunResults m = read_results(args.compare_measured);
    if (m.mode != "measured")
      notes.push_back(fmt::format("--compare-measured {}: that run is {}, not measured: sim_check.json compares two "
                                  "simulations",
                                  args.compare_measured, m.mode));
    for (const auto& v : m.variants)
      if (!v.trace_file.empty())
        measured_traces[fmt::format("{}/{}/{}/{}", v.scenario, v.fix, v.variant, v.layers)] =
            fs::path(args.compare_measured) / v.trace_file;
  }

  const fs::path partial = make_partial_dir(out);
  PartialDirGuard guard{partial};
  std::fprintf(stderr, "syncscope run: %s mode, %zu scenario(s), writing %s\n", mode.c_str(), scenarios.size(),
               out.string().c_str());

  // ---- traces -------------------------------------------------------------------------
  std::map<std::string, TraceSummary> summaries;
  Environment env;
  env.commit = build_commit();
  env.date_utc = utc_now_iso8601();
  env.host = hostname();
  if (profile) env.gpu_profile = profile_name;
  std::size_t unique = first_job_of_key.size(), index = 0;
  Progress progress(unique);
  // Baselines first: predictions and the layer the strips show come from them.
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return baseline_keys.count(jobs[i].key) > 0; });
  std::map<std::string, std::string> strip_layer;  // baseline key -> layer range its strip shows
  for (std::size_t ji : order) {
    const Job& job = jobs[ji];
    if (first_job_of_key[job.key] != ji) continue;
    const Scenario& s = scenarios[job.scenario];
    const bool sweep = !s.measure.layer_sweep.empty();
    const std::string label = fmt::format("{} {}={}{}", s.name, fix_name(job.fix), job.variant,
                                          sweep ? fmt::format(" L={}", job.layers) : "");
    progress.begin(index++, label);
    const std::string stem = file_stem(s.name, job, sweep);
    Trace t = producer->produce(job, s, label);
    if (mode == "measured" && env.gpu.empty()) {
      env.gpu = t.devices.empty() ? "CUDA device" : t.devices.front().name;
      for (const auto& [k, v] : t.meta.extra) env.extra["tracer." + k] = v;
      if (!profile) {
        // Predictions need the round trip, overlap slowdown and memory kind: take the
        // shipped profile named like this GPU unless --gpu-profile gave one.
        if (auto name = gpu_profile_for_device(env.gpu)) {
          profile = load_gpu_profile(*name);
          profile_name = *name;
          env.gpu_profile = *name;
          notes.push_back(fmt::format("predictions use the shipped GPU profile {} (matched to \"{}\"; pass "
                                      "--gpu-profile with a `syncscope calibrate` profile to use measured values)",
                                      *name, env.gpu));
        } else {
          notes.push_back("no GPU profile matches \"" + env.gpu + "\": predictions assume no copy/compute slowdown");
        }
      }
    }
    TraceSummary sum;
    sum.trace_file = "traces/" + stem + ".json.gz";
    write_trace(t, partial / sum.trace_file);
    AnalysisOptions ao;
    ao.layer_glob = "layer_*";
    AnalysisResult a = analyze(t, ao);
    a.source = sum.trace_file;
    if (a.steps.empty())
      throw Error(fmt::format("{}: the trace has no ProfilerStep# ranges: cannot measure step time", label));
    sum.step_ns = step_estimate(a);
    sum.syncs = a.step_summary.syncs.median;
    sum.bubble = a.step_summary.sync_bubble_ns.median;
    sum.blocked = a.step_summary.sync_blocked_ns.median;
    sum.h2d = a.step_summary.h2d_overlap_fraction.median;
    sum.d2h = a.step_summary.d2h_overlap_fraction.median;
    sum.warnings = a.warnings;
    // The strip of one layer (at the deepest run of a sweep: that is what the report shows).
    const int deepest = s.measure.layer_sweep.empty() ? s.layers() : s.measure.layer_sweep.back();
    if (job.layers == deepest) {
      TimelineOptions to;
      to.prefer_copies = job.fix == Fix::Offload;
      if (auto it = strip_layer.find(job.base_key); it != strip_layer.end()) to.layer_name = it->second;
      sum.strip = extract_timeline(t, a, to);
      if (job.key == job.base_key) strip_layer[job.key] = sum.strip->range;
    }
#ifdef SYNCSCOPE_RUN_SIM
    if (mode == "measured" && sim_built) {
      // Check the simulator against this measurement with the GPU's profile.
      if (!checker) {
        if (profile) checker = std::make_unique<SimProducer>(*profile);
      }
      if (checker) {
        Trace simulated = checker->produce(job, s, label + " (simulated)");
        sim::TraceComparison c = sim::compare_traces(simulated, t, ao);
        sum.sim_check = nlohmann::json::parse(sim::comparison_to_json(c));
        (*sum.sim_check)["gpu_profile"] = checker->profile().name;
      }
    } else if (mode == "simulated") {
      auto it = measured_traces.find(fmt::format("{}/{}/{}/{}", s.name, fix_name(job.fix), job.variant, job.layers));
      if (it != measured_traces.end()) {
        Trace m = read_trace(it->second);
        sim::TraceComparison c = sim::compare_traces(t, m, ao);
        sum.sim_check = nlohmann::json::parse(sim::comparison_to_json(c));
        (*sum.sim_check)["gpu_profile"] = profile->name;
      }
    }
#endif
    if (baseline_keys.count(job.key)) {
      // Predict from the baseline's own trace, as `syncscope predict --trace` would.
      model::TracePredictOptions po;
      po.layer_glob = ao.layer_glob;
      po.profile = profile;
      for (const auto& f : s.fixes)
        if (f.fix == Fix::Offload) po.prefetch_depth = f.prefetch_depth;
      // The padding price applies only where MoE "device" pads (capacity-padded bmm): the
      // simulator models the grouped GEMM (options "auto"), a measured run asks LibTorch.
      if (s.model.is_moe()) {
        bool padded = job.opts.moe_expert_gemm == "padded";
#ifdef SYNCSCOPE_RUN_MEASURED
        if (mode == "measured") {
          kernels::StepOptions dev = job.opts;
          dev.moe = "device";
          dev.device = "cuda";
          std::string why;
          padded = kernels::resolve_moe_expert_gemm(dev, &why) == "padded";
          if (padded) env.extra["moe_device_expert_gemm"] = "padded: " + why;
          else env.extra["moe_device_expert_gemm"] = "grouped (at::_grouped_mm)";
        }
#endif
        if (mode == "simulated")
          env.extra["moe_device_expert_gemm"] =
              padded ? "padded (modelled)" : "grouped (modelled: at::_grouped_mm, LibTorch >= 2.8 on sm90+)";
        if (padded) po.moe_top_k = s.model.num_experts_per_tok;
      }
      sum.prediction = model::predict_from_trace(t, po, sum.trace_file);
    }
    summaries.emplace(job.key, std::move(sum));
  }
  progress.done();

  // ---- results ------------------------------------------------------------------------
  RunResults results;
  results.mode = mode;
  if (mode == "simulated") {
    env.gpu = profile->name;
    env.extra["simulator"] = sim_built ? "syncscope-sim" : "";
    env.extra["gpu_profile_description"] = profile->description;
    env.extra["gpu_profile_measured"] = profile->measured ? "true" : "false";
  }
  // A profile fitted from traces (calibrate --from-trace) says where it came from.
  if (profile) for (const auto& [k, v] : profile->provenance) env.extra["gpu_profile_" + k] = v;
#ifdef SYNCSCOPE_RUN_MEASURED
  if (mode == "measured") {
    int drv = 0, rt = 0;
    if (cudaDriverGetVersion(&drv) == 0) env.driver = fmt::format("{}.{}", drv / 1000, (drv % 1000) / 10);
    if (cudaRuntimeGetVersion(&rt) == 0) env.cuda = fmt::format("{}.{}", rt / 1000, (rt % 1000) / 10);
    env.libtorch = kernels::torch_version();
  }
#endif
  results.env = env;
  results.notes = notes;
  std::set<std::string> noted;
  for (const auto& job : jobs) {
    const Scenario& s = scenarios[job.scenario];
    const TraceSummary& v = summaries.at(job.key);
    const TraceSummary& b = summaries.at(job.base_key);
    VariantResult r;
    r.scenario = s.name;
    r.fix = fix_name(job.fix);
    r.variant = job.variant;
    r.baseline = job.baseline;
    r.layers = job.layers;
    r.step_time_ns = v.step_ns;
    r.syncs_per_step = v.syncs;
    r.sync_bubble_ns_per_step = v.bubble;
    r.sync_blocked_ns_per_step = v.blocked;
    r.h2d_overlap_fraction = v.h2d;
    r.d2h_overlap_fraction = v.d2h;
    r.tolerance = job.tolerance;
    r.trace_file = v.trace_file;
    r.measured_speedup = job.baseline ? Estimate{1, 1, 1, v.step_ns.n} : speedup_estimate(b.step_ns, v.step_ns);
    if (job.baseline) {
      r.predicted_speedup = Estimate{1, 1, 1, 0};
    } else if (b.prediction) {
      bool found = false;
      for (const auto& f : b.prediction->fixes) {
        if (f.fix != r.fix || f.variant != r.variant) continue;
        found = true;
        for (const auto& [k, iv] : f.parameters) {
          r.model_parameters[k] = iv.value;
          if (!iv.is_exact()) {
            r.model_parameters[k + "_lo"] = iv.lo;
            r.model_parameters[k + "_hi"] = iv.hi;
          }
        }
        r.predicted_saving_ns = f.saving_ns.value;
        if (f.applicable && f.speedup) {
          r.predicted_speedup = Estimate{f.speedup->value, f.speedup->lo, f.speedup->hi, b.step_ns.n};
        } else {
          const std::string n = fmt::format("{} {}={} L={}: no prediction: {}", s.name, r.fix, r.variant, r.layers,
                                            f.reason.empty() ? "no step time" : f.reason);
          if (noted.insert(n).second) results.notes.push_back(n);
        }
      }
      if (!found) {
        const std::string n = fmt::format("{} {}={}: the model has no prediction for this variant", s.name, r.fix, r.variant);
        if (noted.insert(n).second) results.notes.push_back(n);
      }
    }
    for (const auto& w : v.warnings) {
      const std::string n = fmt::format("{}: {}", v.trace_file, w);
      if (noted.insert(n).second) results.notes.push_back(n);
    }
    results.variants.push_back(std::move(r));
  }

  // L sweep: fit step time against depth for each fixed variant.
  for (std::size_t si = 0; si < scenarios.size(); ++si) {
    const Scenario& s = scenarios[si];
    if (s.measure.layer_sweep.size() < 2) continue;
    for (const auto& f : s.fixes) {
      const std::string base = baseline_variant(f.fix);
      for (const auto& v : f.variants) {
        if (v == base) continue;
        std::vector<model::RunObservation> obs;
        for (const auto& r : results.variants)
          if (r.scenario == s.name && r.fix == fix_name(f.fix) && (r.variant == v || r.variant == base))
            obs.push_back({r.variant, r.layers, 0, r.step_time_ns.value});
        try {
          model::SavingFit fit = model::fit_per_layer_saving(obs, base, v);
          for (auto& r : results.variants) {
            if (r.scenario != s.name || r.fix != fix_name(f.fix) || r.variant != v) continue;
            r.model_parameters["fit_per_layer_saving_ns"] = fit.per_layer_saving.value;
            r.model_parameters["fit_per_layer_saving_ns_lo"] = fit.per_layer_saving.lo;
            r.model_parameters["fit_per_layer_saving_ns_hi"] = fit.per_layer_saving.hi;
            r.model_parameters["fit_intercept_difference_ns"] = fit.intercept_difference.value;
          }
        } catch (const InputError& e) {
          results.notes.push_back(fmt::format("{} {}={}: L-sweep fit failed: {}", s.name, fix_name(f.fix), v, e.what()));
        }
      }
    }
  }

  // ---- files --------------------------------------------------------------------------
  write_file_atomic(partial / "results.json", results_to_json(results));
  write_file_atomic(partial / "results.csv", results_to_csv(results));
  std::vector<TimelineStrip> strips;
  std::set<std::string> strip_done;
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& job : jobs) {
    const Scenario& s = scenarios[job.scenario];
    const TraceSummary& sum = summaries.at(job.key);
    const std::string id = fmt::format("{}/{}/{}", s.name, fix_name(job.fix), job.variant);
    if (sum.strip && strip_done.insert(id).second) {
      TimelineStrip st = *sum.strip;
      st.scenario = s.name;
      st.fix = fix_name(job.fix);
      st.variant = job.variant;
      strips.push_back(std::move(st));
    }
    if (sum.sim_check && strip_done.insert("check/" + id + "/" + std::to_string(job.layers)).second)
      checks.push_back({{"scenario", s.name}, {"fix", fix_name(job.fix)}, {"variant", job.variant},
                        {"layers", job.layers}, {"comparison", *sum.sim_check}});
  }
  write_file_atomic(partial / "timelines.json", timelines_to_json(strips));
  if (!checks.empty()) {
    nlohmann::json sc;
    sc["schema_version"] = 1;
    sc["mode"] = mode;
    sc["checks"] = checks;
    write_file_atomic(partial / "sim_check.json", sc.dump(2));
  }
  ReportRun rr;
  rr.results = results;
  rr.source = out.string();
  rr.timelines = strips;
  if (fs::exists(partial / "sim_check.json")) rr.sim_checks = load_report_run(partial).sim_checks;
  HtmlReportOptions ho;
  ho.title = fmt::format("syncscope run: {} ({})", scenarios.front().name + (scenarios.size() > 1 ? " and others" : ""), mode);
  ho.generated_utc = env.date_utc;
  write_file_atomic(partial / "report.html", render_html_report({rr}, ho));
  publish(partial, out, args.force);
  guard.published = true;

  // ---- verdict ------------------------------------------------------------------------
  model::ValidationReport val = model::validate_results(results, (out / "results.json").string());
  std::fputs(model::validation_to_table(val).c_str(), stdout);
  std::printf("wrote %s (results.json, results.csv, report.html, %zu trace(s))\n", out.string().c_str(), unique);
  if (val.failures > 0) {
    std::fprintf(stderr, "syncscope run: %d variant(s) outside their tolerance\n", val.failures);
    return 1;
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand(
      "run",
      "Run scenarios: each fix's variants, measured on a CUDA GPU under the tracer or simulated with a GPU "
      "profile; writes traces, results.json, results.csv and report.html. Exit 1 when a prediction misses its "
      "tolerance, 2 on bad input.");
  cmd->add_option("scenarios", args->scenarios, "Scenario files (scenarios/*.yaml)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--device", args->device,
                  "auto: a CUDA GPU when present (and built with LibTorch+CUDA), else the simulator; cuda; sim")
      ->capture_default_str();
  cmd->add_option("--gpu-profile", args->gpu_profile,
                  "GPU profile for the simulator (shipped name such as H200, B200, GB10, or a file); default H200. "
                  "When measuring, the profile the simulator check uses (default: matched to the GPU's name)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Results directory (default: out/<first scenario>-<mode>); must not exist")
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Replace an existing results directory");
  cmd->add_option("--layers", args->layers, "Run this many decoder layers (overrides measure.layers and any sweep)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--repeats", args->repeats, "Measured steps per variant (overrides measure.repeat_steps)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", args->warmup, "Untraced warm-up steps per variant (overrides measure.warmup_steps)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--hf-config", args->hf_config,
                  "A model's Hugging Face config.json: replaces the scenarios' model shape")
      ->check(CLI::ExistingFile);
  cmd->add_option("--compare-measured", args->compare_measured,
                  "With --device sim: a measured results directory whose traces the simulated ones are compared "
                  "with (written to sim_check.json and the report)")
      ->check(CLI::ExistingDirectory);
  cmd->callback([args, &ctx] { ctx.exit_code = run_command(*args); });
}

#endif

}  // namespace syncscope::cli
