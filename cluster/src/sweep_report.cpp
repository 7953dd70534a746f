// The sweep's merged report: every finished task's results in one HTML report and one CSV,
// and a table naming each task's state and, for those that did not finish, why.
#include <map>

#include <fmt/format.h>

#include "common.hpp"
#include "syncscope/cluster/sweep.hpp"
#include "syncscope/core/csv.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/replay/critical_path.hpp"
#include "syncscope/reports/html_report.hpp"

namespace syncscope::cluster {

namespace fs = std::filesystem;

namespace {

std::string tasks_section(const SweepPlan& plan, const std::vector<TaskStatus>& st) {
  std::map<TaskState, std::size_t> counts;
  for (const auto& s : st) ++counts[s.state];
  std::string summary;
  for (const auto& [state, n] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, state_name(state));
  std::string h = "<section class=\"sweep-tasks\" id=\"sweep-tasks\">\n<h2>Sweep tasks</h2>\n";
  h += fmt::format(
      "<p>Sweep <code>{}</code>: {} task(s), one per scenario and GPU target: {}. Only finished tasks "
      "are in the results below.</p>\n",
      html_escape(plan.id), plan.tasks.size(), html_escape(summary));
  h += "<table>\n<thead><tr><th>task</th><th>scenario</th><th>GPU target</th><th>state</th><th>job</th>"
       "<th>why</th></tr></thead>\n<tbody>\n";
  for (const auto& s : st) {
    const SweepTask& t = plan.tasks[s.index];
    std::string target = t.target.constraint.empty() ? "" : "constraint " + t.target.constraint;
    if (!t.target.gpu_profile.empty())
      target += (target.empty() ? "" : ", ") + std::string("profile ") + t.target.gpu_profile;
    if (target.empty()) target = "default";
    const bool bad = s.state != TaskState::Done;
    h += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     bad ? "task-not-done" : "task-done", html_escape(t.name),
                     html_escape(fs::path(t.scenario).filename().string()), html_escape(target),
                     html_escape(std::string(state_name(s.state))), html_escape(s.job.empty() ? "-" : s.job),
                     html_escape(s.reason));
  }
  h += "</tbody>\n</table>\n</section>\n";
  return h;
}

// DIR/results.csv: each finished task's results.csv rows behind the task's columns; one row
// per task that did not finish, its other columns empty. Columns are the union of the
// tasks' headers, in the order first seen.
std::string merged_csv(const fs::path& dir, const SweepPlan& plan, const std::vector<TaskStatus>& st) {
  const std::vector<std::string> lead = {"task", "scenario_file", "gpu_target", "task_state", "task_reason"};
  std::vector<std::string> columns;
  std::map<std::string, std::size_t> column_index;
  struct Block {
    std::size_t task;
    std::vector<std::vector<std::string>> rows;  // with the task's own header first
  };
  std::vector<Block> blocks;
  for (const auto& s : st) {
    Block b{s.index, {}};
    if (s.state == TaskState::Done) {
      const fs::path rel = fs::path("tasks") / plan.tasks[s.index].name / "results.csv";
      b.rows = csv_parse(detail::read_text(dir, rel), (dir / rel).string());
      if (!b.rows.empty())
        for (const auto& c : b.rows.front())
          if (column_index.emplace(c, columns.size()).second) columns.push_back(c);
    }
    blocks.push_back(std::move(b));
  }
  CsvWriter out;
  std::vector<std::string> header = lead;
  header.insert(header.end(), columns.begin(), columns.end());
  out.row(header);
  for (const auto& b : blocks) {
    const auto& s = st[b.task];
    const auto& t = plan.tasks[b.task];
    // The scenario's file name and the reason (quoting a log) are the user's text: escaped.
    std::vector<std::string> row = {t.name, printable(fs::path(t.scenario).filename().string()), t.target.label,
                                    std::string(state_name(s.state)), printable(s.reason)};
    if (b.rows.size() <= 1) {
      row.resize(header.size());
      out.row(row);
      continue;
    }
    const auto& own = b.rows.front();
    for (std::size_t r = 1; r < b.rows.size(); ++r) {
      std::vector<std::string> full = row;
      full.resize(header.size());
      for (std::size_t c = 0; c < own.size() && c < b.rows[r].size(); ++c)
        full[lead.size() + column_index.at(own[c])] = b.rows[r][c];
      out.row(full);
    }
  }
  return out.str();
}

}  // namespace

void write_sweep_report(const fs::path& dir, const SlurmTools& tools, std::ostream& out) {
  const SweepPlan plan = read_plan(dir);
  auto st = sweep_status(dir, tools);
  std::vector<model::ReportRun> runs;
  for (auto& s : st) {
    if (s.state != TaskState::Done) continue;
    try {
      runs.push_back(model::load_report_run(dir / "tasks" / s.name, replay::add_critical_paths));
    } catch (const Error& e) {
      // A finished task whose results cannot be read is not taken as complete.
      s.state = TaskState::Failed;
      s.reason = std::string("its results cannot be read: ") + e.what();
    }
  }
  std::size_t done = runs.size();
  HtmlReportOptions opt;
  opt.title = fmt::format("syncscope sweep {}: {} of {} tasks done", plan.id.substr(0, 8), done, plan.tasks.size());
  opt.generated_utc = utc_now_iso8601();
  std::string html = render_html_report(runs, opt);
  // The task table goes right after the report's header, so a failure is the first thing read.
  const std::string section = tasks_section(plan, st);
  const auto header_end = html.find("</header>\n");
  if (header_end != std::string::npos) html.insert(header_end + 10, section);
  else if (const auto body_end = html.rfind("</body>"); body_end != std::string::npos) html.insert(body_end, section);
  else html += section;
  detail::write_text(dir, "report.html", html);
  detail::write_text(dir, "results.csv", merged_csv(dir, plan, st));
  out << fmt::format("wrote {} and {} ({} of {} tasks done)\n", (dir / "report.html").string(),
                     (dir / "results.csv").string(), done, plan.tasks.size());
  for (const auto& s : st)
    if (s.state != TaskState::Done)
      out << fmt::format("  {} {}{}\n", printable(s.name), state_name(s.state),
                         s.reason.empty() ? "" : ": " + printable(s.reason));
}

}  // namespace syncscope::cluster
