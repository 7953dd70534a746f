// A sweep's task states: status files first, then Slurm for tasks still queued or running
// (squeue) and for those that left the queue without writing their end (scontrol).
#include <signal.h>
#include <sys/stat.h>

#include <charconv>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common.hpp"
#include "syncscope/cluster/sweep.hpp"
#include "syncscope/core/dir_handle.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope::cluster {

namespace fs = std::filesystem;

namespace {

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

std::string slurm_words(const JobInfo& j) {
  std::string s = "Slurm: " + printable(j.state);
  if (!j.reason.empty() && j.reason != "None") s += ", reason " + printable(j.reason);
  if (!j.exit_code.empty() && j.exit_code != "0:0") s += ", exit code " + j.exit_code;
  return s;
}

std::optional<std::uint64_t> leading_number(const std::string& job) {
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(job.data(), job.data() + job.size(), v);
  if (ec != std::errc() || p == job.data()) return std::nullopt;
  return v;
}

// A task that left the queue, as Slurm remembers its job.
void from_slurm(TaskStatus& s, const JobInfo& j) {
  if (one_of(j.state, {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED"})) {
    s.state = TaskState::Queued;
    s.reason = j.reason;
  } else if (one_of(j.state, {"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING"})) {
    s.state = TaskState::Running;
  } else if (j.state == "CANCELLED") {
    s.state = TaskState::Cancelled;
    s.reason = (s.reason.empty() ? std::string("cancelled") : s.reason) + " (" + slurm_words(j) + ")";
  } else if (one_of(j.state, {"TIMEOUT", "DEADLINE"})) {
    s.state = TaskState::Failed;
    s.reason = "time limit reached (" + slurm_words(j) + ")" + (s.reason.empty() ? "" : "; " + s.reason);
  } else {
    s.state = s.state == TaskState::Failed ? TaskState::Failed : TaskState::Lost;
    s.reason =
        (s.reason.empty() ? std::string("ended without writing its status") : s.reason) + " (" + slurm_words(j) + ")";
  }
}

}  // namespace

std::string_view state_name(TaskState s) {
  switch (s) {
    case TaskState::Missing: return "missing";
    case TaskState::Queued: return "queued";
    case TaskState::Running: return "running";
    case TaskState::Done: return "done";
    case TaskState::Failed: return "failed";
    case TaskState::Cancelled: return "cancelled";
    case TaskState::Lost: return "lost";
  }
  return "?";
}

std::vector<TaskStatus> sweep_status(const fs::path& dir, const SlurmTools& tools) {
  const SweepPlan plan = read_plan(dir);
  const auto subs = detail::read_submissions(dir);
  struct Latest {
    std::string job;  // "JOB_INDEX" of the task's last submission
    std::string utc;
  };
  std::map<std::size_t, Latest> latest;
  for (const auto& s : subs)
    if (s.kind == "array")
      for (auto i : s.indices) latest[i] = {s.job + "_" + std::to_string(i), s.utc};
  // Our array tasks are found by the sweep's job name, so tasks submitted by hand from the
  // scripts of a --dry-run are seen too.
  std::optional<std::vector<QueuedTask>> queue;
  if (!tools.squeue.empty()) queue = squeue_by_name(tools, plan.job_name());
  const std::string here = detail::host_name();
  const std::vector<std::string> task_entries =
      detail::has_directory(dir, "tasks") ? DirHandle::open(dir).list("tasks") : std::vector<std::string>{};

  std::vector<TaskStatus> out;
  for (const auto& t : plan.tasks) {
    TaskStatus s;
    s.index = t.index;
    s.name = t.name;
    const fs::path result = dir / "tasks" / t.name;
    const fs::path result_rel = fs::path("tasks") / t.name;
    std::tie(s.files, s.bytes) = detail::tree_size(dir, result_rel);
    {
      const std::string prefix = t.name + ".partial-";
      for (const auto& e : task_entries)
        if (e.rfind(prefix, 0) == 0) s.partial = true;
    }
    if (queue) {
      bool found = false;
      for (const auto& q : *queue) {
        if (q.index != static_cast<std::int64_t>(t.index)) continue;
        found = true;
        s.job = q.job_id + "_" + std::to_string(q.index);
        const bool running = one_of(q.state, {"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING"});
        s.state = running ? TaskState::Running : TaskState::Queued;
        if (!running && q.reason != "None") s.reason = q.reason;
      }
      if (found) {
        out.push_back(std::move(s));
        continue;
      }
    }

    const fs::path status_rel = fs::path("status") / (t.name + ".json");
    std::string file_state;
    std::int64_t pid = -1;
    if (detail::has_entry(dir, status_rel)) {
      // A FIFO, device or link here is InputError naming it (never a hang); a field of the
      // wrong type is one too, not an exception from the JSON library.
      const auto j = detail::read_json(dir, status_rel);
      try {
        SYNCSCOPE_INPUT_ERROR_IF(!j.is_object(), (dir / status_rel).string() + ": expected a JSON object");
        file_state = j.value("state", std::string());
        s.reason = j.value("reason", std::string());
        s.job = j.value("job", std::string());
        s.host = j.value("host", std::string());
        s.started_utc = j.value("started_utc", std::string());
        s.ended_utc = j.value("ended_utc", std::string());
        pid = j.value("pid", std::int64_t{-1});
      } catch (const nlohmann::json::exception& e) {
        throw InputError((dir / status_rel).string() + ": malformed: " + e.what());
      }
    }
    const bool have_results =
        detail::has_directory(dir, result_rel) && detail::has_entry(dir, result_rel / "results.json");
    const auto it = latest.find(t.index);
    // A submission newer than the attempt the status file describes has not written a status
    // (yet): Slurm's job ids grow, so compare them; an attempt outside Slurm by its time.
    bool newer = false;
    if (it != latest.end() && it->second.job != s.job) {
      const auto a = leading_number(s.job), b = leading_number(it->second.job);
      newer = a && b ? *a < *b : s.started_utc < it->second.utc;
    }

    if (file_state == "done" && !newer) {
      if (have_results) {
        s.state = TaskState::Done;
      } else {
        s.state = TaskState::Failed;
        s.reason = "its status says done but " + (result / "results.json").string() + " is missing (removed?)";
      }
    } else if ((file_state == "failed" || file_state == "cancelled") && !newer) {
      s.state = file_state == "failed" ? TaskState::Failed : TaskState::Cancelled;
      if (s.job != "local" && !s.job.empty())
        if (auto j = scontrol_job(tools, s.job); j && one_of(j->state, {"TIMEOUT", "DEADLINE"})) from_slurm(s, *j);
    } else if (file_state == "running" && !newer) {
      if (s.job == "local" || s.job.empty()) {
        const bool alive = s.host == here && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0;
        s.state = alive ? TaskState::Running : TaskState::Lost;
        if (!alive) s.reason = "ended without writing its status (killed?); see logs/" + t.name + ".log";
      } else if (auto j = scontrol_job(tools, s.job)) {
        from_slurm(s, *j);
      } else {
        s.state = TaskState::Lost;
        s.reason = "job " + s.job + " left the queue without writing its status (killed?); see logs/" + t.name +
                   ".log and slurm/logs/";
      }
    } else if (it != latest.end()) {
      // Submitted, not in the queue, no status of that attempt: it never started or died at once.
      s.job = it->second.job;
      s.reason.clear();
      if (auto j = scontrol_job(tools, s.job)) {
        from_slurm(s, *j);
        if (s.state == TaskState::Cancelled && s.reason.rfind("cancelled (", 0) == 0)
          s.reason = "cancelled before it wrote a status" + s.reason.substr(9);
      } else if (queue) {
        s.state = TaskState::Lost;
        s.reason = "job " + s.job + " left the queue without writing a status (cancelled before it started?)";
      } else {
        s.state = TaskState::Lost;
        s.reason = "submitted as job " + s.job + "; squeue is not available to say more";
      }
    } else {
      s.state = TaskState::Missing;
    }
    // A link where the task's directory goes is not a run's output (run --out refuses to
    // write through one): said as what it is, not "missing".
    struct stat lst {};
    if (detail::has_directory(dir, "tasks") && DirHandle::open(dir).stat(result_rel, lst) && S_ISLNK(lst.st_mode)) {
      s.state = TaskState::Failed;
      s.reason = (dir / result_rel).string() +
                 " is a symbolic link, not the directory a run wrote: move it away, then run the sweep again";
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string status_table(const SweepPlan& plan, const std::vector<TaskStatus>& status) {
  std::string out = fmt::format("sweep {} ({} tasks)\n", plan.id, plan.tasks.size());
  std::size_t w = 4;
  for (const auto& s : status) w = std::max(w, s.name.size());
  out += fmt::format("{:<{}}  {:<9}  {:<12}  {:>14}  {}\n", "task", w, "state", "job", "written", "why");
  std::map<TaskState, std::size_t> counts;
  for (const auto& s : status) {
    ++counts[s.state];
    std::string written =
        s.files ? fmt::format("{} files, {:.1f} MB", s.files, static_cast<double>(s.bytes) / 1e6) : "-";
    std::string why = s.reason;
    if (s.partial) why += std::string(why.empty() ? "" : "; ") + "an unfinished run left a .partial directory";
    // Status files are data anyone with write access to DIR may have written: printed escaped.
    out += fmt::format("{:<{}}  {:<9}  {:<12}  {:>14}  {}\n", printable(s.name), w, state_name(s.state),
                       s.job.empty() ? "-" : printable(s.job), written, printable(why));
  }
  std::string summary;
  for (const auto& [st, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, state_name(st));
  out += summary + "\n";
  return out;
}

}  // namespace syncscope::cluster
