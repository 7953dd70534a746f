#include "syncscope/api/predict.hpp"

#include <memory>
#include <utility>

#include "syncscope/analysis/ranks.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/reports/model_printers.hpp"
#include "syncscope/reports/replay_printers.hpp"
#include "syncscope/trace/split_processes.hpp"

namespace syncscope::api {

namespace {

void check_int(Spelling spelling, const char* name, int value, const bounds::Range& range) {
  SYNCSCOPE_INPUT_ERROR_IF(!range.contains(value), option_name(spelling, name) + " " + std::to_string(value) +
                                                       ": expected " + bounds::describe_int(range));
}

// A fix's trace option as given, parsed: its value, or InputError naming it as `spelling` does.
double parse_fix_option(const FixTraceOption& d, const std::string& text, Spelling spelling) {
  const bounds::Range& range = d.option->range;
  const bool integer = d.option->kind == fixes::PredictOption::Kind::Integer;
  std::optional<double> v;
  if (!integer) v = bounds::parse_number_in(text, range);
  else if (const auto i = bounds::parse_int_in(text, range)) v = static_cast<double>(*i);
  SYNCSCOPE_INPUT_ERROR_IF(!v, option_name(spelling, python_name(d.option->flag)) + " " + text + ": expected " +
                                   (integer ? bounds::describe_int(range) : bounds::describe_number(range)));
  return *v;
}

const FixTraceOption* find_trace_option(const std::vector<FixTraceOption>& declared, const std::string& flag) {
  for (const FixTraceOption& d : declared)
    if (d.option->flag == flag) return &d;
  return nullptr;
}

// The request's fix options as TracePredictOptions::fix_numbers (each checked by check()).
std::map<std::string, std::map<std::string, double>> fix_numbers(const PredictTraceRequest& r) {
  const std::vector<FixTraceOption> declared = trace_options();
  std::map<std::string, std::map<std::string, double>> out;
  for (const auto& [flag, text] : r.fix_options)
    if (const FixTraceOption* d = find_trace_option(declared, flag))
      out[d->fix][d->option->trace_key] = parse_fix_option(*d, text, Spelling::Cli);
  return out;
}

model::TracePredictOptions trace_predict_options(const PredictTraceRequest& r) {
  model::TracePredictOptions to;
  to.step_glob = r.step_range;
  to.layer_glob = r.layer_range;
  if (!r.gpu.empty()) to.profile = model::load_gpu_profile(r.gpu);
  to.fix_numbers = fix_numbers(r);
  to.seed = r.seed;
  to.propagation.samples = r.samples;
  to.propagation.seed = r.seed;
  return to;
}

replay::JobReplayOptions job_options(const PredictTraceRequest& request, std::optional<std::int64_t> what_if_rank) {
  replay::JobReplayOptions jo;
  jo.step_glob = request.step_range;
  jo.what_if = request.what_if;
  jo.what_if_rank = what_if_rank;
  // The job replay's own seed (TracePredictOptions' default) and no profile: the per-rank
  // replays read every rate from their traces.
  jo.predict.step_glob = request.step_range;
  jo.predict.layer_glob = request.layer_range;
  jo.predict.fix_numbers = fix_numbers(request);
  return jo;
}

}  // namespace

std::vector<FixTraceOption> trace_options() {
  fixes::register_shipped_fixes();  // the registry every layer below reads (shipped.hpp)
  std::vector<FixTraceOption> out;
  for (const fixes::FixSpec& f : fixes::fix_registry())
    for (const fixes::PredictOption& o : f.predict_options)
      if (!o.trace_key.empty()) out.push_back({f.name, &o});
  return out;
}

void check(const PredictTraceRequest& r, Spelling spelling) {
  const std::vector<FixTraceOption> declared = trace_options();
  for (const auto& [flag, text] : r.fix_options) {
    const FixTraceOption* d = find_trace_option(declared, flag);
    if (!d) {
      std::string names;
      for (const FixTraceOption& x : declared)
        names += (names.empty() ? "" : ", ") + option_name(spelling, python_name(x.option->flag));
      throw InputError(option_name(spelling, python_name(flag)) + ": no fix takes this option with a trace (" + names +
                       " do)");
    }
    (void)parse_fix_option(*d, text, spelling);
  }
  check_int(spelling, "samples", r.samples, bounds::kSamples);
  if (r.step_time_ns)
    SYNCSCOPE_INPUT_ERROR_IF(!(r.step_time_ns->value > 0 && r.step_time_ns->value <= bounds::kOptionTimeNs.hi),
                             option_name(spelling, "step_ms") +
                                 ": expected a step time above 0 and at most one hour (in ms)");
}

replay::TracePredictionWithReplay predict_trace(const Trace& trace, const std::string& source,
                                                const PredictTraceRequest& request, Spelling spelling) {
  fixes::register_shipped_fixes();  // the registry every layer below reads (shipped.hpp)
  check(request, spelling);
  return replay::predict_with_replay(trace, trace_predict_options(request), source, request.what_if,
                                     request.step_time_ns);
}

std::string render_prediction(const model::PredictionReport& prediction, const replay::ReplayReport* replay,
                              std::string_view format) {
  if (format == "json")
    return replay ? replay::prediction_with_replay_to_json(prediction, *replay) : model::prediction_to_json(prediction);
  SYNCSCOPE_INPUT_ERROR_IF(format != "text", "format '" + std::string(format) + "': expected text or json");
  return prediction_to_text(prediction) + (replay ? replay_to_text(*replay) : "");
}

replay::JobReplayReport predict_job(const std::string& dir, const PredictTraceRequest& request,
                                    std::optional<std::int64_t> what_if_rank) {
  fixes::register_shipped_fixes();  // the registry every layer below reads (shipped.hpp)
  std::vector<replay::JobRankInput> inputs;
  for (const cluster::RankTraceFile& f : cluster::find_rank_traces({dir})) {
    replay::JobRankInput in;
    in.source = f.path;
    in.rank = rank_from_file_name(f.absolute.filename().string());
    in.load = [path = f.absolute] { return read_trace(path); };
    inputs.push_back(std::move(in));
  }
  return replay::replay_job(std::move(inputs), job_options(request, what_if_rank), dir);
}

bool holds_several_ranks(const Trace& trace) { return holds_several_processes(trace); }

replay::JobReplayReport predict_job(const Trace& trace, const std::string& source, const PredictTraceRequest& request,
                                    std::optional<std::int64_t> what_if_rank) {
  fixes::register_shipped_fixes();  // the registry every layer below reads (shipped.hpp)
  // The file is read once: its split is shared by the ranks' loads (each copies its process's
  // trace, which the job replay then owns), as a directory's ranks each read their own file.
  auto split = std::make_shared<ProcessSplit>(split_processes(trace));
  SYNCSCOPE_INPUT_ERROR_IF(split->processes.size() < 2,
                           source + ": not several ranks' processes: " +
                               (split->warnings.empty() ? std::string("one process with GPU work")
                                                        : split->warnings.front()));
  std::vector<replay::JobRankInput> inputs;
  for (std::size_t i = 0; i < split->processes.size(); ++i) {
    const ProcessTrace& p = split->processes[i];
    replay::JobRankInput in;
    in.source = source + " pid " + std::to_string(p.pid);
    in.rank = p.rank;
    in.load = [split, i] { return split->processes[i].trace; };
    inputs.push_back(std::move(in));
  }
  replay::JobReplayReport rep = replay::replay_job(std::move(inputs), job_options(request, what_if_rank), source);
  rep.ranks_from = std::to_string(split->processes.size()) +
                   " processes with GPU work in one file, each replayed as one rank (docs/replay.md, \"One report "
                   "holding several ranks\"); " +
                   split->warnings.front();
  rep.warnings.insert(rep.warnings.begin(), split->warnings.begin() + 1, split->warnings.end());
  return rep;
}

std::string render_job(const replay::JobReplayReport& report, std::string_view format) {
  if (format == "json") return replay::job_replay_to_json(report);
  SYNCSCOPE_INPUT_ERROR_IF(format != "text", "format '" + std::string(format) + "': expected text or json");
  return job_replay_to_text(report);
}

replay::DiffReport diff_traces(const Trace& before, const Trace& after, const DiffRequest& request,
                               const std::string& before_name, const std::string& after_name) {
  fixes::register_shipped_fixes();  // the registry every layer below reads (shipped.hpp)
  model::TracePredictOptions to;
  to.step_glob = request.step_range;
  to.layer_glob = request.layer_range;
  if (!request.gpu.empty()) to.profile = model::load_gpu_profile(request.gpu);
  return replay::diff_traces(before, after, request.what_if, to, before_name, after_name);
}

std::string render_diff(const replay::DiffReport& diff, std::string_view format) {
  if (format == "json") return replay::diff_to_json(diff);
  SYNCSCOPE_INPUT_ERROR_IF(format != "text", "format '" + std::string(format) + "': expected text or json");
  return diff_to_text(diff);
}

}  // namespace syncscope::api
