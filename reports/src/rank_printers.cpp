#include "syncscope/reports/rank_printers.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rank_distribution.hpp"
#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/units.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope {

using nlohmann::ordered_json;

namespace {

std::string number(double v) { return fmt::format("{}", v); }

// A metric's value as people read it: a duration, or a count with up to 2 decimals.
std::string show(RankMetric m, double v) {
  if (metric_is_time(m)) return format_duration(static_cast<Ns>(std::llround(v)));
  return fmt::format("{:g}", std::round(v * 100) / 100);
}

void print_rows_and_spreads(const RankAnalysis& a, std::ostream& out);
void print_standout_and_warnings(const RankAnalysis& a, std::ostream& out);
void print_stragglers(const RankAnalysis& a, std::ostream& out);

std::string percent(double f) { return fmt::format("{:.1f}%", 100.0 * f); }

std::string shorten_left(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  return "..." + s.substr(s.size() - (width - 3));
}

// Typed field access with the file and field in the message.
const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& where) {
  SYNCSCOPE_INPUT_ERROR_IF(!j.is_object(), where + ": expected an object");
  auto it = j.find(key);
  SYNCSCOPE_INPUT_ERROR_IF(it == j.end(), where + ": field \"" + key + "\" is missing");
  return *it;
}

template <class T>
T get(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = field(j, key, where);
  try {
    return v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(where + ": field \"" + key + "\" has the wrong type (" + v.type_name() + ")");
  }
}

}  // namespace

ordered_json rank_row_json(const RankRow& r) {
  ordered_json j;
  j["rank"] = r.rank;
  j["rank_from"] = r.rank_from;
  j["source"] = r.source;
  j["steps"] = r.steps;
  ordered_json per;
  for (RankMetric m : kRankMetrics) per[std::string(metric_key(m))] = metric_value(r, m);
  j["per_step"] = std::move(per);
  j["trace"] = ordered_json{{"span_ns", r.span_ns},
                            {"sync_points", r.sync_points},
                            {"gpu_busy_ns", r.gpu_busy_ns},
                            {"compute_kernel_ns", r.compute_kernel_ns},
                            {"communication", ordered_json{{"kernel_ns", r.comm_kernel_ns},
                                                           {"kernels", r.comm_kernels},
                                                           {"overlapped_ns", r.comm_overlapped_ns},
                                                           {"overlap_fraction", r.comm_overlap_fraction}}},
                            {"devices", r.devices}};
  j["world_size"] = r.world_size;
  j["top_cause"] = r.top_cause;
  j["warnings"] = r.warnings;
  return j;
}

RankRow rank_row_from_json(const nlohmann::json& j, const std::string& where) {
  RankRow r;
  r.rank = get<std::int64_t>(j, "rank", where);
  const std::string w = where + " (rank " + std::to_string(r.rank) + ")";
  r.rank_from = get<std::string>(j, "rank_from", w);
  r.source = get<std::string>(j, "source", w);
  r.steps = get<std::uint64_t>(j, "steps", w);
  const auto& per = field(j, "per_step", w);
  r.step_ns = get<double>(per, "step_ns", w + " per_step");
  r.syncs = get<double>(per, "syncs", w + " per_step");
  r.blocked_ns = get<double>(per, "blocked_ns", w + " per_step");
  r.bubble_ns = get<double>(per, "bubble_ns", w + " per_step");
  r.busy_ns = get<double>(per, "busy_ns", w + " per_step");
  r.compute_ns = get<double>(per, "compute_ns", w + " per_step");
  r.comm_ns = get<double>(per, "communication_ns", w + " per_step");
  const auto& t = field(j, "trace", w);
  r.span_ns = get<Ns>(t, "span_ns", w + " trace");
  r.sync_points = get<std::uint64_t>(t, "sync_points", w + " trace");
  r.gpu_busy_ns = get<Ns>(t, "gpu_busy_ns", w + " trace");
  r.compute_kernel_ns = get<Ns>(t, "compute_kernel_ns", w + " trace");
  const auto& c = field(t, "communication", w + " trace");
  r.comm_kernel_ns = get<Ns>(c, "kernel_ns", w + " trace.communication");
  r.comm_kernels = get<std::uint64_t>(c, "kernels", w + " trace.communication");
  r.comm_overlapped_ns = get<Ns>(c, "overlapped_ns", w + " trace.communication");
  r.comm_overlap_fraction = get<double>(c, "overlap_fraction", w + " trace.communication");
  r.devices = get<std::uint64_t>(t, "devices", w + " trace");
  if (j.contains("world_size")) r.world_size = get<std::int64_t>(j, "world_size", w);  // absent before the field
  r.top_cause = get<std::string>(j, "top_cause", w);
  r.warnings = get<std::vector<std::string>>(j, "warnings", w);
  return r;
}

namespace {

// One job's summary: its ranks, spreads, standout, stragglers and warnings.
void job_json(const RankAnalysis& a, ordered_json& j) {
  j["world_size"] = a.world_size;
  j["ranks"] = ordered_json::array();
  for (const auto& r : a.ranks) j["ranks"].push_back(rank_row_json(r));
  ordered_json across = ordered_json::object();
  for (const auto& s : a.spreads)
    across[std::string(metric_key(s.metric))] = ordered_json{
        {"min", s.min}, {"median", s.median}, {"max", s.max}, {"min_rank", s.min_rank}, {"max_rank", s.max_rank}};
  j["across_ranks"] = std::move(across);
  if (a.standout)
    j["standout"] = ordered_json{{"rank", a.standout->rank},
                                 {"metric", std::string(metric_key(a.standout->metric))},
                                 {"value", a.standout->value},
                                 {"median", a.standout->median},
                                 {"deviation", a.standout->deviation}};
  else j["standout"] = nullptr;
  j["stragglers"] = ordered_json::array();
  for (const auto& s : a.stragglers)
    j["stragglers"].push_back(ordered_json{
        {"rank", s.rank}, {"communication_ns", s.comm_ns}, {"late_ns", s.late_ns}, {"late_fraction", s.late_fraction}});
}

}  // namespace

std::string rank_analysis_to_json(const RankAnalysis& a, int indent) {
  ordered_json j;
  j["schema_version"] = a.schema_version;
  j["kind"] = "syncscope.rank_analysis";
  j["source"] = a.source;
  j["options"] = ordered_json{{"step_range", a.step_glob}, {"layer_range", a.layer_glob}};
  job_json(a, j);
  j["jobs"] = ordered_json::array();
  for (const auto& job : a.jobs) {
    ordered_json jj;
    job_json(job, jj);
    jj["warnings"] = job.warnings;
    j["jobs"].push_back(std::move(jj));
  }
  j["warnings"] = a.warnings;
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// One job's rows; `job` is its world size ("" when not recorded), the last column.
void job_csv(const RankAnalysis& a, const std::string& version, CsvWriter& csv) {
  const std::string job = a.world_size > 0 ? std::to_string(a.world_size) : "";
  for (const auto& r : a.ranks) {
    const std::string rank = std::to_string(r.rank);
    auto row = [&](const std::string& metric, const std::string& value) {
      csv.row({"rank", rank, metric, value, version, job});  // printed-name-ok: metric keys and numbers
    };
    for (RankMetric m : kRankMetrics) row(std::string(metric_key(m)), number(metric_value(r, m)));
    row("steps", std::to_string(r.steps));
    row("trace.span_ns", std::to_string(r.span_ns));
    row("trace.sync_points", std::to_string(r.sync_points));
    row("trace.gpu_busy_ns", std::to_string(r.gpu_busy_ns));
    row("trace.compute_kernel_ns", std::to_string(r.compute_kernel_ns));
    row("trace.communication.kernel_ns", std::to_string(r.comm_kernel_ns));
    row("trace.communication.kernels", std::to_string(r.comm_kernels));
    row("trace.communication.overlapped_ns", std::to_string(r.comm_overlapped_ns));
    row("trace.communication.overlap_fraction", number(r.comm_overlap_fraction));
  }
  for (const auto& s : a.spreads) {
    const std::string metric(metric_key(s.metric));
    auto row = [&](const char* kind, const std::string& value) {
      csv.row({kind, "", metric, value, version, job});  // printed-name-ok: our metric keys and numbers
    };
    row("min", number(s.min));
    row("median", number(s.median));
    row("max", number(s.max));
    row("min_rank", std::to_string(s.min_rank));
    row("max_rank", std::to_string(s.max_rank));
  }
  if (a.standout)
    csv.row({"standout", std::to_string(a.standout->rank), std::string(metric_key(a.standout->metric)) + ".deviation",
             number(a.standout->deviation), version, job});
  for (const auto& s : a.stragglers) {
    const std::string rank = std::to_string(s.rank);
    csv.row({"straggler", rank, "communication_ns", number(s.comm_ns), version, job});
    csv.row({"straggler", rank, "late_ns", number(s.late_ns), version, job});
    csv.row({"straggler", rank, "late_fraction", number(s.late_fraction), version, job});
  }
}

}  // namespace

std::string rank_analysis_to_csv(const RankAnalysis& a) {
  CsvWriter csv;
  const std::string version = std::to_string(a.schema_version);
  csv.row({"kind", "rank", "metric", "value", "schema_version", "world_size"});
  job_csv(a, version, csv);
  for (const auto& job : a.jobs) job_csv(job, version, csv);
  return csv.str();
}

void print_rank_table(const RankAnalysis& a, std::ostream& out) {
  if (!a.jobs.empty()) {
    // Several jobs: named apart, each its own table (analysis/ranks.hpp); nothing across them.
    out << fmt::format("syncscope analysis of {} jobs: {}\n", a.jobs.size(), printable(a.source));
    for (const auto& w : a.warnings) out << "  ! " << printable(w) << "\n";
    for (const auto& job : a.jobs) {
      out << "\n== job: "
          << (job.world_size > 0 ? fmt::format("world size {}", job.world_size) : std::string("no world size recorded"))
          << "\n";
      print_rank_table(job, out);
    }
    return;
  }
  out << fmt::format("syncscope analysis of {} ranks: {}\n", a.ranks.size(), printable(a.source));
  out << fmt::format("  per step: median over each rank's '{}' ranges\n", printable(a.step_glob));
  if (a.ranks.size() > reports_detail::kRankTableMaxRows) {
    reports_detail::print_rank_distribution(a, out);
  } else {
    print_rows_and_spreads(a, out);
  }
  print_stragglers(a, out);
  print_standout_and_warnings(a, out);
}

namespace {

void print_rows_and_spreads(const RankAnalysis& a, std::ostream& out) {
  out << "\n";
  out << fmt::format("{:>6} {:>6} {:>11} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8}  {}\n", "rank", "steps", "step",
                     "syncs", "blocked", "bubble", "GPU busy", "compute", "comm", "overlap", "trace");
  for (const auto& r : a.ranks) {
    out << fmt::format("{:>6} {:>6} {:>11} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8}  {}\n", r.rank, r.steps,
                       show(RankMetric::StepTime, r.step_ns), show(RankMetric::Syncs, r.syncs),
                       show(RankMetric::Blocked, r.blocked_ns), show(RankMetric::Bubble, r.bubble_ns),
                       show(RankMetric::Busy, r.busy_ns), show(RankMetric::Compute, r.compute_ns),
                       show(RankMetric::Communication, r.comm_ns),
                       r.comm_kernels > 0 ? percent(r.comm_overlap_fraction) : std::string("-"),
                       shorten_left(printable(r.source), 40));
  }
  if (!a.spreads.empty()) {
    out << fmt::format("\nacross ranks (per step){:>6}{:>22}{:>14}{:>22}\n", "", "min (rank)", "median", "max (rank)");
    for (const auto& s : a.spreads) {
      out << fmt::format("  {:<26}{:>22}{:>14}{:>22}\n", metric_label(s.metric),
                         fmt::format("{} ({})", show(s.metric, s.min), s.min_rank), show(s.metric, s.median),
                         fmt::format("{} ({})", show(s.metric, s.max), s.max_rank));
    }
  }
}

// Potential stragglers (analysis/ranks.hpp): the ranks that waited least in their collectives.
void print_stragglers(const RankAnalysis& a, std::ostream& out) {
  if (a.stragglers.empty()) return;
  out << "\npotential stragglers (reach their collectives last: least communication time per step)\n";
  out << fmt::format("  {:>6} {:>11} {:>11} {:>8}\n", "rank", "comm", "late by", "of step");
  for (const auto& s : a.stragglers)
    out << fmt::format("  {:>6} {:>11} {:>11} {:>8}\n", s.rank, show(RankMetric::Communication, s.comm_ns),
                       show(RankMetric::Communication, s.late_ns), percent(s.late_fraction));
}

void print_standout_and_warnings(const RankAnalysis& a, std::ostream& out) {
  out << "\n";
  if (a.standout) {
    const auto& s = *a.standout;
    out << fmt::format("stands out: rank {}, {} {} per step against a median of {} ({:+.0f}% of a step)\n", s.rank,
                       metric_label(s.metric), show(s.metric, s.value), show(s.metric, s.median), 100.0 * s.deviation);
  } else if (a.ranks.size() >= 3) {
    out << fmt::format("no rank stands out (every metric within {:.0f}% of a step of its median)\n",
                       100.0 * kStandoutThreshold);
  } else {
    out << "no rank stands out (it takes at least 3 ranks to tell)\n";
  }
  std::size_t rank_warnings = 0;
  for (const auto& r : a.ranks) rank_warnings += r.warnings.size();
  if (!a.warnings.empty() || rank_warnings > 0) {
    out << "\nwarnings\n";
    for (const auto& w : a.warnings) out << "  ! " << printable(w) << "\n";
    std::size_t shown = 0;
    for (const auto& r : a.ranks)
      for (const auto& w : r.warnings)
        if (shown++ < 6) out << fmt::format("  ! rank {}: {}\n", r.rank, printable(w));
    if (shown > 6) out << fmt::format("  ... and {} more (--format json lists all)\n", shown - 6);
  }
}

}  // namespace

}  // namespace syncscope
