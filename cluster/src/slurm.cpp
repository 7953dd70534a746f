#include "syncscope/cluster/slurm.hpp"

#include <algorithm>
#include <charconv>
#include <regex>
#include <sstream>

#include "syncscope/cluster/process.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"

namespace syncscope::cluster {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  return s.substr(i);
}

std::string first_line(const std::string& s) {
  const std::string t = trim(s);
  return t.substr(0, t.find('\n'));
}

}  // namespace

void validate_slurm_options(const SlurmOptions& o) {
  // sbatch(1): --partition=<partition_names>, --gres=<list> (name[[:type]:count], comma
  // separated), --time=<time> in the forms below. Anything else is not Slurm's syntax.
  static const std::regex name_list("[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*");
  static const std::regex gres("[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)*(,[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)*)*");
  static const std::regex time(
      "[0-9]{1,9}(:[0-9]{1,2}){0,2}|[0-9]{1,6}-[0-9]{1,2}(:[0-9]{1,2}){0,2}|UNLIMITED|INFINITE|unlimited|infinite");
  auto check = [](const std::string& v, const std::regex& re, const char* option, const char* expected) {
    if (v.empty()) return;
    SYNCSCOPE_INPUT_ERROR_IF(v.size() > 256 || !std::regex_match(v, re),
                             std::string(option) + " '" + printable(v.substr(0, 80)) + "': expected " + expected +
                                 " (Slurm's syntax, sbatch(1)); nothing else is written into a batch script");
  };
  check(o.partition, name_list, "--partition", "partition names: letters, digits, '_', '.', '-', joined by ','");
  check(o.gres, gres, "--gres", "name[:type][:count], joined by ',' (e.g. gpu:1 or gpu:h100:2)");
  check(o.time, time, "--time", "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED (e.g. 01:00:00)");
}

void validate_constraint(const std::string& c) {
  // sbatch(1) --constraint: features joined by & | , with [] () * counts.
  static const std::regex re("[A-Za-z0-9_.:&|,*\\[\\]()-]+");
  SYNCSCOPE_INPUT_ERROR_IF(c.empty() || c.size() > 256 || !std::regex_match(c, re),
                           "--constraint '" + printable(c.substr(0, 80)) +
                               "': expected node features (letters, digits, '_', '.', '-', joined by & | , with "
                               "[] () * as sbatch(1) allows)");
}

SlurmTools SlurmTools::from_path(const char* path_list) {
  SlurmTools t;
  if (auto p = find_program("sbatch", path_list)) t.sbatch = *p;
  if (auto p = find_program("squeue", path_list)) t.squeue = *p;
  if (auto p = find_program("scontrol", path_list)) t.scontrol = *p;
  return t;
}

std::string array_spec(const std::vector<std::size_t>& indices) {
  std::vector<std::size_t> v = indices;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j > i) out += '-' + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}

std::vector<std::string> sbatch_command(const std::vector<std::string>& options, const std::filesystem::path& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script.string());
  return argv;
}

std::string sbatch_submit(const SlurmTools& tools, const std::vector<std::string>& options,
                          const std::filesystem::path& script) {
  SYNCSCOPE_THROW_IF(tools.sbatch.empty(), "sbatch is not on PATH");
  auto argv = sbatch_command(options, script);
  argv[0] = tools.sbatch.string();
  const ProcessResult r = run_capture(argv);
  std::string cmd;
  for (std::size_t i = 1; i < argv.size(); ++i) cmd += " " + shell_quote(argv[i]);
  if (!r.ok())
    throw Error("sbatch" + cmd + " failed (" + r.describe() + ")" +
                (trim(r.err).empty() ? std::string() : ": " + trim(r.err)));
  // --parsable prints "jobid" or "jobid;cluster".
  std::string id = first_line(r.out);
  id = id.substr(0, id.find(';'));
  const bool digits = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) throw Error("sbatch" + cmd + " printed no job id: '" + first_line(r.out) + "'");
  return id;
}

std::vector<QueuedTask> parse_squeue(const std::string& text) {
  std::vector<QueuedTask> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::size_t start = 0;
    for (int k = 0; k < 3; ++k) {
      const auto bar = line.find('|', start);
      if (bar == std::string::npos) break;
      f.push_back(line.substr(start, bar - start));
      start = bar + 1;
    }
    f.push_back(line.substr(start));
    if (f.size() < 4) continue;
    QueuedTask t;
    t.job_id = f[0];
    std::int64_t idx = -1;
    const auto& k = f[1];
    if (std::from_chars(k.data(), k.data() + k.size(), idx).ec == std::errc() &&
        k.find_first_not_of("0123456789") == std::string::npos)
      t.index = idx;
    t.state = f[2];
    t.reason = f[3];
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<std::vector<QueuedTask>> squeue_by_name(const SlurmTools& tools, const std::string& job_name) {
  if (tools.squeue.empty()) return std::nullopt;
  const ProcessResult r =
      run_capture({tools.squeue.string(), "--noheader", "--array", "--name=" + job_name, "--format=%F|%K|%T|%r"});
  if (!r.ok()) return std::nullopt;
  return parse_squeue(r.out);
}

std::optional<JobInfo> parse_scontrol_job(const std::string& text) {
  JobInfo info;
  bool any = false;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = tok.substr(0, eq), value = tok.substr(eq + 1);
    if (key == "JobState") info.state = value, any = true;
    else if (key == "Reason") info.reason = value;
    else if (key == "ExitCode") info.exit_code = value;
  }
  if (!any) return std::nullopt;
  return info;
}

std::optional<JobInfo> scontrol_job(const SlurmTools& tools, const std::string& job_id) {
  if (tools.scontrol.empty()) return std::nullopt;
  const ProcessResult r = run_capture({tools.scontrol.string(), "-o", "show", "job", job_id});
  if (!r.ok()) return std::nullopt;
  return parse_scontrol_job(r.out);
}

}  // namespace syncscope::cluster
