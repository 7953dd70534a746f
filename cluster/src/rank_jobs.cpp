#include "syncscope/cluster/rank_jobs.hpp"

#include <sstream>

#include <fmt/format.h>

#include "common.hpp"
#include "syncscope/cluster/process.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/core/dir_handle.hpp"
#include "syncscope/core/dir_lock.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/reports/rank_printers.hpp"

namespace syncscope::cluster {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

constexpr const char* kRankJobManifest = "rank_job.json";
constexpr std::size_t kMaxRanksPerTask = 100000;

struct RankJob {
  std::string id;
  std::string source;
  std::string step_glob, layer_glob;
  std::size_t ranks_per_task = 1;
  std::size_t tasks = 0;
  std::string syncscope;
  std::vector<RankTraceFile> files;
  std::string job_name() const { return "syncscope-ranks-" + id.substr(0, 8); }
};

// Relative to OUT: every file under OUT is read and written beneath its descriptor.
fs::path part_path(std::size_t i, const char* ext) { return fs::path("parts") / fmt::format("part-{:05}.{}", i, ext); }

RankJob read_job(const fs::path& out) {
  const fs::path path = out / kRankJobManifest;
  SYNCSCOPE_INPUT_ERROR_IF(!detail::has_entry(out, kRankJobManifest),
                           out.string() + " holds no rank analysis job (no " + kRankJobManifest + ")");
  const auto j = detail::read_json(out, kRankJobManifest);
  RankJob job;
  try {
    SYNCSCOPE_INPUT_ERROR_IF(j.at("kind").get<std::string>() != "syncscope.rank_job",
                             path.string() + ": not a rank analysis job");
    SYNCSCOPE_INPUT_ERROR_IF(j.at("schema_version").get<int>() > kRankJobSchemaVersion,
                             path.string() + ": written by a newer syncscope");
    job.id = j.at("id").get<std::string>();
    job.source = j.at("source").get<std::string>();
    job.step_glob = j.at("step_range").get<std::string>();
    job.layer_glob = j.at("layer_range").get<std::string>();
    job.ranks_per_task = j.at("ranks_per_task").get<std::size_t>();
    job.tasks = j.at("tasks").get<std::size_t>();
    job.syncscope = j.at("syncscope").get<std::string>();
    for (const auto& f : j.at("files"))
      job.files.push_back({f.at("path").get<std::string>(), f.at("absolute").get<std::string>()});
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string() + ": malformed: " + e.what());
  }
  SYNCSCOPE_INPUT_ERROR_IF(job.ranks_per_task == 0 ||
                               job.tasks != (job.files.size() + job.ranks_per_task - 1) / job.ranks_per_task,
                           path.string() + ": tasks, files and ranks_per_task do not agree");
  return job;
}

std::vector<RankTraceFile> slice(const RankJob& job, std::size_t i) {
  const std::size_t a = i * job.ranks_per_task, b = std::min(job.files.size(), a + job.ranks_per_task);
  return {job.files.begin() + static_cast<std::ptrdiff_t>(a), job.files.begin() + static_cast<std::ptrdiff_t>(b)};
}

std::string file_list(const std::vector<RankTraceFile>& files) {
  std::string s;
  for (std::size_t i = 0; i < files.size() && i < 3; ++i) s += (i ? ", " : "") + files[i].path;
  if (files.size() > 3) s += fmt::format(" and {} more", files.size() - 3);
  return s;
}

}  // namespace

int start_rank_job(const RankJobRequest& r, std::ostream& out) {
  SYNCSCOPE_INPUT_ERROR_IF(r.out.empty(), "analyze: --out DIR is required for the job array layout");
  SYNCSCOPE_INPUT_ERROR_IF(r.ranks_per_task == 0 || r.ranks_per_task > kMaxRanksPerTask,
                           fmt::format("analyze: --ranks-per-task {}: expected 1..{}", r.ranks_per_task,
                                       kMaxRanksPerTask));
  if (r.slurm && !r.dry_run)
    SYNCSCOPE_INPUT_ERROR_IF(r.tools.sbatch.empty(),
                             "analyze --slurm: sbatch is not on PATH: run on a Slurm login node (Debian: "
                             "slurm-client), add --dry-run to only write the batch scripts, or leave out --slurm");
  validate_slurm_options(r.slurm_options);
  if (r.slurm) (void)detail::sbatch_path(fs::absolute(r.out).lexically_normal() / "slurm" / "logs");
  RankJob job;
  job.files = find_rank_traces(r.inputs);
  job.source = rank_source_label(r.inputs);
  job.step_glob = r.step_glob;
  job.layer_glob = r.layer_glob;
  job.ranks_per_task = r.ranks_per_task;
  job.tasks = (job.files.size() + r.ranks_per_task - 1) / r.ranks_per_task;
  job.syncscope = r.syncscope.string();
  std::string identity = job.step_glob + "\n" + job.layer_glob + "\n" + std::to_string(job.ranks_per_task) + "\n";
  for (const auto& f : job.files) identity += f.absolute.string() + "\n";
  job.id = detail::fnv1a_hex(identity);

  const fs::path dir = r.out;
  SYNCSCOPE_INPUT_ERROR_IF(detail::foreign_before_lock(dir, kRankJobManifest),
                           dir.string() +
                               " exists and holds no syncscope rank analysis: choose a new or empty "
                               "directory (nothing in it is replaced, even with --force)");
  // One writer per rank-analysis directory (core/dir_lock.hpp): a second one is refused
  // naming the first one's pid; a lock left by one that died is taken over, and said.
  const DirLock lock = DirLock::take(DirHandle::open(dir, true), DirLock::Mode::Exclusive, "rank analysis",
                                     [&out](const std::string& l) { out << "syncscope analyze: " << l << "\n"; });
  switch (detail::classify_dir(dir, kRankJobManifest)) {
    case detail::DirKind::Foreign:
      throw InputError(dir.string() +
                       " exists and holds no syncscope rank analysis: choose a new or empty directory "
                       "(nothing in it is replaced, even with --force)");
    case detail::DirKind::Ours: {
      SYNCSCOPE_INPUT_ERROR_IF(!r.force, dir.string() +
                                             " holds an earlier rank analysis: choose another --out, or "
                                             "pass --force to replace it");
      detail::check_only_ours(dir, {"parts", "slurm"},
                              {"parts/part-*.json", "parts/part-*.error", "slurm/*.sh", "slurm/jobs.json", "slurm/logs",
                               "slurm/logs/*"},
                              "an earlier rank analysis");
      {
        // Only files still as we wrote them (written_record.cpp): an edited summary is refused.
        std::vector<std::string> own = {"summary.json", "summary.csv", "summary.txt", "summary.error",
                                        kRankJobManifest};
        for (const auto& f : detail::files_under(dir, "parts")) own.push_back(f);
        for (const auto& f : detail::files_outside_slurm_logs(dir)) own.push_back(f);
        const auto changed = detail::changed_since_written(dir, own, 5);
        std::string list;
        for (const auto& c : changed) list += (list.empty() ? "" : ", ") + printable(c);
        SYNCSCOPE_INPUT_ERROR_IF(!changed.empty(), dir.string() +
                                                       ": --force would replace files that are not as the earlier "
                                                       "rank analysis wrote them: " +
                                                       list + "; move them away (or back), or choose another --out");
      }
      for (const char* f : {"parts", "summary.json", "summary.csv", "summary.txt", "summary.error", kRankJobManifest})
        detail::remove_entry(dir, f);  // links removed themselves, never followed
      // slurm/logs/ is Slurm's output (and maybe a user's files): kept; our scripts go.
      for (const auto& f : detail::files_outside_slurm_logs(dir)) detail::remove_entry(dir, f);
      break;
    }
    case detail::DirKind::Absent:
    case detail::DirKind::Empty: break;
  }
  (void)DirHandle::open(dir, true).sub("parts", true);
  ordered_json m;
  m["schema_version"] = kRankJobSchemaVersion;
  m["kind"] = "syncscope.rank_job";
  m["id"] = job.id;
  m["source"] = job.source;
  m["step_range"] = job.step_glob;
  m["layer_range"] = job.layer_glob;
  m["ranks_per_task"] = job.ranks_per_task;
  m["tasks"] = job.tasks;
  m["syncscope"] = job.syncscope;
  m["created_utc"] = utc_now_iso8601();
  m["files"] = ordered_json::array();
  for (const auto& f : job.files)
    m["files"].push_back(ordered_json{{"path", f.path}, {"absolute", f.absolute.string()}});
  detail::write_json(dir, kRankJobManifest, m);
  out << fmt::format("rank analysis {}: {} trace(s), {} per task: {} task(s) in {}\n", job.id, job.files.size(),
                     job.ranks_per_task, job.tasks, dir.string());

  if (!r.slurm) {
    if (r.dry_run) {
      for (std::size_t i = 0; i < job.tasks; ++i)
        out << shell_quote(job.syncscope) << " job rank-part " << shell_quote(fs::absolute(dir).string()) << " " << i
            << "\n";
      out << shell_quote(job.syncscope) << " job rank-merge " << shell_quote(fs::absolute(dir).string()) << "\n";
      return 0;
    }
    for (std::size_t i = 0; i < job.tasks; ++i) {
      try {
        run_rank_part(dir, i);
      } catch (const Error& e) {
        out << fmt::format("part {}: {}\n", i, e.what());  // the merge names it again, with the others
      }
    }
    write_rank_summary(dir, out);
    return 0;
  }

  const fs::path abs = fs::absolute(dir).lexically_normal();
  const fs::path logs = abs / "slurm" / "logs";
  (void)DirHandle::open(abs).sub("slurm/logs", true);
  detail::write_batch_script(abs, "slurm/part.sh", job.job_name(), logs, r.slurm_options, false, true,
                             {job.syncscope, "job", "rank-part", abs.string(), "$SLURM_ARRAY_TASK_ID"});
  detail::write_batch_script(abs, "slurm/merge.sh", job.job_name() + "-merge", logs, r.slurm_options, false, false,
                             {job.syncscope, "job", "rank-merge", abs.string()});
  const std::vector<std::string> opts = {fmt::format("--array=0-{}", job.tasks - 1)};
  if (r.dry_run) {
    std::string cmd;
    for (const auto& a : sbatch_command(opts, abs / "slurm" / "part.sh"))
      cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
    out << "JOB=$(" << cmd << ")\n";
    out << "sbatch --parsable \"--dependency=afterany:$JOB\" " << shell_quote((abs / "slurm" / "merge.sh").string())
        << "\n(dry run: nothing submitted; the lines above submit it)\n";
    return 0;
  }
  std::vector<std::size_t> indices(job.tasks);
  for (std::size_t i = 0; i < job.tasks; ++i) indices[i] = i;
  const std::string array_job = sbatch_submit(r.tools, opts, abs / "slurm" / "part.sh");
  detail::append_submission(dir, {array_job, "array", indices, "", {}, utc_now_iso8601()});
  const std::string merge_job =
      sbatch_submit(r.tools, {"--dependency=afterany:" + array_job}, abs / "slurm" / "merge.sh");
  detail::append_submission(dir, {merge_job, "final", {}, "", {array_job}, utc_now_iso8601()});
  out << fmt::format("submitted job array {} ({} task(s)) and merge job {}: it writes {}/summary.json, .csv and .txt\n",
                     array_job, job.tasks, merge_job, abs.string());
  return 0;
}

void run_rank_part(const fs::path& out, std::size_t index) {
  const RankJob job = read_job(out);
  SYNCSCOPE_INPUT_ERROR_IF(index >= job.tasks,
                           fmt::format("{}: the job has {} task(s); no task {}", out.string(), job.tasks, index));
  const auto files = slice(job, index);
  (void)DirHandle::open(out).sub("parts", true);
  detail::remove_entry(out, part_path(index, "error"));
  try {
    AnalysisOptions o;
    o.step_glob = job.step_glob;
    o.layer_glob = job.layer_glob;
    const auto rows = analyze_rank_files(files, o, usable_cores());
    ordered_json j;
    j["schema_version"] = kRankJobSchemaVersion;
    j["kind"] = "syncscope.rank_part";
    j["index"] = index;
    j["files"] = ordered_json::array();
    for (const auto& f : files) j["files"].push_back(f.path);
    j["rows"] = ordered_json::array();
    for (const auto& row : rows) j["rows"].push_back(rank_row_json(row));
    detail::write_json(out, part_path(index, "json"), j);
  } catch (const std::exception& e) {
    detail::write_text(out, part_path(index, "error"), std::string(e.what()) + "\n");
    throw;
  }
}

RankAnalysis merge_rank_parts(const fs::path& out) {
  const RankJob job = read_job(out);
  std::vector<RankRow> rows;
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < job.tasks; ++i) {
    const auto files = slice(job, i);
    const fs::path part = part_path(i, "json"), err = part_path(i, "error");
    const std::string what = fmt::format("part {} ({})", i, file_list(files));
    // A FIFO, device or link planted at a part is InputError naming it, never a hang.
    if (detail::has_entry(out, part)) {
      const auto j = detail::read_json(out, part);
      const std::string where = (out / part).string();
      std::vector<std::string> names;
      for (const auto& f : files) names.push_back(f.path);
      SYNCSCOPE_INPUT_ERROR_IF(!j.is_object() || j.value("files", std::vector<std::string>{}) != names,
                               where + ": its files are not the job's part " + std::to_string(i) +
                                   " (left from another job?)");
      SYNCSCOPE_INPUT_ERROR_IF(!j.contains("rows") || !j["rows"].is_array(), where + ": no rows[]");
      for (const auto& row : j["rows"]) rows.push_back(rank_row_from_json(row, where));
    } else if (detail::has_entry(out, err)) {
      std::string msg = printable(detail::read_text(out, err));
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      problems.push_back(what + " failed: " + msg);
    } else {
      problems.push_back(what + " wrote nothing (not run yet, or killed: see " + (out / "slurm" / "logs").string() +
                         ")");
    }
  }
  if (!problems.empty()) {
    std::string msg = fmt::format("{}: {} of {} part(s) have no rows: ", out.string(), problems.size(), job.tasks);
    for (std::size_t i = 0; i < problems.size() && i < 10; ++i) msg += (i ? "; " : "") + problems[i];
    if (problems.size() > 10) msg += fmt::format("; and {} more", problems.size() - 10);
    throw InputError(msg);
  }
  return summarize_ranks(std::move(rows), job.source, job.step_glob, job.layer_glob);
}

void write_rank_summary(const fs::path& out, std::ostream& log) {
  RankAnalysis a;
  try {
    a = merge_rank_parts(out);
  } catch (const Error& e) {
    detail::write_text(out, "summary.error", std::string(e.what()) + "\n");
    throw;
  }
  detail::remove_entry(out, "summary.error");
  std::ostringstream table;
  print_rank_table(a, table);
  detail::write_text(out, "summary.json", rank_analysis_to_json(a));
  detail::write_text(out, "summary.csv", rank_analysis_to_csv(a));
  detail::write_text(out, "summary.txt", table.str());
  log << table.str();
  log << fmt::format("wrote {}/summary.json, summary.csv and summary.txt\n", out.string());
}

void run_rank_part_locked(const fs::path& out, std::size_t index, std::ostream& log, int lock_wait_s) {
  (void)read_job(out);  // InputError naming what is wrong with OUT before any lock file is made
  const DirLock lock = DirLock::take(
      DirHandle::open(out), DirLock::Mode::Shared, "rank analysis",
      [&log](const std::string& l) { log << "syncscope job rank-part: " << l << "\n"; }, lock_wait_s);
  run_rank_part(out, index);
}

void write_rank_summary_locked(const fs::path& out, std::ostream& log) {
  (void)read_job(out);
  const DirLock lock =
      DirLock::take(DirHandle::open(out), DirLock::Mode::Exclusive, "rank analysis",
                    [&log](const std::string& l) { log << "syncscope job rank-merge: " << l << "\n"; });
  write_rank_summary(out, log);
}

}  // namespace syncscope::cluster
