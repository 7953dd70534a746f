// Per-rank rows and the cross-rank summary (definitions in ranks.hpp).
#include "syncscope/analysis/ranks.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"

namespace syncscope {

namespace {

// Ranks beyond this are not a job's ranks but a misread number (the largest jobs run tens
// of thousands of ranks); the bound keeps a typo from becoming a huge index.
constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;

std::optional<std::int64_t> parse_rank_text(std::string_view s) {
  std::int64_t v = 0;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || v < 0 || v > kMaxRank) return std::nullopt;
  return v;
}

Distribution over_steps(const std::vector<WindowStats>& steps, double (*metric)(const WindowStats&)) {
  std::vector<double> v;
  v.reserve(steps.size());
  for (const auto& s : steps) v.push_back(metric(s));
  return distribution(std::move(v));
}

}  // namespace

std::string_view metric_key(RankMetric m) {
  switch (m) {
    case RankMetric::StepTime: return "step_ns";
    case RankMetric::Syncs: return "syncs";
    case RankMetric::Blocked: return "blocked_ns";
    case RankMetric::Bubble: return "bubble_ns";
    case RankMetric::Busy: return "busy_ns";
    case RankMetric::Compute: return "compute_ns";
    case RankMetric::Communication: return "communication_ns";
  }
  return "?";
}

std::string_view metric_label(RankMetric m) {
  switch (m) {
    case RankMetric::StepTime: return "step time";
    case RankMetric::Syncs: return "sync points";
    case RankMetric::Blocked: return "blocked";
    case RankMetric::Bubble: return "bubble";
    case RankMetric::Busy: return "GPU busy";
    case RankMetric::Compute: return "compute";
    case RankMetric::Communication: return "communication";
  }
  return "?";
}

bool metric_is_time(RankMetric m) { return m != RankMetric::Syncs; }

double metric_value(const RankRow& r, RankMetric m) {
  switch (m) {
    case RankMetric::StepTime: return r.step_ns;
    case RankMetric::Syncs: return r.syncs;
    case RankMetric::Blocked: return r.blocked_ns;
    case RankMetric::Bubble: return r.bubble_ns;
    case RankMetric::Busy: return r.busy_ns;
    case RankMetric::Compute: return r.compute_ns;
    case RankMetric::Communication: return r.comm_ns;
  }
  return 0;
}

std::optional<std::int64_t> rank_from_metadata(const TraceMetadata& meta) {
  // The reader fills meta.rank from distributedInfo.rank; the raw object in meta.extra is
  // read too, for models built by hand or by other readers.
  if (meta.rank && *meta.rank >= 0 && *meta.rank <= kMaxRank) return *meta.rank;
  auto it = meta.extra.find("distributedInfo");
  if (it == meta.extra.end()) return std::nullopt;
  // Generous: a distributedInfo we cannot read is no rank (the file name may give one).
  const auto j = nlohmann::json::parse(it->second, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto r = j.find("rank");
  if (r == j.end()) return std::nullopt;
  if (r->is_number_integer()) {
    const auto v = r->get<std::int64_t>();
    if (v >= 0 && v <= kMaxRank) return v;
    return std::nullopt;
  }
  if (r->is_number_unsigned()) return std::nullopt;  // beyond int64: not a rank
  if (r->is_string()) return parse_rank_text(r->get<std::string>());
  return std::nullopt;
}

std::optional<std::int64_t> rank_from_file_name(std::string_view name) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  for (std::size_t i = 0; i + 4 <= name.size(); ++i) {
    if (!(lower(name[i]) == 'r' && lower(name[i + 1]) == 'a' && lower(name[i + 2]) == 'n' && lower(name[i + 3]) == 'k'))
      continue;
    if (i > 0 && std::isalpha(static_cast<unsigned char>(name[i - 1]))) continue;  // "frank3", "cranking"
    std::size_t j = i + 4;
    if (j < name.size() && (name[j] == '-' || name[j] == '_' || name[j] == '.')) ++j;
    std::size_t k = j;
    while (k < name.size() && std::isdigit(static_cast<unsigned char>(name[k]))) ++k;
    if (k == j) continue;
    if (auto r = parse_rank_text(name.substr(j, k - j))) return r;
  }
  return std::nullopt;
}

RankRow rank_row(const AnalysisResult& a, std::int64_t rank, std::string rank_from, std::string source) {
  RankRow r;
  r.rank = rank;
  r.rank_from = std::move(rank_from);
  r.source = std::move(source);
  r.steps = a.steps.size();
  const auto& t = a.totals;
  if (!a.steps.empty()) {
    r.step_ns = over_steps(a.steps, [](const WindowStats& w) { return static_cast<double>(w.duration_ns); }).median;
    r.syncs = over_steps(a.steps, [](const WindowStats& w) { return static_cast<double>(w.syncs.total); }).median;
    r.blocked_ns =
        over_steps(a.steps, [](const WindowStats& w) { return static_cast<double>(w.syncs.blocked_ns); }).median;
    r.bubble_ns =
        over_steps(a.steps, [](const WindowStats& w) { return static_cast<double>(w.syncs.bubble_ns); }).median;
    r.busy_ns = over_steps(a.steps, [](const WindowStats& w) { return static_cast<double>(w.gpu_busy_ns); }).median;
    r.compute_ns =
        over_steps(a.steps, [](const WindowStats& w) { return static_cast<double>(w.compute_kernel_ns); }).median;
    r.comm_ns = over_steps(a.steps, [](const WindowStats& w) { return static_cast<double>(w.comm.kernel_ns); }).median;
  } else {
    r.step_ns = static_cast<double>(t.duration_ns);
    r.syncs = static_cast<double>(t.syncs.total);
    r.blocked_ns = static_cast<double>(t.syncs.blocked_ns);
    r.bubble_ns = static_cast<double>(t.syncs.bubble_ns);
    r.busy_ns = static_cast<double>(t.gpu_busy_ns);
    r.compute_ns = static_cast<double>(t.compute_kernel_ns);
    r.comm_ns = static_cast<double>(t.comm.kernel_ns);
  }
  r.span_ns = t.duration_ns;
  r.sync_points = t.syncs.total;
  r.gpu_busy_ns = t.gpu_busy_ns;
  r.compute_kernel_ns = t.compute_kernel_ns;
  r.comm_kernel_ns = t.comm.kernel_ns;
  r.comm_kernels = t.comm.kernels;
  r.comm_overlapped_ns = t.comm.overlapped_ns;
  r.comm_overlap_fraction = t.comm.overlap_fraction;
  r.devices = t.gpu_busy_by_device.size();
  if (!a.worst.empty()) r.top_cause = a.worst.front().cause;
  r.warnings = a.warnings;
  if (a.steps.empty()) r.warnings.push_back("no step ranges: this rank's per-step figures are over the whole trace");
  return r;
}

namespace {

// The ranks that reached their collectives last (definition in ranks.hpp): the least
// communication time per step waits least for the others.
std::vector<RankStraggler> stragglers_of(const std::vector<RankRow>& rs, double step_median) {
  std::vector<RankStraggler> out;
  if (rs.size() < 2) return out;
  double most = 0;
  for (const auto& r : rs) most = std::max(most, r.comm_ns);
  if (most <= 0) return out;
  for (const auto& r : rs)
    if (r.comm_ns < most)
      out.push_back({r.rank, r.comm_ns, most - r.comm_ns, step_median > 0 ? (most - r.comm_ns) / step_median : 0});
  // Rows are by rank, so a stable sort keeps the lowest rank first on ties.
  std::stable_sort(out.begin(), out.end(),
                   [](const RankStraggler& a, const RankStraggler& b) { return a.late_ns > b.late_ns; });
  if (out.size() > kStragglerCandidates) out.resize(kStragglerCandidates);
  return out;
}

RankAnalysis summarize_job(std::vector<RankRow> rows, std::string source, std::string step_glob,
                           std::string layer_glob) {
  RankAnalysis out;
  out.source = std::move(source);
  out.step_glob = std::move(step_glob);
  out.layer_glob = std::move(layer_glob);
  std::stable_sort(rows.begin(), rows.end(), [](const RankRow& x, const RankRow& y) { return x.rank < y.rank; });
  for (std::size_t i = 1; i < rows.size(); ++i)
    SYNCSCOPE_INPUT_ERROR_IF(rows[i].rank == rows[i - 1].rank, rows[i - 1].source + " and " + rows[i].source +
                                                                   " both claim rank " + std::to_string(rows[i].rank) +
                                                                   " (" + rows[i - 1].rank_from + ", " +
                                                                   rows[i].rank_from + "): pass one trace per rank");
  out.ranks = std::move(rows);
  const auto& rs = out.ranks;
  if (rs.empty()) return out;

  for (RankMetric m : kRankMetrics) {
    RankSpread s;
    s.metric = m;
    std::vector<double> v;
    v.reserve(rs.size());
    for (const auto& r : rs) v.push_back(metric_value(r, m));
    const Distribution d = distribution(v);
    s.min = d.min;
    s.median = d.median;
    s.max = d.max;
    for (const auto& r : rs) {  // rows are by rank: the first hit is the lowest rank
      if (s.min_rank < 0 && metric_value(r, m) == d.min) s.min_rank = r.rank;
      if (s.max_rank < 0 && metric_value(r, m) == d.max) s.max_rank = r.rank;
    }
    out.spreads.push_back(s);
  }

  // The rank that stands out, in time: each time metric's distance from its median, as a
  // fraction of the median step time (so 300 us of extra compute in a 1 ms step is 0.30).
  const double step_median = out.spreads.front().median;
  if (rs.size() >= 3 && step_median > 0) {
    std::optional<RankStandout> best;
    for (const auto& s : out.spreads) {
      if (!metric_is_time(s.metric)) continue;
      for (const auto& r : rs) {
        const double v = metric_value(r, s.metric);
        const double dev = (v - s.median) / step_median;
        if (!best || std::abs(dev) > std::abs(best->deviation)) best = RankStandout{r.rank, s.metric, v, s.median, dev};
      }
    }
    if (best && std::abs(best->deviation) >= kStandoutThreshold) out.standout = best;
  }

  // Ranks are 0..world_size-1: a gap means a rank's trace is missing from the set.
  std::vector<std::int64_t> missing;
  std::int64_t expect = 0;
  for (const auto& r : rs) {
    for (; expect < r.rank && missing.size() < 10; ++expect) missing.push_back(expect);
    expect = r.rank + 1;
  }
  if (!missing.empty()) {
    std::string list;
    for (auto m : missing) list += (list.empty() ? "" : ", ") + std::to_string(m);
    out.warnings.push_back("no trace for rank(s) " + list + (missing.size() >= 10 ? ", ..." : "") + " below rank " +
                           std::to_string(rs.back().rank));
  }
  std::uint64_t without_steps = 0;
  for (const auto& r : rs) without_steps += r.steps == 0 ? 1 : 0;
  if (without_steps > 0)
    out.warnings.push_back(std::to_string(without_steps) + " of " + std::to_string(rs.size()) +
                           " ranks have no range matching '" + out.step_glob +
                           "': their per-step figures are over the whole trace");
  out.stragglers = stragglers_of(rs, step_median);
  out.world_size = rs.front().world_size;
  return out;
}

}  // namespace

RankAnalysis summarize_ranks(std::vector<RankRow> rows, std::string source, std::string step_glob,
                             std::string layer_glob) {
  std::vector<std::int64_t> sizes;
  for (const auto& r : rows) sizes.push_back(r.world_size);
  if (!several_jobs(sizes)) {
    RankAnalysis one = summarize_job(std::move(rows), std::move(source), std::move(step_glob), std::move(layer_glob));
    for (const auto& r : one.ranks)
      if (r.world_size != one.world_size) one.world_size = 0;  // some trace did not record it
    return one;
  }
  // Several jobs: each summarized on its own, by world size; nothing compared across them.
  std::map<std::int64_t, std::vector<RankRow>> by_job;
  for (auto& r : rows) by_job[r.world_size].push_back(std::move(r));
  RankAnalysis out;
  out.source = source;
  out.step_glob = step_glob;
  out.layer_glob = layer_glob;
  std::string names;
  for (auto& [w, job_rows] : by_job) {
    names += (names.empty() ? "" : "; ") + (w > 0 ? "world size " + std::to_string(w) : std::string("no world size")) +
             ": " + std::to_string(job_rows.size()) + " trace(s)";
    out.jobs.push_back(summarize_job(std::move(job_rows), source, step_glob, layer_glob));
    out.jobs.back().world_size = w;
  }
  out.warnings.push_back("these traces come from " + std::to_string(by_job.size()) +
                         " different jobs (distributedInfo.world_size differs: " + names +
                         "): each job is summarized on its own, nothing is merged or compared across jobs");
  return out;
}

std::int64_t world_size_from_metadata(const TraceMetadata& meta) {
  auto it = meta.extra.find("distributedInfo");
  if (it == meta.extra.end()) return 0;
  const auto j = nlohmann::json::parse(it->second, nullptr, false);
  if (!j.is_object()) return 0;
  const auto w = j.find("world_size");
  if (w == j.end()) return 0;
  std::optional<std::int64_t> v;
  if (w->is_number_integer()) v = w->get<std::int64_t>();
  if (w->is_string()) v = parse_rank_text(w->get<std::string>());
  return v && *v > 0 && *v <= kMaxRank + 1 ? *v : 0;
}

bool several_jobs(const std::vector<std::int64_t>& world_sizes) {
  std::int64_t seen = 0;
  for (auto w : world_sizes) {
    if (w <= 0) continue;
    if (seen > 0 && w != seen) return true;
    seen = w;
  }
  return false;
}

}  // namespace syncscope
