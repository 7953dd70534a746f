// syncscope predict: what each fix would save, with intervals, from explicit parameters (the
// blog's own inputs work directly), a scenario plus a GPU profile, or a trace of a run that
// has not applied the fixes.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_bounds.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"

#ifdef SYNCSCOPE_MODEL_AVAILABLE
#include <fmt/format.h>

#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/replay.hpp"
#include "syncscope/model/trace_predict.hpp"
#endif
#ifdef SYNCSCOPE_SCENARIO_AVAILABLE
#include "syncscope/scenario/scenario.hpp"
#endif

namespace syncscope::cli {

#ifdef SYNCSCOPE_MODEL_AVAILABLE

namespace {

using model::Interval;

// Option bounds beyond core/bounds.hpp's shared ones (reasons given in the messages).
constexpr bounds::Range kSyncsPerLayer{1, 1000, "a layer's metadata rebuild syncs a handful of times"};
constexpr bounds::Range kReloadBytes{1, 1e13, "one layer's checkpoint cannot exceed the largest GPU's memory"};
constexpr bounds::Range kPredictPrefetchDepth{2, 1024, "the prefetch variant looks k >= 2 layers ahead; 1 is double "
                                                       "buffering; more than the layers a model has buys nothing"};
constexpr bounds::Range kExpertsOption{1, 1024, "the largest published mixture-of-experts layers have 512 experts"};
constexpr bounds::Range kPasses{1, 16, "a step routes once forward, once more per recompute"};

struct PredictOptions {
  std::vector<std::string> fixes;
  std::string gpu;
  std::string scenario;
  std::string trace;
  std::vector<std::string> what_if;  // with --trace: edits replayed on the trace (model/README.md, "Replay")
  std::string step_range = "ProfilerStep#*";
  std::string layer_range;
  int layers = 0;
  std::string per_layer_ms, host_ms, gpu_ms, rebuild_host_ms, rebuild_gpu_ms, round_trip_us;
  int syncs_per_layer = 1;
  std::string copy_ms, compute_ms, slowdown;
  double reload_bytes = 0;
  int prefetch_depth = 2;
  int experts = 0, moe_layers = 0, passes = 1, top_k = 0;
  std::string per_expert_us, kernel_delta_ms;
  std::string step_ms;
  std::string format = "text";
  std::string output;
  bool force = false;
  int samples = 4000;
  std::uint64_t seed = 0x5eed'5c09eULL;
};

// "V", "V:LO:HI" or "V+-D" (also "V±D"), in the option's unit; returned in ns (x scale),
// each bound within [0, max] after scaling (a time: up to an hour, core/bounds.hpp).
Interval parse_interval(const std::string& text, const std::string& option, double scale,
                        double max = bounds::kOptionTimeNs.hi) {
  auto num = [&](const std::string& s) {
    try {
      std::size_t pos = 0;
      double v = std::stod(s, &pos);
      if (pos != s.size()) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      throw InputError(fmt::format("{} '{}': expected a number, VALUE:LO:HI or VALUE+-DELTA (e.g. 13.7, "
                                   "13.7:12.9:14.5, 13.7+-0.8)",
                                   option, text));
    }
  };
  auto parse = [&]() -> Interval {
    for (const std::string pm : {"+-", "\xC2\xB1"}) {
      if (auto p = text.find(pm); p != std::string::npos && p > 0) {
        double v = num(text.substr(0, p)), d = num(text.substr(p + pm.size()));
        SYNCSCOPE_INPUT_ERROR_IF(d < 0, fmt::format("{} '{}': the +- half-width must be >= 0", option, text));
        return {v, v - d, v + d};
      }
    }
    if (auto p = text.find(':'); p != std::string::npos) {
      auto q = text.find(':', p + 1);
      SYNCSCOPE_INPUT_ERROR_IF(q == std::string::npos,
                               fmt::format("{} '{}': the interval form is VALUE:LO:HI", option, text));
      return {num(text.substr(0, p)), num(text.substr(p + 1, q - p - 1)), num(text.substr(q + 1))};
    }
    return Interval::exact(num(text));
  };
  Interval x = parse();
  model::check_interval(x, option);
  SYNCSCOPE_INPUT_ERROR_IF(x.lo < 0, fmt::format("{} '{}': must not be negative", option, text));
  SYNCSCOPE_INPUT_ERROR_IF(!(x.hi * scale <= max),
                           fmt::format("{} '{}': at most {:g} in the option's unit ({})", option, text, max / scale,
                                       max == bounds::kOptionTimeNs.hi ? bounds::kOptionTimeNs.why : bounds::kSlowdown.why));
  return {x.value * scale, x.lo * scale, x.hi * scale};
}

std::optional<Interval> opt_interval(const std::string& text, const std::string& option, double scale) {
  if (text.empty()) return std::nullopt;
  return parse_interval(text, option, scale);
}

std::string normalize_fix(const std::string& f) {
  if (f == "moe" || f == "moe_routing" || f == "moe-routing") return "moe_routing";
  if (f == "packing" || f == "offload" || f == "all") return f;
  throw InputError(fmt::format("--fix '{}': expected packing, offload, moe or all", f));
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
  cmd->add_option("--fix", o->fixes, "Fix to predict: packing, offload, moe or all (repeatable); default: every fix "
                                     "whose inputs are given");
  cmd->add_option("--gpu,--gpu-profile", o->gpu,
                  "GPU profile: a shipped name (H100, H200, B200, RTX5090, GB10) or a profile file (from syncscope "
                  "calibrate, or calibrate --from-trace); gives the round trip, copy rate, overlap slowdown and "
                  "unified memory");
  cmd->add_option("--scenario", o->scenario, "Scenario YAML: layer count, experts, prefetch depth, batch shape");
  cmd->add_option("--trace", o->trace, "Trace of a run without the fixes: estimate every parameter from it");
  cmd->add_option("--what-if", o->what_if,
                  "With --trace: replay the trace with this edit (repeatable): remove-syncs:cause=GLOB, "
                  "remove-syncs:api=GLOB, remove-syncs:range=GLOB, remove-syncs:all, packing-cache, double-buffer, "
                  "moe-sorted, moe-device; default: the three fixes' edits beside their closed forms");
  cmd->add_option("--step-range", o->step_range, "With --trace: glob over range names that delimit steps")
      ->capture_default_str();
  cmd->add_option("--layer-range", o->layer_range,
                  "With --trace: glob over range names that delimit layers (default: try layer_*, *DecoderLayer*, ...)");
  cmd->add_option("--layers", o->layers, "L: transformer layers (packing, offload)")->check(int_in(bounds::kLayers));
  cmd->add_option("--per-layer-ms", o->per_layer_ms, "packing: s, the per-layer cost the cache removes (ms)");
  cmd->add_option("--host-ms", o->host_ms, "packing segment model: host time per layer, rebuild included (ms)");
  cmd->add_option("--gpu-ms", o->gpu_ms, "packing segment model: GPU time per layer, rebuild kernels included (ms)");
  cmd->add_option("--rebuild-host-ms", o->rebuild_host_ms, "packing segment model: host rebuild work per layer (ms)");
  cmd->add_option("--rebuild-gpu-ms", o->rebuild_gpu_ms, "packing segment model: rebuild kernel time per layer (ms)");
  cmd->add_option("--round-trip-us", o->round_trip_us,
                  "packing segment model: sync round trip r (us; default: the GPU profile's)");
  cmd->add_option("--syncs-per-layer", o->syncs_per_layer, "packing segment model: syncs per layer rebuild")
      ->check(int_in(kSyncsPerLayer))
      ->capture_default_str();
  cmd->add_option("--copy-ms", o->copy_ms, "offload: c, one layer's checkpoint reload copy (ms)");
  cmd->add_option("--reload-bytes", o->reload_bytes,
                  "offload: bytes reloaded per layer; c = bytes / the profile's pinned H2D rate (instead of --copy-ms)")
      ->check(number_in(kReloadBytes, "bytes"));
  cmd->add_option("--compute-ms", o->compute_ms, "offload: g, backward (recompute + gradient) time per layer (ms)");
  cmd->add_option("--slowdown", o->slowdown,
                  "offload: sigma, fractional slowdown of kernels beside a copy (default: the profile's, else 0)");
  cmd->add_option("--prefetch-depth", o->prefetch_depth,
                  "offload prefetch variant: look-ahead k (ring of k+1); k >= 2 (k = 1 is double buffering)")
      ->check(int_in(kPredictPrefetchDepth))
      ->capture_default_str();
  cmd->add_option("--experts", o->experts, "moe: E, experts per MoE layer")->check(int_in(kExpertsOption));
  cmd->add_option("--moe-layers", o->moe_layers, "moe: N, MoE layers")->check(int_in(bounds::kLayers));
  cmd->add_option("--top-k", o->top_k,
                  "moe with --trace: k, experts per token; charges the device variant's capacity padding "
                  "(E/k times the expert GEMMs), for where it pads (no at::_grouped_mm: LibTorch < 2.8 or "
                  "below sm90)")
      ->check(int_in(kExpertsOption));
  cmd->add_option("--per-expert-us", o->per_expert_us, "moe: q, per-expert dynamic-query cost (us)");
  cmd->add_option("--passes", o->passes, "moe: routing passes per step (2 with checkpoint recompute)")
      ->check(int_in(kPasses))
      ->capture_default_str();
  cmd->add_option("--kernel-delta-ms", o->kernel_delta_ms,
                  "moe: measured kernel-time difference per step, baseline minus fix (ms)");
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

  cmd->callback([o, &ctx] {
    if (!o->output.empty()) (void)plan_output_file(o->output, o->force);  // refuse before the work
    model::PropagationOptions prop;
    prop.samples = o->samples;
    prop.seed = o->seed;
    std::optional<GpuProfile> profile;
    if (!o->gpu.empty()) profile = load_gpu_profile(o->gpu);
    std::optional<Interval> step = opt_interval(o->step_ms, "--step-ms", 1e6);

    model::PredictionReport rep;
    std::optional<model::ReplayReport> replay;
    SYNCSCOPE_INPUT_ERROR_IF(!o->what_if.empty() && o->trace.empty(), "--what-if needs --trace: it edits a trace");
    if (!o->trace.empty()) {
      model::TracePredictOptions to;
      to.step_glob = o->step_range;
      to.layer_glob = o->layer_range;
      to.profile = profile;
      to.prefetch_depth = o->prefetch_depth;
      if (o->top_k > 0) to.moe_top_k = o->top_k;
      to.seed = o->seed;
      to.propagation = prop;
      const Trace trace = read_trace(o->trace);
      rep = model::predict_from_trace(trace, to, o->trace);
      replay = model::replay_what_if(trace, o->what_if, to, rep);
      if (step) {
        for (auto& f : rep.fixes) model::attach_speedup(f, step, prop);
        rep.notes.push_back("--step-ms replaces the trace's step time");
      }
    } else {
      std::set<std::string> want;
      for (const auto& f : o->fixes) want.insert(normalize_fix(f));
      if (want.count("all")) want = {"packing", "offload", "moe_routing"};
      int layers = o->layers, experts = o->experts, moe_layers = o->moe_layers, depth = o->prefetch_depth;
      double reload_bytes = o->reload_bytes;
      std::string reload_note;
      rep.source = "explicit values";
      if (!o->scenario.empty()) {
#ifdef SYNCSCOPE_SCENARIO_AVAILABLE
        Scenario sc = load_scenario(o->scenario);
        rep.source = "scenario " + o->scenario;
        if (layers == 0) layers = sc.layers();
        if (sc.model.is_moe()) {
          if (experts == 0) experts = sc.model.num_local_experts;
          if (moe_layers == 0) moe_layers = sc.layers();
        }
        for (const auto& fs_ : sc.fixes) {
          if (o->fixes.empty()) want.insert(fix_name(fs_.fix));
          if (fs_.fix == Fix::Offload) depth = fs_.prefetch_depth;
        }
        if (reload_bytes == 0 && o->copy_ms.empty() && sc.model.hidden_size > 0) {
          // The checkpointed activation of a layer is its input hidden state [T, hidden].
          const double elem = sc.dtype == "fp32" ? 4 : 2;
          reload_bytes = static_cast<double>(sc.batch.packed_tokens) * sc.model.hidden_size * elem;
          reload_note = fmt::format("reload per layer = packed tokens {} x hidden {} x {} B = {:.1f} MiB (the layer's "
                                    "input hidden state)",
                                    sc.batch.packed_tokens, sc.model.hidden_size, elem, reload_bytes / (1 << 20));
        }
#else
        throw Error("--scenario needs the scenario loader (syncscope_scenario), which this build lacks");
#endif
      }
      if (profile) rep.gpu_profile = profile->name;
      const bool have_packing = !o->per_layer_ms.empty();
      const bool have_offload = !o->compute_ms.empty() && (!o->copy_ms.empty() || reload_bytes > 0);
      const bool have_moe = !o->per_expert_us.empty();
      if (want.empty()) {
        if (have_packing) want.insert("packing");
        if (have_offload) want.insert("offload");
        if (have_moe) want.insert("moe_routing");
      }
      SYNCSCOPE_INPUT_ERROR_IF(want.empty(),
                               "predict: nothing to predict: give a fix and its inputs (e.g. --fix packing --layers 16 "
                               "--per-layer-ms 13.7), --scenario, or --trace");
      if (want.count("packing")) {
        SYNCSCOPE_INPUT_ERROR_IF(layers < 1 || !have_packing,
                                 "--fix packing needs --layers L and --per-layer-ms S (e.g. --layers 16 "
                                 "--per-layer-ms 13.7)");
        model::PackingParams p;
        p.layers = layers;
        p.s_ns = parse_interval(o->per_layer_ms, "--per-layer-ms", 1e6);
        p.host_ns = opt_interval(o->host_ms, "--host-ms", 1e6);
        p.gpu_ns = opt_interval(o->gpu_ms, "--gpu-ms", 1e6);
        p.rebuild_host_ns = opt_interval(o->rebuild_host_ms, "--rebuild-host-ms", 1e6);
        p.rebuild_gpu_ns = opt_interval(o->rebuild_gpu_ms, "--rebuild-gpu-ms", 1e6);
        p.round_trip_ns = opt_interval(o->round_trip_us, "--round-trip-us", 1e3);
        if (!p.round_trip_ns && profile) p.round_trip_ns = Interval::exact(profile->sync_round_trip_ns);
        p.syncs_per_layer = o->syncs_per_layer;
        const bool any_segment = p.host_ns || p.gpu_ns || p.rebuild_host_ns || p.rebuild_gpu_ns;
        const bool all_segment = p.host_ns && p.gpu_ns && p.rebuild_host_ns && p.rebuild_gpu_ns && p.round_trip_ns;
        SYNCSCOPE_INPUT_ERROR_IF(any_segment && !all_segment,
                                 "packing segment model: give all of --host-ms, --gpu-ms, --rebuild-host-ms, "
                                 "--rebuild-gpu-ms and a round trip (--round-trip-us or --gpu)");
        rep.fixes.push_back(model::predict_packing(p, step, prop, "cached"));
        rep.fixes.push_back(model::predict_packing(p, step, prop, "device"));
      }
      if (want.count("offload")) {
        SYNCSCOPE_INPUT_ERROR_IF(layers < 1 || o->compute_ms.empty() || (o->copy_ms.empty() && reload_bytes <= 0),
                                 "--fix offload needs --layers L, --compute-ms G and --copy-ms C (or --reload-bytes B "
                                 "with --gpu, or a --scenario with --gpu)");
        model::OffloadParams p;
        p.layers = layers;
        p.compute_ns = parse_interval(o->compute_ms, "--compute-ms", 1e6);
        if (!reload_note.empty() && o->copy_ms.empty()) rep.notes.push_back(reload_note);
        if (!o->copy_ms.empty()) {
          p.copy_ns = parse_interval(o->copy_ms, "--copy-ms", 1e6);
        } else {
          SYNCSCOPE_INPUT_ERROR_IF(!profile, "offload: --reload-bytes needs --gpu for the pinned H2D rate");
          p.copy_ns = Interval::exact(reload_bytes / profile->h2d_pinned_bytes_per_s * 1e9);
          rep.notes.push_back(fmt::format("offload: c = {:.0f} B / {:.1f} GB/s pinned H2D ({}) = {:.3f} ms",
                                          reload_bytes, profile->h2d_pinned_bytes_per_s / 1e9, profile->name,
                                          p.copy_ns.value / 1e6));
        }
        if (!o->slowdown.empty()) p.slowdown = parse_interval(o->slowdown, "--slowdown", 1.0, bounds::kSlowdown.hi);
        else if (profile) p.slowdown = Interval::exact(profile->copy_compute_slowdown);
        p.unified_memory = profile && profile->unified_memory;
        // The prefetch variant looks k >= 2 layers ahead; a scenario's depth 1 (double
        // buffering) is predicted as k = 2, and the report says so.
        p.prefetch_depth = std::max(2, depth);
        if (depth < 2)
          rep.notes.push_back(fmt::format("offload: the scenario's prefetch_depth {} is double buffering; the prefetch "
                                          "variant is predicted with k = 2",
                                          depth));
        rep.fixes.push_back(model::predict_offload(p, "double", step, prop));
        rep.fixes.push_back(model::predict_offload(p, "prefetch", step, prop));
      }
      if (want.count("moe_routing")) {
        SYNCSCOPE_INPUT_ERROR_IF(experts < 1 || moe_layers < 1 || !have_moe,
                                 "--fix moe needs --experts E, --moe-layers N and --per-expert-us Q");
        model::MoeParams p;
        p.experts = experts;
        p.moe_layers = moe_layers;
        p.passes = o->passes;
        p.per_expert_ns = parse_interval(o->per_expert_us, "--per-expert-us", 1e3);
        if (auto d = opt_interval(o->kernel_delta_ms, "--kernel-delta-ms", 1e6)) p.kernel_delta_ns = *d;
        rep.fixes.push_back(model::predict_moe(p, "sorted", step, prop));
        rep.fixes.push_back(model::predict_moe(p, "device", step, prop));
      }
      if (!step) rep.notes.push_back("no --step-ms: savings only; a speedup needs the baseline step time");
    }
    std::string text = o->format == "json"
                           ? (replay ? model::prediction_with_replay_to_json(rep, *replay) : model::prediction_to_json(rep))
                           : model::prediction_to_text(rep) + (replay ? model::replay_to_text(*replay) : "");
    if (o->output.empty()) {
      std::cout << text << std::flush;
    } else {
      write_file_atomic(o->output, text, o->force);
      std::fprintf(stderr, "syncscope: wrote %s\n", o->output.c_str());
    }
    ctx.exit_code = 0;
  });
}

#else

void add_predict_command(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("predict", "(needs the model library, syncscope_model, which this build lacks)");
  cmd->callback([] { throw Error("syncscope predict: this build has no model library (syncscope_model)"); });
}

#endif

}  // namespace syncscope::cli
