#include "syncscope/api/analyze.hpp"

#include <sstream>
#include <utility>

#include "syncscope/analysis/process_check.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/reports/rank_printers.hpp"
#include "syncscope/trace/split_processes.hpp"

namespace syncscope::api {

namespace {

AnalysisOptions analysis_options(const AnalyzeRequest& r) {
  AnalysisOptions o;
  o.step_glob = r.step_range;
  o.layer_glob = r.layer_range;
  o.pid = r.pid;
  o.queue_full = r.queue_full;
  o.sequences = r.sequences;
  return o;
}

RecordCounts count_records(const Trace& t) {
  RecordCounts n;
  n.api_calls = t.api_calls.size();
  n.kernels = t.kernels.size();
  n.memcpys = t.memcpys.size();
  n.memsets = t.memsets.size();
  n.sync_records = t.syncs.size();
  n.ranges = t.ranges.size();
  n.rank = t.meta.rank;
  n.source_tool = t.meta.source_tool;
  n.source_version = t.meta.source_version;
  n.dropped_records = t.meta.dropped_records;
  return n;
}

void check_count(Spelling spelling, const char* name, double value, const bounds::Range& range) {
  SYNCSCOPE_INPUT_ERROR_IF(!range.contains(value), option_name(spelling, name) + " " +
                                                       std::to_string(static_cast<long long>(value)) + ": expected " +
                                                       bounds::describe_int(range));
}

}  // namespace

void check(const AnalyzeRequest& r, Spelling spelling) {
  check_count(spelling, "replay_causes", static_cast<double>(r.replay_causes), kReplayCauses);
  check_count(spelling, "queue_full", static_cast<double>(r.queue_full), kQueueFull);
  check_count(spelling, "sequence_min_len", static_cast<double>(r.sequences.min_pattern_len), kSequenceMinLen);
  check_count(spelling, "sequence_top", static_cast<double>(r.sequences.top_k), kSequenceTop);
}

AnalyzeOutcome analyze_trace(Trace trace, const std::string& source, const AnalyzeRequest& request) {
  if (request.pid) require_process(trace, *request.pid, source);
  AnalyzeOutcome out;
  out.counts = count_records(trace);
  out.result = analyze(trace, analysis_options(request));
  out.result.source = source;
  // Per step, over the replay graph (the analysis library has no model); opt-in: it costs
  // about a fifth more time and a sixth more memory on a 200 MB trace (docs/analysis.md).
  if (request.critical_path) replay::add_critical_paths(trace, out.result);
  // What each of the worst causes costs: the trace replayed without its syncs. The trace is
  // not read after this: moved in, released before the replays.
  out.removals = replay::removal_savings(out.result, std::move(trace), request.replay_causes);
  return out;
}

std::string render_analysis(const AnalyzeOutcome& outcome, std::string_view format, std::size_t max_sync_points) {
  if (format == "json") {
    AnalysisJsonOptions jo;
    jo.max_sync_points = max_sync_points;
    jo.removals = &outcome.removals;
    return analysis_to_json(outcome.result, jo);
  }
  if (format == "csv") return analysis_to_csv(outcome.result, &outcome.removals);
  SYNCSCOPE_INPUT_ERROR_IF(format != "table", "format '" + std::string(format) + "': expected table, json or csv");
  std::ostringstream out;
  print_analysis_table(outcome.result, out, &outcome.removals);
  return out.str();
}

RankAnalysis analyze_rank_traces(const std::vector<std::string>& inputs, const AnalyzeRequest& request,
                                 std::size_t jobs, Spelling spelling, const cluster::RankRowSink& progress) {
  SYNCSCOPE_INPUT_ERROR_IF(!kJobs.contains(static_cast<double>(jobs)), option_name(spelling, "jobs") + " " +
                                                                           std::to_string(jobs) + ": expected " +
                                                                           bounds::describe_int(kJobs));
  return cluster::analyze_ranks(inputs, analysis_options(request), jobs, progress);
}

RankAnalysis analyze_processes(const Trace& trace, const std::string& source, const AnalyzeRequest& request) {
  const ProcessSplit split = split_processes(trace);
  SYNCSCOPE_INPUT_ERROR_IF(split.processes.size() < 2,
                           source + ": not several ranks' processes: " +
                               (split.warnings.empty() ? std::string("one process with GPU work")
                                                       : split.warnings.front()));
  const AnalysisOptions options = analysis_options(request);
  std::vector<RankRow> rows;
  for (const ProcessTrace& p : split.processes) {
    AnalysisResult result = analyze(p.trace, options);
    rows.push_back(rank_row(result, p.rank, split.rank_rule == RankRule::Device ? "device" : "pid order",
                            source + " pid " + std::to_string(p.pid)));
  }
  RankAnalysis a = summarize_ranks(std::move(rows), source, request.step_range, request.layer_range);
  // People read first where the ranks came from: no file per rank, one file's processes.
  std::vector<std::string> lines{"the ranks are the " + std::to_string(split.processes.size()) +
                                 " processes with GPU work in this one file, split by process (docs/replay.md, "
                                 "\"One report holding several ranks\")"};
  lines.insert(lines.end(), split.warnings.begin(), split.warnings.end());
  a.warnings.insert(a.warnings.begin(), lines.begin(), lines.end());
  return a;
}

std::string render_rank_analysis(const RankAnalysis& analysis, std::string_view format) {
  if (format == "json") return rank_analysis_to_json(analysis);
  if (format == "csv") return rank_analysis_to_csv(analysis);
  SYNCSCOPE_INPUT_ERROR_IF(format != "table", "format '" + std::string(format) + "': expected table, json or csv");
  std::ostringstream out;
  print_rank_table(analysis, out);
  return out.str();
}

}  // namespace syncscope::api
