// build_view_trace (view.hpp): the existing analyses run once (analyze, the model's
// critical paths and cause replays), then the chosen step cut into lanes (view_lanes.cpp)
// and HTA's per-stream idle rule computed beside ours.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "html_format.hpp"
#include "syncscope/analysis/ranks.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/reports/view.hpp"
#include "view_internal.hpp"

namespace syncscope {

namespace {

// The step drawn: --step N, else the median step by duration (the lower middle for an even
// count), so the page shows a typical step rather than the warm-up one.
void choose_step(ViewTrace& v, const ViewOptions& o) {
  const auto& steps = v.result.steps;
  if (steps.empty()) {
    SYNCSCOPE_INPUT_ERROR_IF(o.step.has_value(), v.source + ": --step " + std::to_string(*o.step) +
                                                     ": the trace has no host range matching '" + o.step_glob +
                                                     "' (give the step ranges' glob with --step-range)");
    return;
  }
  if (o.step) {
    SYNCSCOPE_INPUT_ERROR_IF(*o.step >= steps.size(), v.source + ": --step " + std::to_string(*o.step) +
                                                          ": the trace has " + std::to_string(steps.size()) +
                                                          " step(s) matching '" + o.step_glob + "' (0 to " +
                                                          std::to_string(steps.size() - 1) + ")");
    v.step_index = *o.step;
    v.step_why = "--step " + std::to_string(*o.step);
  } else {
    std::vector<std::size_t> order(steps.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return steps[a].duration_ns < steps[b].duration_ns; });
    v.step_index = order[(order.size() - 1) / 2];
    v.step_why = fmt::format("the median of {} step(s) by duration", steps.size());
  }
  v.has_step = true;
}

// HTA's idle rule per stream over all its activities (see HtaIdle in view.hpp).
std::vector<ViewStreamIdle> stream_idle(const Trace& trace, const AnalysisResult& r, Ns kernel_wait_ns) {
  std::unordered_map<std::uint64_t, Ns> launch_start;
  launch_start.reserve(trace.api_calls.size());
  for (const auto& c : trace.api_calls)
    if (c.correlation != 0) launch_start.emplace(c.correlation, c.start);
  struct Act {
    Ns start, end;
    std::uint64_t correlation;
  };
  std::map<std::pair<std::int32_t, std::int64_t>, std::vector<Act>> by_stream;
  auto add = [&](const GpuActivity& a) { by_stream[{a.device, a.stream}].push_back({a.start, a.end, a.correlation}); };
  for (const auto& k : trace.kernels) add(k);
  for (const auto& m : trace.memcpys) add(m);
  for (const auto& m : trace.memsets) add(m);
  std::vector<ViewStreamIdle> out;
  for (const auto& t : r.idle_by_stream) {
    ViewStreamIdle s;
    s.ours = t;
    auto it = by_stream.find({t.device, t.stream});
    if (it != by_stream.end()) {
      auto& acts = it->second;
      std::stable_sort(acts.begin(), acts.end(), [](const Act& a, const Act& b) { return a.start < b.start; });
      for (std::size_t i = 1; i < acts.size(); ++i) {
        const Ns prev_end = acts[i - 1].end, gap = acts[i].start - prev_end;
        if (gap <= 0) continue;  // HTA sums negative intervals too; one stream's work does not overlap
        const auto l = launch_start.find(acts[i].correlation);
        if (l != launch_start.end() && l->second > prev_end) s.hta.host_wait_ns += gap;
        else if (gap < kernel_wait_ns) s.hta.kernel_wait_ns += gap;
        else s.hta.other_ns += gap;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The drawn step's critical path over the identity replay (replay/critical_path.hpp), every
// run of it in time order for the timeline and the longest kCriticalTopRuns for the table.
// The graph's step is the analysis's by name and host range, as add_critical_paths matches
// them; without step ranges the replay's one window (its busiest thread).
void critical_path_of_window(const Trace& trace, ViewTrace& v, const ViewOptions& o) {
  replay::ReplayOptions ro;
  ro.step_glob = o.step_glob;
  const replay::ReplayGraph g = replay::build_replay_graph(trace, ro, v.result.sync_points);
  if (g.nodes.empty() || g.steps.empty()) return;
  std::optional<std::size_t> step;
  if (!v.has_step) {
    if (g.problems.no_steps) step = 0;
  } else {
    const WindowStats& s = v.result.steps[v.step_index];
    for (std::size_t i = 0; i < g.steps.size() && !step; ++i)
      if (g.steps[i].name == s.name && g.steps[i].rec_start == s.start && g.steps[i].rec_end == s.end) step = i;
  }
  if (!step) return;
  CriticalPath cp = replay::step_critical_path_all_runs(trace, g, replay::run_replay(g), *step);
  if (cp.length_ns <= 0) return;
  v.critical_runs = cp.top;
  std::stable_sort(cp.top.begin(), cp.top.end(),
                   [](const CriticalRun& a, const CriticalRun& b) { return a.duration_ns > b.duration_ns; });
  if (cp.top.size() > kCriticalTopRuns) cp.top.resize(kCriticalTopRuns);
  v.critical = std::move(cp);
  if (v.critical_runs.size() > o.max_critical_runs) {  // the longest, back in time order
    std::vector<CriticalRun> runs = v.critical_runs;
    std::stable_sort(runs.begin(), runs.end(),
                     [](const CriticalRun& a, const CriticalRun& b) { return a.duration_ns > b.duration_ns; });
    runs.resize(o.max_critical_runs);
    std::stable_sort(runs.begin(), runs.end(),
                     [](const CriticalRun& a, const CriticalRun& b) { return a.start_ns < b.start_ns; });
    v.sampling_notes.push_back(fmt::format("the critical path's {} longest of {} runs are drawn", o.max_critical_runs,
                                           v.critical_runs.size()));
    v.critical_runs = std::move(runs);
  }
}

// The rank as analyze gives it (distributedInfo.rank, else "rank<N>" in the file name), and
// the job's world size when distributedInfo has one (analyze's job rule, analysis/ranks.hpp).
void read_distributed_info(ViewTrace& v, const TraceMetadata& meta) {
  v.rank = rank_from_metadata(meta);
  if (!v.rank) v.rank = rank_from_file_name(std::filesystem::path(v.source).filename().string());
  if (const auto w = world_size_from_metadata(meta); w > 0) v.world_size = w;
}

}  // namespace

ViewTrace build_view_trace(Trace&& trace, const std::string& source, const ViewOptions& o) {
  ViewTrace v;
  v.source = source;
  read_distributed_info(v, trace.meta);
  const std::string file = std::filesystem::path(source).filename().string();
  v.label = v.rank
                ? fmt::format("rank {}{} ({})", *v.rank, v.world_size ? fmt::format(" of {}", *v.world_size) : "", file)
                : file;
  AnalysisOptions ao;
  ao.step_glob = o.step_glob;
  v.result = analyze(trace, ao);
  v.result.source = source;
  choose_step(v, o);
  if (v.has_step) {
    const WindowStats& s = v.result.steps[v.step_index];
    v.window_start = s.start;
    v.window_end = s.end;
  } else {
    const auto span = trace.time_span();
    v.window_start = span.first;
    v.window_end = span.second;
  }
  critical_path_of_window(trace, v, o);
  view_detail::cut_lanes(trace, v, o);
  for (const auto& sp : v.result.sync_points) {
    if (sp.start < v.window_start || sp.start >= v.window_end) continue;
    if (v.syncs.size() >= o.max_sync_markers) {
      v.sampling_notes.push_back(
          fmt::format("only the first {} sync points of the window are marked", o.max_sync_markers));
      break;
    }
    v.syncs.push_back(sp);
  }
  v.stream_idle = stream_idle(trace, v.result, o.hta_kernel_wait_ns);
  // The trace is not read after this: the replays consume it (their graph is all they need).
  v.removals = replay::removal_savings(v.result, std::move(trace), o.replay_causes);
  return v;
}

std::vector<std::string> view_set_notes(const std::vector<ViewTrace>& traces) {
  std::vector<std::string> notes;
  std::map<std::int64_t, std::vector<std::string>> by_world;
  std::vector<std::int64_t> sizes;
  for (const auto& t : traces) {
    if (t.world_size) by_world[*t.world_size].push_back(t.label);
    sizes.push_back(t.world_size.value_or(0));
  }
  const bool two_jobs = several_jobs(sizes);  // analyze's rule (analysis/ranks.hpp)
  if (two_jobs) {
    std::string jobs;
    for (const auto& [w, labels] : by_world) {
      jobs += fmt::format("{}world size {}: ", jobs.empty() ? "" : "; ", w);
      for (std::size_t i = 0; i < labels.size(); ++i) jobs += (i ? ", " : "") + labels[i];
    }
    notes.push_back("These traces come from " + std::to_string(by_world.size()) +
                    " different jobs (distributedInfo.world_size differs): each is shown under its own name, side by "
                    "side, and nothing is merged or compared across jobs (" +
                    jobs + ").");
  }
  // One job: the rank that stands out, by analyze's rule (analysis/ranks.hpp).
  std::map<std::int64_t, std::vector<std::string>> by_rank;
  for (const auto& t : traces)
    if (t.rank) by_rank[*t.rank].push_back(t.source);
  if (!two_jobs && by_rank.size() == traces.size() && traces.size() >= 3) {
    std::vector<RankRow> rows;
    for (const auto& t : traces) rows.push_back(rank_row(t.result, *t.rank, "", t.source));
    const RankAnalysis a = summarize_ranks(std::move(rows), "", traces.front().result.options.step_glob, "");
    if (a.standout)
      notes.push_back(
          fmt::format("Rank {} stands out: {} {} per step against the ranks' median {} ({:+.0f}% of a "
                      "median step), as analyze finds it.",
                      a.standout->rank, metric_label(a.standout->metric), html::duration_text(a.standout->value),
                      html::duration_text(a.standout->median), 100.0 * a.standout->deviation));
    // The potential stragglers, as analyze lists them (analysis/ranks.hpp).
    std::string late;
    for (const auto& st : a.stragglers)
      late += fmt::format("{}rank {} (late by {} per step, {:.0f}% of a median step)", late.empty() ? "" : ", ",
                          st.rank, html::duration_text(static_cast<Ns>(st.late_ns)), 100.0 * st.late_fraction);
    if (!late.empty())
      notes.push_back(
          "Potential straggler(s), reaching their collectives last (the least communication time per "
          "step): " +
          late + ", as analyze finds them.");
  }
  by_rank.clear();
  for (const auto& t : traces)
    if (t.rank) by_rank[*t.rank].push_back(t.source);
  for (const auto& [r, files] : by_rank)
    if (files.size() > 1)
      notes.push_back(fmt::format("{} traces say they are rank {} ({}): shown apart, under their file names.",
                                  files.size(), r, files.front() + ", " + files[1]));
  return notes;
}

}  // namespace syncscope
