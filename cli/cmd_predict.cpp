// syncscope predict: what each fix would save, with intervals, from explicit parameters (the
// blog's own inputs work directly), a scenario plus a GPU profile, or a trace of a run that
// has not applied the fixes. Option parsing only: choosing the fixes, what a scenario
// implies and the predictions are the model's (model/predict_inputs.hpp, trace_predict.hpp).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/api/predict.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::cli {

namespace {

using model::Interval;

// Options the model reads go straight into its inputs (model/predict_inputs.hpp); the rest
// choose the source, the output and the Monte Carlo draws.
struct PredictOptions {
  model::ExplicitPredictInputs in;
  std::string gpu;
  std::string trace;
  std::vector<std::string> what_if;          // with --trace: edits replayed on the trace (model/README.md, "Replay")
  std::optional<std::int64_t> what_if_rank;  // with --trace DIR: the rank the edits change
  std::string step_range = api::kDefaultStepRange;
  std::string layer_range;
  std::string step_ms;
  std::string format = "text";
  std::string output;
  bool force = false;
  int samples = api::kDefaultSamples;
  std::uint64_t seed = api::kDefaultSeed;
};

api::PredictTraceRequest trace_request(const PredictOptions& o, std::optional<Interval> step) {
  api::PredictTraceRequest r;
  r.step_range = o.step_range;
  r.layer_range = o.layer_range;
  r.gpu = o.gpu;
  // Every fix option given: api::check takes those a trace reads (offload's --prefetch-depth,
  // MoE's --top-k, ...) and refuses the rest by name rather than leaving them unread.
  r.fix_options = o.in.values;
  r.step_time_ns = step;
  r.samples = o.samples;
  r.seed = o.seed;
  r.what_if = o.what_if;
  return r;
}

// The options only a prediction from explicit values or a scenario reads, and where a
// trace's prediction takes the same thing: given with --trace they are refused, not ignored.
constexpr std::pair<const char*, const char*> kNotReadWithTrace[] = {
    {"--fix", "it predicts every fix whose pattern the trace shows"},
    {"--scenario", "the trace gives the run's shape"},
    {"--hf-config", "the trace gives the run's shape"},
    {"--layers", "the trace's layer ranges give them (--layer-range picks their names)"},
    {"--round-trip-us", "the round trip comes from --gpu's profile or the trace's own syncs"},
};

// Each registered fix's own options (FixSpec::predict_options), in registry order: kept as
// text in `in.values` for the fix to read; integers and numbers checked here against their
// declared range, as predict_explicit checks them again for library callers.
void add_fix_options(CLI::App& cmd, model::ExplicitPredictInputs& in) {
  for (const fixes::FixSpec& f : fixes::fix_registry())
    for (const fixes::PredictOption& p : f.predict_options) {
      auto* opt = cmd.add_option_function<std::string>(
          "--" + p.flag, [&in, flag = p.flag](const std::string& text) { in.values[flag] = text; }, p.help);
      if (p.kind == fixes::PredictOption::Kind::Integer) opt->check(int_in(p.range));
      if (p.kind == fixes::PredictOption::Kind::Number) opt->check(number_in(p.range));
      if (!p.default_value.empty()) opt->default_str(p.default_value);
    }
}

}  // namespace

void add_predict_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<PredictOptions>();
  auto* cmd = app.add_subcommand(
      "predict",
      "Predict what each fix saves per step, with 90% intervals: from explicit parameters (e.g. the blog's "
      "--fix packing --layers 16 --per-layer-ms 13.7), from a scenario and GPU profile, or from --trace of your own "
      "run (torch.profiler or syncscope) that has not applied the fixes. Times accept VALUE, VALUE:LO:HI or "
      "VALUE+-DELTA. model/README.md gives the formulas.");
  std::string fix_names;  // the shortest spelling of each registered fix ("moe" for moe_routing)
  for (const fixes::FixSpec& f : fixes::fix_registry())
    fix_names += (f.aliases.empty() ? f.name : f.aliases.front()) + ", ";
  cmd->add_option("--fix", o->in.fixes,
                  "Fix to predict: " + fix_names + "or all (repeatable); default: every fix whose inputs are given");
  cmd->add_option("--gpu,--gpu-profile", o->gpu,
                  "GPU profile: a shipped name (H100, H200, B200, RTX5090, GB10) or a profile file (from syncscope "
                  "calibrate, or calibrate --from-trace); gives the round trip, copy rate, overlap slowdown and "
                  "unified memory");
  cmd->add_option("--scenario", o->in.scenario, "Scenario YAML: layer count, experts, prefetch depth, batch shape");
  cmd->add_option("--hf-config", o->in.hf_config,
                  "With --scenario: the model from a Hugging Face config.json, as `run --hf-config` (its dense and "
                  "routed layers, its layer windows)");
  cmd->add_option("--trace", o->trace,
                  "Trace of a run without the fixes: estimate every parameter from it; a directory of one job's rank "
                  "traces (one per rank), or one file holding several ranks' processes (an Nsight Systems report "
                  "of a torchrun job): replay the whole job, its collectives joined across ranks");
  cmd->add_option("--what-if", o->what_if,
                  "With --trace: replay the trace with this edit (repeatable): " + replay::what_if_forms() +
                      "; default: every fix variant's edit beside its closed form");
  cmd->add_option("--what-if-rank", o->what_if_rank,
                  "With --trace DIR or a file of several ranks' processes: the rank the --what-if edits change "
                  "(default: the rank that started the most "
                  "collectives last); every rank's step is replayed again")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  cmd->add_option("--step-range", o->step_range, "With --trace: glob over range names that delimit steps")
      ->capture_default_str();
  cmd->add_option(
      "--layer-range", o->layer_range,
      "With --trace: glob over range names that delimit layers (default: try layer_*, *DecoderLayer*, ...)");
  cmd->add_option("--layers", o->in.layers, "L: transformer layers (packing, offload)")->check(int_in(bounds::kLayers));
  cmd->add_option("--round-trip-us", o->in.round_trip_us,
                  "r: the host's sync round trip (us; default: the GPU profile's): packing's segment model, "
                  "logging's deferred variant");
  add_fix_options(*cmd, o->in);
  cmd->add_option("--step-ms", o->step_ms, "Baseline step time (ms); needed for a speedup");
  cmd->add_option("--format", o->format, "Output format: text or json (schema_version'd)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Write to this file (atomically) instead of stdout");
  cmd->add_flag("--force", o->force, "Replace --output when it already exists");
  cmd->add_option("--samples", o->samples, "Monte Carlo draws for interval propagation")
      ->check(int_in(bounds::kSamples))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed for the Monte Carlo draws and bootstraps")->capture_default_str();

  cmd->callback([o, cmd, &ctx] {
    if (!o->output.empty()) (void)plan_output_file(o->output, o->force);  // refuse before the work
    if (!o->trace.empty())
      for (const auto& [name, why] : kNotReadWithTrace)
        SYNCSCOPE_INPUT_ERROR_IF(cmd->count(name) > 0,
                                 fmt::format("{}: not read with --trace ({}); drop it, or predict from explicit values "
                                             "without --trace",
                                             name, why));
    model::PropagationOptions prop;
    prop.samples = o->samples;
    prop.seed = o->seed;
    std::optional<model::GpuProfile> profile;
    if (!o->gpu.empty()) profile = model::load_gpu_profile(o->gpu);
    std::optional<Interval> step = model::optional_interval_option(o->step_ms, "--step-ms", 1e6);

    std::error_code ec;
    const char* rank_needs =
        "--what-if-rank needs --trace DIR (a directory of one job's rank traces) or a file "
        "holding several ranks' processes";
    SYNCSCOPE_INPUT_ERROR_IF(o->what_if_rank && o->trace.empty(), rank_needs);
    SYNCSCOPE_INPUT_ERROR_IF(!o->what_if.empty() && o->trace.empty(), "--what-if needs --trace: it edits a trace");
    std::string text;
    if (std::filesystem::is_directory(o->trace, ec)) {
      text = api::render_job(api::predict_job(o->trace, trace_request(*o, step), o->what_if_rank), o->format);
    } else if (!o->trace.empty()) {
      const Trace trace = read_trace(o->trace);
      // One Nsight Systems report of a torchrun job holds every rank's process: those are
      // replayed as the job's ranks, as a directory of rank traces is.
      if (api::holds_several_ranks(trace)) {
        text = api::render_job(api::predict_job(trace, o->trace, trace_request(*o, step), o->what_if_rank), o->format);
      } else {
        SYNCSCOPE_INPUT_ERROR_IF(o->what_if_rank.has_value(), rank_needs);
        const auto both = api::predict_trace(trace, o->trace, trace_request(*o, step), api::Spelling::Cli);
        text = api::render_prediction(both.prediction, &both.replay, o->format);
      }
    } else {
      o->in.profile = profile;
      o->in.step_ns = step;
      o->in.propagation = prop;
      text = api::render_prediction(model::predict_explicit(o->in), nullptr, o->format);
    }
    emit_output(o->output, o->force, text);
    ctx.exit_code = 0;
  });
}

}  // namespace syncscope::cli
