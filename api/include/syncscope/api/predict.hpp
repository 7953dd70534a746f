// `predict --trace` and `diff` as one call each for the CLI (cli/cmd_predict.cpp,
// cli/cmd_diff.cpp) and Python (syncscope.predict, syncscope.diff): the trace -> prediction ->
// replay sequence (replay/replay.hpp, predict_with_replay), its options' bounds checked once
// with the caller's spelling of their names, and the renderings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/api/defaults.hpp"
#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/replay/replay_diff.hpp"
#include "syncscope/replay/replay_job.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::api {

struct PredictTraceRequest {
  std::string step_range = kDefaultStepRange;
  std::string layer_range;
  std::string gpu;  // a shipped profile name or a profile file; "" none
  // The registered fixes' own options for traces (FixSpec's predict_options with a trace_key:
  // offload's prefetch-depth, MoE's top-k, logging's logging-steps), as text by flag; checked by
  // check() against their declarations. trace_options() lists them.
  std::map<std::string, std::string> fix_options;
  std::optional<model::Interval> step_time_ns;  // replaces the trace's step time
  int samples = kDefaultSamples;
  std::uint64_t seed = kDefaultSeed;
  std::vector<std::string> what_if;  // edits replayed on the trace; none: every fix's edit
};

// InputError naming the option as `spelling` writes it, for a value outside its bound or a fix
// option no registered fix declares for traces.
void check(const PredictTraceRequest& request, Spelling spelling);

// The options registered fixes take with predict --trace, in registry order, with their fix's
// name (the CLI adds them as options, Python as keyword arguments).
struct FixTraceOption {
  std::string fix;
  const fixes::PredictOption* option;
};
std::vector<FixTraceOption> trace_options();

// check(request), then the prediction and the replay of each edit (replay/replay.hpp).
replay::TracePredictionWithReplay predict_trace(const Trace& trace, const std::string& source,
                                                const PredictTraceRequest& request, Spelling spelling);
// format: "text" or "json".
std::string render_prediction(const model::PredictionReport& prediction, const replay::ReplayReport* replay,
                              std::string_view format);

// predict --trace DIR: the rank traces of one job replayed together (replay/replay_job.hpp);
// the edits change `what_if_rank` (none: the rank that started the most collectives last).
replay::JobReplayReport predict_job(const std::string& dir, const PredictTraceRequest& request,
                                    std::optional<std::int64_t> what_if_rank);
// Whether `trace` holds several ranks' processes (two or more processes with GPU work: one
// Nsight Systems report of a torchrun job; trace/split_processes.hpp).
bool holds_several_ranks(const Trace& trace);
// predict --trace FILE for such a file: its processes split into one trace each and replayed as
// the job's ranks (each numbered as split_processes says, the rule in the report's ranks_from).
// InputError when the file holds fewer than two processes with GPU work.
replay::JobReplayReport predict_job(const Trace& trace, const std::string& source, const PredictTraceRequest& request,
                                    std::optional<std::int64_t> what_if_rank);
std::string render_job(const replay::JobReplayReport& report, std::string_view format);

struct DiffRequest {
  std::vector<std::string> what_if;  // replayed on BEFORE, against the real AFTER
  std::string step_range = kDefaultStepRange;
  std::string layer_range;
  std::string gpu;  // for edits that need a rate the trace does not show (pin-memory)
};

replay::DiffReport diff_traces(const Trace& before, const Trace& after, const DiffRequest& request,
                               const std::string& before_name, const std::string& after_name);
// format: "text" or "json".
std::string render_diff(const replay::DiffReport& diff, std::string_view format);

}  // namespace syncscope::api
