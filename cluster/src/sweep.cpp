// The sweep's plan, its directory, and running or submitting its tasks.
#include "syncscope/cluster/sweep.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common.hpp"
#include "syncscope/cluster/process.hpp"
#include "syncscope/core/dir_handle.hpp"
#include "syncscope/core/dir_lock.hpp"
#include "syncscope/core/dir_manifest.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/pipeline/results_dir.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::cluster {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

constexpr const char* kManifest = "sweep.json";
constexpr std::size_t kMaxTaskNameBytes = 200;

// A directory name from a label: letters, digits, '.', '_' and '-' kept, the rest '_'.
std::string safe_label(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  while (!out.empty() && out.front() == '.') out.erase(out.begin());  // no hidden names
  return out.empty() ? "_" : out;
}

std::string profile_label(const std::string& p) {
  // A file path names the profile by its stem ("profiles/h200-calibrated.yaml" -> h200-calibrated).
  if (p.find('/') != std::string::npos || p.find('.') != std::string::npos) return fs::path(p).stem().string();
  return p;
}

ordered_json task_json(const SweepTask& t) {
  return ordered_json{{"index", t.index},
                      {"name", t.name},
                      {"scenario", t.scenario},
                      {"scenario_hash", t.scenario_hash},
                      {"target", ordered_json{{"label", t.target.label},
                                              {"constraint", t.target.constraint},
                                              {"gpu_profile", t.target.gpu_profile}}}};
}

void write_status(const fs::path& dir, const SweepTask& t, const std::string& state, const std::string& reason,
                  const std::string& started, const std::string& ended, const ProcessResult* exit) {
  ordered_json j;
  j["schema_version"] = kSweepSchemaVersion;
  j["kind"] = "syncscope.sweep_task_status";
  j["task"] = t.name;
  j["index"] = t.index;
  j["state"] = state;
  j["reason"] = reason;
  j["job"] = detail::current_job_id();
  j["host"] = detail::host_name();
  j["pid"] = static_cast<std::int64_t>(::getpid());  // with host: tells a live local task from a lost one
  j["started_utc"] = started;
  j["ended_utc"] = ended;
  if (exit && exit->started) j["exit"] = ordered_json{{"code", exit->exit_code}, {"signal", exit->signal}};
  detail::write_json(dir, fs::path("status") / (t.name + ".json"), j);
}

// True when DIR/tasks/ENTRY is a partial directory a run made: a real directory (not a
// link) holding run's marker file (core/output_policy.hpp), whose first line is its own.
// Anything else named like one (a user's file, a directory without the marker) is not ours.
bool is_our_partial(const DirHandle& tasks, const std::string& entry) {
  struct stat st {};
  if (!tasks.stat(entry, st) || !S_ISDIR(st.st_mode)) return false;
  const fs::path marker = fs::path(entry) / kPartialMarker;
  if (!tasks.stat(marker, st) || !S_ISREG(st.st_mode)) return false;
  try {
    return tasks.read(marker, 4096).rfind("syncscope partial results v1\n", 0) == 0;
  } catch (const InputError&) {
    return false;
  }
}

// NAME.partial-* entries in DIR/tasks that a cut-short run of NAME left (is_our_partial).
std::vector<std::string> our_partials(const fs::path& dir, const std::string& name) {
  std::vector<std::string> found;
  if (!detail::has_directory(dir, "tasks")) return found;
  const DirHandle tasks = DirHandle::open(dir).sub("tasks", false);
  const std::string prefix = name + ".partial-";
  for (const auto& n : tasks.list())
    if (n.rfind(prefix, 0) == 0 && is_our_partial(tasks, n)) found.push_back(n);
  return found;
}

}  // namespace

SweepPlan plan_sweep(const SweepRequest& r) {
  SYNCSCOPE_INPUT_ERROR_IF(r.scenarios.empty(), "sweep: name at least one scenario file");
  SYNCSCOPE_INPUT_ERROR_IF(!r.gpu_profiles.empty() && !r.constraints.empty() &&
                               r.gpu_profiles.size() != r.constraints.size(),
                           fmt::format("sweep: {} --gpu-profile and {} --constraint values: give one profile per "
                                       "constraint (they pair up, in order), or only one of the two lists",
                                       r.gpu_profiles.size(), r.constraints.size()));
  SYNCSCOPE_INPUT_ERROR_IF(r.device != "auto" && r.device != "cuda" && r.device != "sim",
                           "sweep: --device " + r.device + ": expected auto, cuda or sim");
  for (const auto& c : r.constraints) validate_constraint(c);
  SweepPlan plan;
  plan.device = r.device;
  plan.syncscope = r.syncscope.string();
  plan.created_utc = utc_now_iso8601();

  std::vector<SweepTarget> targets;
  const std::size_t n = std::max({r.gpu_profiles.size(), r.constraints.size(), std::size_t{1}});
  for (std::size_t i = 0; i < n; ++i) {
    SweepTarget t;
    if (i < r.constraints.size()) t.constraint = r.constraints[i];
    if (i < r.gpu_profiles.size()) {
      t.gpu_profile = r.gpu_profiles[i];
      (void)model::load_gpu_profile(t.gpu_profile);  // InputError naming it when unknown or bad
    }
    t.label = safe_label(!t.constraint.empty()    ? t.constraint
                         : !t.gpu_profile.empty() ? profile_label(t.gpu_profile)
                                                  : "default");
    targets.push_back(std::move(t));
  }
  std::set<std::string> labels;
  for (const auto& t : targets)
    SYNCSCOPE_INPUT_ERROR_IF(!labels.insert(t.label).second,
                             "sweep: two GPU targets are both named '" + t.label + "': give each target once");

  std::set<std::string> stems;
  std::string identity = "device=" + r.device + "\n";
  for (const auto& s : r.scenarios) {
    (void)scenario::load_scenario(s);  // InputError with file:line:column when it is bad
    const std::string stem = safe_label(fs::path(s).stem().string());
    SYNCSCOPE_INPUT_ERROR_IF(!stems.insert(stem).second,
                             "sweep: two scenario files are named '" + stem + "' (" + s +
                                 "): task directories are named after the file; rename one");
    const std::string hash = detail::fnv1a_hex(read_file(s));
    for (const auto& t : targets) {
      SweepTask task;
      task.index = plan.tasks.size();
      task.name = stem + "--" + t.label;
      // tasks/NAME.partial-PID-XXXXXX and the temporary ".NAME.json.tmpPID-N" add up to 28
      // bytes, and one file name holds at most 255 (NAME_MAX): refused here, not at write.
      SYNCSCOPE_INPUT_ERROR_IF(task.name.size() > kMaxTaskNameBytes,
                               fmt::format("sweep: {}: the task name '{}' is {} bytes; at most {} are allowed: the "
                                           "task's directory, log and status file are named after the scenario file "
                                           "and the GPU target (plus up to 28 bytes while written), and a file name "
                                           "holds at most 255 bytes: give the scenario file a shorter name",
                                           printable(s), printable(task.name), task.name.size(), kMaxTaskNameBytes));
      task.scenario = fs::absolute(s).lexically_normal().string();
      task.scenario_hash = hash;
      task.target = t;
      identity += task.name + "|" + hash + "|" + t.constraint + "|" + t.gpu_profile + "\n";  // printed-name-ok
      plan.tasks.push_back(std::move(task));
    }
  }
  plan.id = detail::fnv1a_hex(identity);
  return plan;
}

std::string plan_to_json(const SweepPlan& p) {
  ordered_json j;
  j["schema_version"] = p.schema_version;
  j["kind"] = "syncscope.sweep";
  j["id"] = p.id;
  j["device"] = p.device;
  j["syncscope"] = p.syncscope;
  j["created_utc"] = p.created_utc;
  j["tasks"] = ordered_json::array();
  for (const auto& t : p.tasks) j["tasks"].push_back(task_json(t));
  return j.dump(2) + "\n";
}

SweepPlan read_plan(const fs::path& dir) {
  const fs::path path = dir / kManifest;
  SYNCSCOPE_INPUT_ERROR_IF(!detail::has_entry(dir, kManifest), dir.string() + " holds no sweep (no " + kManifest + ")");
  const auto j = detail::read_json(dir, kManifest);
  SweepPlan p;
  try {
    SYNCSCOPE_INPUT_ERROR_IF(j.at("kind").get<std::string>() != "syncscope.sweep", path.string() + ": not a sweep");
    p.schema_version = j.at("schema_version").get<int>();
    SYNCSCOPE_INPUT_ERROR_IF(p.schema_version > kSweepSchemaVersion,
                             path.string() + ": written by a newer syncscope (schema_version " +
                                 std::to_string(p.schema_version) + ")");
    p.id = j.at("id").get<std::string>();
    p.device = j.at("device").get<std::string>();
    p.syncscope = j.at("syncscope").get<std::string>();
    p.created_utc = j.at("created_utc").get<std::string>();
    for (const auto& t : j.at("tasks")) {
      SweepTask x;
      x.index = t.at("index").get<std::size_t>();
      x.name = t.at("name").get<std::string>();
      x.scenario = t.at("scenario").get<std::string>();
      x.scenario_hash = t.at("scenario_hash").get<std::string>();
      const auto& g = t.at("target");
      x.target.label = g.at("label").get<std::string>();
      x.target.constraint = g.at("constraint").get<std::string>();
      x.target.gpu_profile = g.at("gpu_profile").get<std::string>();
      SYNCSCOPE_INPUT_ERROR_IF(x.index != p.tasks.size(), path.string() + ": task indices are not 0..N-1");
      // Two tasks of one name would run into one directory, one status file, one log.
      for (const auto& earlier : p.tasks)
        SYNCSCOPE_INPUT_ERROR_IF(earlier.name == x.name,
                                 fmt::format("{}: tasks {} and {} are both named '{}': each "
                                             "task needs its own name (its directory)",
                                             path.string(), earlier.index, x.index, printable(x.name)));
      SYNCSCOPE_INPUT_ERROR_IF(x.name != safe_label(x.name) || x.name.find("..") != std::string::npos,
                               path.string() + ": task name '" + x.name + "' is not a plain directory name");
      // What becomes an argument of `syncscope run` is a path or a name, never an option.
      SYNCSCOPE_INPUT_ERROR_IF(x.scenario.empty() || x.scenario.front() != '/',
                               path.string() + ": task " + x.name + ": scenario is not an absolute path");
      SYNCSCOPE_INPUT_ERROR_IF(!x.target.gpu_profile.empty() && x.target.gpu_profile.front() == '-',
                               path.string() + ": task " + x.name + ": gpu_profile starts with '-'");
      if (!x.target.constraint.empty()) validate_constraint(x.target.constraint);
      p.tasks.push_back(std::move(x));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string() + ": malformed: " + e.what());
  }
  return p;
}

namespace {

// One task, the sweep's lock held by the caller (start_sweep: exclusive; run_sweep_task:
// shared).
int run_task_locked(const fs::path& dir, std::size_t index, const fs::path& syncscope, std::ostream& out) {
  const SweepPlan plan = read_plan(dir);
  SYNCSCOPE_INPUT_ERROR_IF(index >= plan.tasks.size(),
                           fmt::format("{}: the sweep has {} tasks (0..{}); no task {}", dir.string(),
                                       plan.tasks.size(), plan.tasks.size() - 1, index));
  const SweepTask& t = plan.tasks[index];
  const fs::path tasks = dir / "tasks", result = tasks / t.name;
  // Real directories, not links (InputError naming a link): `run --out` below follows links.
  const DirHandle root = DirHandle::open(dir);
  (void)root.sub("tasks", true);
  (void)root.sub("logs", true);
  const std::string started = utc_now_iso8601();
  struct stat lst {};
  if (root.stat(fs::path("tasks") / t.name, lst)) {
    if (S_ISDIR(lst.st_mode) && root.exists(fs::path("tasks") / t.name / "results.json")) {
      const auto st = sweep_status(dir, {});
      if (st[index].state == TaskState::Done) {
        out << printable(t.name) << ": already done\n";
        return 0;
      }
      // A writer that died after its run published tasks/NAME and before it wrote "done"
      // (its status says running, by a process of this host that is gone): the directory is
      // the run's own (its manifest matches, file by file), so it is run again, and said.
      if (st[index].state == TaskState::Lost && (st[index].job == "local" || st[index].job.empty()) &&
          root.exists(fs::path("tasks") / t.name / kRunManifest) &&
          dir_manifest_mismatches(result, kRunManifest, 1).empty()) {
        root.remove(fs::path("tasks") / t.name);
        out << printable(t.name) << ": removed " << printable(result.string())
            << ": the writer that published it is gone before it wrote the task's status; running it again\n";
      }
    }
  }
  if (root.stat(fs::path("tasks") / t.name, lst)) {
    const std::string why = result.string() +
                            " exists but no status of this sweep says this task wrote it: move it away, then "
                            "re-run the sweep";
    write_status(dir, t, "failed", why, started, utc_now_iso8601(), nullptr);
    out << printable(t.name) << ": failed: " << printable(why) << "\n";
    return 1;
  }
  // A cut-short attempt's NAME.partial-* directory: removed when its process is gone (on
  // this host; `run` does the same), never while a run on another node may still own it.
  remove_stale_partial_dirs(result, [&out, &t](const std::string& line) {
    out << printable(t.name) << ": " << printable(line) << "\n";
  });
  write_status(dir, t, "running", "", started, "", nullptr);

  // The program is the one running now (or the caller's), never sweep.json's "syncscope":
  // a sweep directory on a shared file system must not choose what runs.
  std::vector<std::string> argv = {syncscope.string(), "run",   t.scenario,     "--device",
                                   plan.device,        "--out", result.string()};
  if (!t.target.gpu_profile.empty()) argv.insert(argv.end(), {"--gpu-profile", t.target.gpu_profile});
  const fs::path log_rel = fs::path("logs") / (t.name + ".log");
  {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
    // A fresh log per attempt; the scenario's path is the user's text: escaped (core/text.hpp).
    root.write(log_rel, "$ " + printable(cmd) + "\n");
  }
  LoggedRun lr;
  {
    const int fd = root.open_append(log_rel);
    lr = run_logged(argv, fd);
    ::close(fd);
  }
  // The log as we wrote it (our command line and run's output): `sweep --force` replaces it
  // only while it is still that (written_record.cpp); one edited since is refused, named.
  try {
    detail::record_written(root, log_rel.generic_string(), root.read(log_rel));
  } catch (const InputError&) {
    // Unreadable now (replaced by a link, over 1 GiB): unrecorded, so --force keeps it.
  }
  const ProcessResult& r = lr.result;
  const std::string ended = utc_now_iso8601();
  // `run` exits 1 when a prediction misses its tolerance, after publishing its results: the
  // task is done and its verdict failed. Anything else without results is a failed task.
  struct stat rst {};
  const bool published = root.stat(fs::path("tasks") / t.name, rst) && S_ISDIR(rst.st_mode) &&
                         root.exists(fs::path("tasks") / t.name / "results.json");
  if (published && r.started && r.signal == 0 && (r.exit_code == 0 || r.exit_code == 1)) {
    const std::string verdict =
        r.exit_code == 0 ? "verdicts pass" : "verdict: a prediction misses its tolerance (run exit status 1)";
    write_status(dir, t, "done", verdict, started, ended, &r);
    out << printable(t.name) << ": done (" << verdict << ")\n";
    return 0;
  }
  std::string why;
  std::string state = "failed";
  if (lr.interrupted_by != 0) {
    state = "cancelled";
    why = fmt::format("received SIG{} (scancel, the time limit, or an interrupt) while running; syncscope run {}",
                      ::sigabbrev_np(lr.interrupted_by) ? ::sigabbrev_np(lr.interrupted_by) : "?", r.describe());
  } else {
    const std::string line = detail::last_error_line(dir, log_rel);
    why = "syncscope run " + r.describe() + (line.empty() ? std::string() : ": " + line);
    if (published) why += " (its results.json is not taken: the run did not finish cleanly)";
  }
  write_status(dir, t, state, why, started, ended, &r);
  // The log's last error line quotes what run read (kernel, step, scenario names): escaped.
  out << printable(t.name) << ": " << state << ": " << printable(why) << "\n";
  return 1;
}

void say_to(std::ostream& out, const std::string& line) { out << "syncscope sweep: " << line << "\n"; }

}  // namespace

int run_sweep_task(const fs::path& dir, std::size_t index, const fs::path& syncscope, std::ostream& out,
                   int lock_wait_s) {
  (void)read_plan(dir);  // InputError naming what is wrong with DIR before any lock file is made
  // Shared: the tasks of one sweep run side by side; an exclusive writer (a `sweep` of this
  // directory, --force) is waited for up to a minute (it only plans and submits), then refused.
  const DirLock lock = DirLock::take(
      DirHandle::open(dir), DirLock::Mode::Shared, "sweep", [&out](const std::string& l) { say_to(out, l); },
      lock_wait_s);
  return run_task_locked(dir, index, syncscope, out);
}

void write_sweep_report_locked(const fs::path& dir, const SlurmTools& tools, std::ostream& out) {
  (void)read_plan(dir);
  const DirLock lock = DirLock::take(DirHandle::open(dir), DirLock::Mode::Exclusive, "sweep",
                                     [&out](const std::string& l) { say_to(out, l); });
  write_sweep_report(dir, tools, out);
}

namespace {

// Refused before anything is planned or written.
void check_request(const SweepRequest& r) {
  SYNCSCOPE_INPUT_ERROR_IF(r.out.empty(), "sweep: --out DIR is required");
  if (r.slurm && !r.dry_run)
    SYNCSCOPE_INPUT_ERROR_IF(r.tools.sbatch.empty(),
                             "sweep --slurm: sbatch is not on PATH: run on a Slurm login node (Debian: slurm-client), "
                             "add --dry-run to only write the batch scripts, or leave out --slurm to run here");
  validate_slurm_options(r.slurm_options);
  if (r.slurm) (void)detail::sbatch_path(fs::absolute(r.out).lexically_normal() / "slurm" / "logs");
}

// --force over an earlier, different sweep in DIR: removes only what it wrote, and only
// when every file that goes is still as it wrote it (a user's edit is refused, named).
void replace_old_sweep(const SweepRequest& r, const fs::path& dir, const SweepPlan& old, std::ostream& out) {
  const auto st = sweep_status(dir, r.tools);
  for (const auto& s : st)
    SYNCSCOPE_INPUT_ERROR_IF(s.state == TaskState::Queued || s.state == TaskState::Running,
                             dir.string() + ": task " + s.name + " of the sweep there is still " +
                                 std::string(state_name(s.state)) + " (job " + s.job +
                                 "): cancel it (scancel) before replacing the sweep");
  // Only what the old sweep wrote goes, and only when nothing else is in what goes.
  // slurm/logs/ is Slurm's (the jobs' output) and a user's: never removed, so not checked.
  std::vector<std::string> roots = {"slurm"};
  std::vector<std::string> allowed = {"slurm/*.sh", "slurm/jobs.json", "slurm/logs", "slurm/logs/*"};
  const auto run_files = pipeline::run_dir_rules().allowed;
  for (const auto& t : old.tasks) {
    roots.push_back("tasks/" + t.name);
    for (const auto& f : run_files) allowed.push_back("tasks/" + t.name + "/" + f);
    // A cut-short run's partial directories: what run writes, and its owner marker.
    // Only those with run's marker: a user's NAME.partial-x is neither checked nor removed.
    for (const auto& e : our_partials(dir, t.name)) roots.push_back("tasks/" + e);
    const std::string partial = "tasks/" + t.name + ".partial-*/";
    allowed.push_back(partial + kPartialMarker);
    for (const auto& f : run_files) allowed.push_back(partial + f);
  }
  detail::check_only_ours(dir, roots, allowed, "an earlier sweep");
  // Each task's results directory: its own manifest (core/dir_manifest.hpp) names what run
  // wrote there, by size and content.
  for (const auto& t : old.tasks) {
    const fs::path rel = fs::path("tasks") / t.name;
    if (!detail::has_directory(dir, rel) || !detail::has_entry(dir, rel / kRunManifest)) continue;
    const auto bad = dir_manifest_mismatches(dir / rel, kRunManifest, 5);
    std::string list;
    for (const auto& b : bad) list += (list.empty() ? "" : ", ") + b;
    SYNCSCOPE_INPUT_ERROR_IF(!bad.empty(), (dir / rel).string() + " holds files its run did not write (" + list +
                                               "): --force would delete them; move them away, or choose another --out");
  }
  // The sweep's own files, logs included, by the record of what it wrote (written_record.cpp):
  // each goes only while it is byte for byte what we wrote.
  std::vector<std::string> own = {"report.html", "results.csv", kManifest};
  for (const auto& t : old.tasks) {
    own.push_back("status/" + t.name + ".json");
    own.push_back("logs/" + t.name + ".log");
  }
  const std::vector<std::string> slurm_files = detail::files_outside_slurm_logs(dir);
  own.insert(own.end(), slurm_files.begin(), slurm_files.end());
  const std::vector<std::string> changed = detail::changed_since_written(dir, own, 5);
  std::string list;
  for (const auto& c : changed) list += (list.empty() ? "" : ", ") + printable(c);
  SYNCSCOPE_INPUT_ERROR_IF(!changed.empty(), dir.string() +
                                                 ": --force would replace files that are not as the earlier "
                                                 "sweep wrote them: " +
                                                 list + "; move them away (or back), or choose another --out");
  // Removed beneath DIR's descriptor: a link planted there is removed itself, never followed.
  const DirHandle h = DirHandle::open(dir);
  for (const auto& t : old.tasks) {
    h.remove(fs::path("tasks") / t.name);
    for (const auto& e : our_partials(dir, t.name)) h.remove(fs::path("tasks") / e);
    h.remove(fs::path("status") / (t.name + ".json"));
    h.remove(fs::path("logs") / (t.name + ".log"));
  }
  for (const char* f : {"report.html", "results.csv", kManifest}) h.remove(f);
  for (const auto& f : slurm_files) h.remove(f);
  if (detail::has_directory(dir, "slurm/logs") && !h.list("slurm/logs").empty())
    out << "kept " << printable((dir / "slurm" / "logs").string())
        << ": Slurm wrote the jobs' output there, not syncscope\n";
  out << "replaced the earlier sweep in " << printable(dir.string()) << " (--force)\n";
}

// DIR made ours for `plan` (the lock held): new or empty, the same sweep (resumed), or with
// --force a different one replaced.
void claim_dir(const SweepRequest& r, const SweepPlan& plan, const fs::path& dir, std::ostream& out) {
  switch (detail::classify_dir(dir, kManifest)) {
    case detail::DirKind::Foreign:
      throw InputError(dir.string() +
                       " exists and holds no syncscope sweep: choose a new or empty directory "
                       "(nothing in it is replaced, even with --force)");
    case detail::DirKind::Ours: {
      const SweepPlan old = read_plan(dir);
      if (old.id == plan.id) return;
      std::string names;
      for (std::size_t i = 0; i < old.tasks.size() && i < 4; ++i) names += (i ? ", " : "") + old.tasks[i].name;
      if (old.tasks.size() > 4) names += ", ...";
      SYNCSCOPE_INPUT_ERROR_IF(!r.force, dir.string() + " holds a different sweep (" +
                                             std::to_string(old.tasks.size()) + " tasks: " + names +
                                             "): choose another --out, or pass --force to replace it");
      replace_old_sweep(r, dir, old, out);
      [[fallthrough]];
    }
    case detail::DirKind::Absent:
    case detail::DirKind::Empty: detail::write_text(dir, kManifest, plan_to_json(plan)); break;
  }
}

// Slurm: one array per constraint, then the report job after all of them.
int submit_sweep(const SweepRequest& r, const SweepPlan& plan, const fs::path& dir,
                 const std::vector<std::size_t>& todo, std::ostream& out) {
  const fs::path abs = fs::absolute(dir).lexically_normal();
  const fs::path logs = abs / "slurm" / "logs";
  (void)DirHandle::open(abs).sub("slurm/logs", true);
  detail::write_batch_script(abs, "slurm/task.sh", plan.job_name(), logs, r.slurm_options, true, true,
                             {r.syncscope.string(), "job", "sweep-task", abs.string(), "$SLURM_ARRAY_TASK_ID"});
  detail::write_batch_script(abs, "slurm/report.sh", plan.job_name() + "-report", logs, r.slurm_options, false, false,
                             {r.syncscope.string(), "job", "sweep-report", abs.string()});
  std::map<std::string, std::vector<std::size_t>> by_constraint;
  for (auto i : todo) by_constraint[plan.tasks[i].target.constraint].push_back(i);
  std::vector<std::string> jobs;
  std::size_t n = 0;
  for (const auto& [constraint, indices] : by_constraint) {
    std::vector<std::string> opts = {"--array=" + array_spec(indices)};
    if (!constraint.empty()) opts.push_back("--constraint=" + constraint);
    if (r.dry_run) {
      std::string cmd;
      for (const auto& a : sbatch_command(opts, abs / "slurm" / "task.sh"))
        cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
      out << "JOB" << ++n << "=$(" << cmd << ")\n";
      jobs.push_back("$JOB" + std::to_string(n));
      continue;
    }
    const std::string job = sbatch_submit(r.tools, opts, abs / "slurm" / "task.sh");
    detail::append_submission(dir, {job, "array", indices, constraint, {}, utc_now_iso8601()});
    out << fmt::format("submitted job array {} ({} task(s){})\n", job, indices.size(),
                       constraint.empty() ? "" : ", constraint " + constraint);
    jobs.push_back(job);
  }
  std::string dep = "--dependency=afterany";
  for (const auto& j : jobs) dep += ":" + j;
  if (r.dry_run) {
    // The dependency names the shell variables above: double quotes let the shell expand them.
    out << "sbatch --parsable \"" << dep << "\" " << shell_quote((abs / "slurm" / "report.sh").string()) << "\n";
    out << "(dry run: nothing submitted; the lines above submit it)\n";
    return 0;
  }
  const std::string report_job = sbatch_submit(r.tools, {dep}, abs / "slurm" / "report.sh");
  detail::append_submission(dir, {report_job, "final", {}, "", jobs, utc_now_iso8601()});
  out << "submitted report job " << report_job << " (after " << dep.substr(std::string("--dependency=afterany:").size())
      << "): it writes " << (abs / "report.html").string() << " and " << (abs / "results.csv").string() << "\n";
  out << "follow it with: syncscope sweep --status " << dir.string() << "\n";
  return 0;
}

}  // namespace

int start_sweep(const SweepRequest& r, std::ostream& out) {
  check_request(r);
  const SweepPlan plan = plan_sweep(r);
  const fs::path dir = r.out;
  // A directory that is not ours gets no lock file either: refused as it is.
  SYNCSCOPE_INPUT_ERROR_IF(detail::foreign_before_lock(dir, kManifest),
                           dir.string() +
                               " exists and holds no syncscope sweep: choose a new or empty directory "
                               "(nothing in it is replaced, even with --force)");
  // One writer per sweep directory (core/dir_lock.hpp): a second `sweep` into DIR is refused
  // naming the first one's pid; a lock left by one that died is taken over.
  const DirLock lock = DirLock::take(DirHandle::open(dir, true), DirLock::Mode::Exclusive, "sweep",
                                     [&out](const std::string& l) { say_to(out, l); });
  claim_dir(r, plan, dir, out);
  // What runs cut short by a writer that is gone left behind (on this host): removed now,
  // said, for every task (run_task_locked does it again for the tasks it runs).
  for (const auto& t : plan.tasks)
    if (detail::has_directory(dir, "tasks"))
      remove_stale_partial_dirs(dir / "tasks" / t.name, [&out, &t](const std::string& line) {
        out << printable(t.name) << ": " << printable(line) << "\n";
      });

  const auto status = sweep_status(dir, r.tools);
  std::vector<std::size_t> todo;
  std::size_t done = 0, busy = 0;
  for (const auto& s : status) {
    if (s.state == TaskState::Done) ++done;
    else if (s.state == TaskState::Queued || s.state == TaskState::Running) ++busy;
    else todo.push_back(s.index);
  }
  const std::size_t n_targets = plan.tasks.size() / r.scenarios.size();
  out << fmt::format(
      "sweep {}: {} task(s) ({} scenario(s) x {} GPU target(s)) in {}: {} done, {} queued or running, "
      "{} to {}\n",
      plan.id, plan.tasks.size(), r.scenarios.size(), n_targets, printable(dir.string()), done, busy, todo.size(),
      r.slurm ? "submit" : "run");
  if (todo.empty()) {
    if (busy == 0 && !detail::has_entry(dir, "report.html")) write_sweep_report(dir, r.tools, out);
    out << "nothing to " << (r.slurm ? "submit" : "run") << ": every task is done"
        << (busy ? " or in progress (sweep --status " + dir.string() + ")" : std::string()) << "\n";
    return 0;
  }
  if (r.slurm) return submit_sweep(r, plan, dir, todo, out);
  if (r.dry_run) {
    for (auto i : todo)
      out << shell_quote(r.syncscope.string()) << " job sweep-task " << shell_quote(fs::absolute(dir).string()) << " "
          << i << "\n";
    return 0;
  }
  int rc = 0;
  for (std::size_t k = 0; k < todo.size(); ++k) {
    out << fmt::format("[{}/{}] ", k + 1, todo.size()) << std::flush;
    rc |= run_task_locked(dir, todo[k], r.syncscope, out);
  }
  write_sweep_report(dir, r.tools, out);
  return rc == 0 ? 0 : 1;
}

}  // namespace syncscope::cluster
