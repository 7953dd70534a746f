// The model a run names, and the checks on it before it starts (model_notes.hpp).
#include "model_notes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/program/network.hpp"
#include "syncscope/program/program.hpp"
#include "syncscope/program/step_program.hpp"
#include "syncscope/scenario/model_traits.hpp"
#include "syncscope/sim/memory_estimate.hpp"

namespace syncscope::pipeline {

namespace {

// 7241732096 -> "7,241,732,096": counts users compare with a model card.
std::string grouped(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void say(std::vector<std::string>& notes, std::string line) {
  std::fprintf(stderr, "syncscope run: %s\n", printable(line).c_str());
  notes.push_back(std::move(line));
}

// The first baseline job of a scenario (every fix's baseline runs the same step).
const Job* first_job(const RunPlan& plan, std::size_t scenario) {
  for (const auto& j : plan.jobs)
    if (j.scenario == scenario) return &j;
  return nullptr;
}

}  // namespace

void describe_models(const std::vector<scenario::Scenario>& scenarios, RunPlan& plan, const RunRequest& request,
                     std::vector<std::string>& notes, model::Environment& env) {
  for (auto& j : plan.jobs) {
    if (!j.network) continue;
    const program::NetworkSummary ns = program::network_summary(j.opts);
    j.network->base_parameters = ns.base_parameters;
    j.network->family = scenario::model_traits(j.opts.model).family;
  }
  // `named` keeps one line per model and kind of note; `models` the models named, in order: the
  // first is env.extra.model (docs/validate-a-model.md), any other model.<scenario>.
  std::set<std::string> named, models;
  for (std::size_t si = 0; si < scenarios.size(); ++si) {
    const scenario::Scenario& s = scenarios[si];
    const Job* job = first_job(plan, si);
    if (!job) continue;
    const scenario::ModelTraits t = scenario::model_traits(s.model);
    if (!t.assumed.empty() && named.insert("assumed:" + s.model.name).second) say(notes, "warning: " + t.assumed);
    if (named.insert("traits:" + s.model.name).second) {
      if (!t.defaulted.empty()) say(notes, fmt::format("warning: {}: {}", s.model.name, t.defaulted));
      for (const auto& w : t.unmodelled) say(notes, fmt::format("warning: {}: {}", s.model.name, w));
      for (const auto& n : t.notes) say(notes, fmt::format("{}: {}", s.model.name, n));
    }
    program::StepOptions full = job->opts;
    full.layers = 0;  // the whole model, as its card counts it
    const program::NetworkSummary ns = program::network_summary(full);
    if (models.insert(s.model.name).second) {
      std::string from;
      if (!request.hf_config.empty()) {
        // A pipe (--hf-config <(...)) was consumed by reading it: only a regular file can be
        // hashed again, and is (the bytes on disk).
        std::error_code ec;
        const bool file = std::filesystem::is_regular_file(request.hf_config, ec);
        const std::string sha = file ? calibrate::sha256_file(request.hf_config) : "";
        env.extra["model_config"] = request.hf_config;
        if (file) env.extra["model_config_sha256"] = sha;
        from =
            fmt::format(" from {} ({})", request.hf_config, file ? "sha256 " + sha : "not hashed: not a regular file");
      }
      env.extra[models.size() == 1 ? "model" : "model." + s.name] = s.model.name;
      say(notes,
          fmt::format("model {}{}: {}, {} parameters as its config class defines them ({} embeddings), {}",
                      s.model.name, from, t.family.empty() ? "family not given (model_type)" : t.family + " family",
                      grouped(ns.base_parameters), s.model.tie_word_embeddings ? "tied" : "untied",
                      scenario::describe_windows(t, s.model.num_hidden_layers)));
    }
    // Chunked attention (Llama 4's attention_chunk_size) is charged as transformers' sdpa
    // path runs it: the chunk is a mask over the whole packed sequence and SDPA computes every
    // block; the scenario cannot name a kernel that skips masked blocks, so the run says which
    // cost it charged.
    if (!t.layer_chunks.empty() && named.insert("chunks:" + s.model.name).second)
      say(notes, fmt::format("{}: attention cost: {}'s chunked layers are charged as transformers' sdpa path runs "
                             "them, full causal attention over the packed sequence under a chunk mask (every block "
                             "computed); a kernel that skips masked blocks (flex_attention) would cost less on those "
                             "layers, which is not modelled",
                             s.name, s.model.name));
    // What the simulated or measured step leaves out of the architecture.
    std::vector<std::string> missing = ns.step_omits;
    if (t.attn_logit_softcapping > 0)
      missing.push_back(fmt::format("attention logit soft-capping ({})", t.attn_logit_softcapping));
    if (t.final_logit_softcapping > 0)
      missing.push_back(fmt::format("final logit soft-capping ({})", t.final_logit_softcapping));
    if (!missing.empty())
      say(notes, fmt::format("{}: the step does not compute {} of {}{}: their cost is not in the step times", s.name,
                             fmt::join(missing, ", "), s.model.name,
                             ns.omitted_parameters > 0 ? fmt::format(" ({} parameters)", grouped(ns.omitted_parameters))
                                                       : ""));
    // A fix the scenario does not test but whose step it still shapes (an MoE model's routing
    // loop): what its folder says (FixSpec::untested_note).
    for (const fixes::FixSpec& f : fixes::fix_registry()) {
      if (!f.untested_note) continue;
      bool tested = false;
      for (const auto& sel : s.fixes) tested |= sel.fix == f.id;
      if (tested) continue;
      if (std::optional<std::string> note = f.untested_note(s, job->opts)) say(notes, *note);
    }
  }
}

void check_models_memory(const std::vector<scenario::Scenario>& scenarios, const RunPlan& plan,
                         const model::GpuProfile* profile, const std::string& profile_name, bool force,
                         std::vector<std::string>& notes, model::Environment& env) {
  if (!profile || !(profile->memory_bytes > 0)) return;
  std::set<std::size_t> forced, told;  // one note per scenario
  for (const auto& [key, ji] : plan.first_job_of_key) {
    const Job& j = plan.jobs[ji];
    if (forced.count(j.scenario)) continue;
    // The model first (a --hf-config replaces the scenario's), then the scenario it runs in.
    const std::string what = fmt::format("{} ({} of {} layers, scenario {})", j.opts.model.name, j.layers,
                                         j.opts.model.num_hidden_layers, scenarios[j.scenario].name);
    const std::string text = sim::check_step_memory(j.opts, profile->memory_bytes, profile_name, what, force);
    // Which activations the estimate counts (results.json keeps it with the estimate).
    const std::string mode_key = "gradient_checkpointing";
    if (!env.extra.count(mode_key)) env.extra[mode_key] = sim::checkpointing_mode(j.opts);
    else if (env.extra[mode_key] != sim::checkpointing_mode(j.opts))
      env.extra[mode_key + "." + scenarios[j.scenario].name] = sim::checkpointing_mode(j.opts);
    if (text.empty()) {
      if (!told.insert(j.scenario).second) continue;
      const std::string fits =
          what + ": the step " + sim::describe_step_memory(j.opts, profile->memory_bytes, profile_name);
      env.extra[told.size() == 1 ? "memory_estimate" : "memory_estimate." + scenarios[j.scenario].name] = fits;
      say(notes, "memory: " + fits);
      continue;
    }
    forced.insert(j.scenario);
    env.extra["memory_check"] = "forced (--force-memory): the step exceeds the GPU profile's memory";
    say(notes, "memory check overridden with --force-memory: " + text);
  }
}

}  // namespace syncscope::pipeline
