// Loading the scenarios of a run and planning its jobs (plan.hpp).
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/program/network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "syncscope/core/error.hpp"

namespace syncscope::pipeline {

std::vector<scenario::Scenario> load_run_scenarios(const RunRequest& request) {
  std::vector<scenario::Scenario> scenarios;
  for (const auto& f : request.scenarios) scenarios.push_back(scenario::load_scenario(f));
  if (!request.hf_config.empty()) {
    scenario::ModelShape m = scenario::load_hf_config(request.hf_config);
    for (auto& s : scenarios) scenario::replace_model(s, m, request.hf_config);
  }
  for (auto& s : scenarios) {
    if (request.layers) {
      s.measure.layers_override = *request.layers;
      s.measure.layer_sweep.clear();
    }
    if (request.repeats) s.measure.repeat_steps = *request.repeats;
    if (request.warmup) s.measure.warmup_steps = *request.warmup;
    scenario::validate_scenario(s);
  }
  std::set<std::string> names;
  for (const auto& s : scenarios)
    if (!names.insert(s.name).second)
      throw InputError(
          fmt::format("scenario name {} given twice ({}): results would collide", s.name, s.source.string()));
  return scenarios;
}

std::string variant_option_key(const program::StepOptions& o) {
  return fmt::format("L{}/{}", o.layers, program::fix_variants_key(o));
}

std::string file_stem(const std::string& scenario, const Job& j, bool sweep) {
  std::string s = fmt::format("{}__{}-{}", scenario, scenario::fix_name(j.fix), j.variant);
  if (sweep) s += fmt::format("__L{}", j.layers);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  // A file name holds at most 255 bytes (NAME_MAX), and the stem gets ".json.gz" and, while
  // written, a temporary name around it (".STEM.json.gz.tmpPID-N", up to 40 bytes more): a
  // long scenario name (up to 255 bytes, each non-ASCII byte one '_') is cut to kMaxFileStem
  // bytes, ending in "-" and an FNV-1a 64 of the whole stem so that two long names stay two files.
  if (s.size() > kMaxFileStem) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    const std::string tail = fmt::format("-{:016x}", h);
    s = s.substr(0, kMaxFileStem - tail.size()) + tail;
  }
  return s;
}

std::string job_label(const scenario::Scenario& s, const Job& j) {
  const bool sweep = !s.measure.layer_sweep.empty();
  return fmt::format("{} {}={}{}", s.name, scenario::fix_name(j.fix), j.variant,
                     sweep ? fmt::format(" L={}", j.layers) : "");
}

program::StepOptions step_options(const scenario::Scenario& s, fixes::Fix fix, const std::string& variant, int layers) {
  program::StepOptions o;
  o.model = s.model;
  o.batch = s.batch;
  o.dtype = s.dtype;
  o.layers = layers;
  o.seed = s.batch.seed;
  o.training = s.training;
  // The fix under test takes the variant; every other fix its default (the fix registry).
  program::apply_fix_variants(o, s, fix, variant);
  return o;
}

RunPlan plan_jobs(const std::vector<scenario::Scenario>& scenarios) {
  RunPlan plan;
  auto& jobs = plan.jobs;
  for (std::size_t si = 0; si < scenarios.size(); ++si) {
    const scenario::Scenario& s = scenarios[si];
    std::vector<int> depths = s.measure.layer_sweep.empty() ? std::vector<int>{s.layers()} : s.measure.layer_sweep;
    for (int L : depths) {
      for (const auto& f : s.fixes) {
        const std::string base = scenario::baseline_variant(f.fix);
        for (const auto& v : f.variants) {
          Job j;
          j.scenario = si;
          j.fix = f.fix;
          j.variant = v;
          j.baseline = v == base;
          j.layers = L;
          j.tolerance = f.tolerance;
          j.opts = step_options(s, f.fix, v, L);
          j.key = s.name + "/" + variant_option_key(j.opts);
          j.base_key = s.name + "/" + variant_option_key(step_options(s, f.fix, base, L));
          const program::NetworkSummary ns = program::network_summary(j.opts);
          j.network =
              model::NetworkInfo{s.model.name, ns.parameters, ns.trainable_parameters, ns.tied_embeddings, ns.training};
          jobs.push_back(std::move(j));
        }
      }
    }
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) plan.first_job_of_key.emplace(jobs[i].key, i);
  for (const auto& j : jobs) plan.baseline_keys.insert(j.base_key);
  // Baselines first: predictions and the layer the strips show come from them.
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t i) { return plan.baseline_keys.count(jobs[i].key) > 0; });
  for (std::size_t ji : order)
    if (plan.first_job_of_key.at(jobs[ji].key) == ji) plan.produce_order.push_back(ji);
  return plan;
}

}  // namespace syncscope::pipeline
