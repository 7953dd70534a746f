#include "common.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "syncscope/cluster/process.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/glob.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/version.hpp"

namespace syncscope::cluster::detail {

namespace fs = std::filesystem;

std::string fnv1a_hex(std::string_view data) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* hex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = hex[h & 0xf];
  return out;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string current_job_id() {
  const char* array = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (array && task && *array && *task) return std::string(array) + "_" + task;
  if (const char* job = std::getenv("SLURM_JOB_ID"); job && *job) return job;
  return "local";
}

nlohmann::json read_json(const fs::path& path) {
  const std::string text = read_file(path);
  auto j = nlohmann::json::parse(text, nullptr, false);
  SYNCSCOPE_INPUT_ERROR_IF(j.is_discarded(), path.string() + ": not valid JSON (damaged? it is written atomically, so "
                                                             "something else wrote it)");
  return j;
}

void write_json(const fs::path& path, const nlohmann::ordered_json& j) {
  write_file_atomic(path, j.dump(2) + "\n", true);
}

std::vector<Submission> read_submissions(const fs::path& dir) {
  std::vector<Submission> out;
  const fs::path p = dir / "slurm" / "jobs.json";
  std::error_code ec;
  if (!fs::exists(p, ec)) return out;
  const auto j = read_json(p);
  const std::string where = p.string();
  SYNCSCOPE_INPUT_ERROR_IF(!j.is_object() || !j.contains("submissions") || !j["submissions"].is_array(),
                           where + ": expected {\"submissions\": [...]}");
  for (const auto& s : j["submissions"]) {
    try {
      Submission x;
      x.job = s.at("job").get<std::string>();
      x.kind = s.at("kind").get<std::string>();
      x.indices = s.value("indices", std::vector<std::size_t>{});
      x.constraint = s.value("constraint", std::string());
      x.after = s.value("after", std::vector<std::string>{});
      x.utc = s.value("utc", std::string());
      out.push_back(std::move(x));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(where + ": a submission is malformed: " + e.what());
    }
  }
  return out;
}

void append_submission(const fs::path& dir, const Submission& s) {
  auto all = read_submissions(dir);
  all.push_back(s);
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["kind"] = "syncscope.slurm_jobs";
  j["submissions"] = nlohmann::ordered_json::array();
  for (const auto& x : all) {
    nlohmann::ordered_json e;
    e["job"] = x.job;
    e["kind"] = x.kind;
    if (x.kind == "array") e["indices"] = x.indices;
    if (!x.constraint.empty()) e["constraint"] = x.constraint;
    if (!x.after.empty()) e["after"] = x.after;
    e["utc"] = x.utc;
    j["submissions"].push_back(std::move(e));
  }
  fs::create_directories(dir / "slurm");
  write_json(dir / "slurm" / "jobs.json", j);
}

void write_batch_script(const fs::path& path, const std::string& job_name, const fs::path& log_dir,
                        const SlurmOptions& o, bool with_gres, bool array, const std::vector<std::string>& command) {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" + job_name + "\n";
  // sbatch's filename patterns: %x job name, %A array job id, %a task id, %j job id.
  s += "#SBATCH --output=" + (log_dir / (array ? "%x-%A_%a.out" : "%x-%j.out")).string() + "\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  if (with_gres && !o.gres.empty()) s += "#SBATCH --gres=" + o.gres + "\n";
  if (!o.time.empty()) s += "#SBATCH --time=" + o.time + "\n";
  s += "# Written by syncscope; the command runs in the job and writes its own status.\n";
  s += "exec";
  for (const auto& a : command) s += " " + (a.rfind("$SLURM", 0) == 0 ? "\"" + a + "\"" : shell_quote(a));
  s += "\n";
  write_file_atomic(path, s, true);
  ::chmod(path.c_str(), 0755);
}

DirKind classify_dir(const fs::path& dir, std::string_view manifest) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return DirKind::Absent;
  SYNCSCOPE_INPUT_ERROR_IF(!fs::is_directory(dir, ec), dir.string() + " exists and is not a directory");
  if (fs::exists(dir / std::string(manifest), ec)) return DirKind::Ours;
  if (fs::is_empty(dir, ec)) return DirKind::Empty;
  return DirKind::Foreign;
}

void check_only_ours(const fs::path& dir, const std::vector<std::string>& roots,
                     const std::vector<std::string>& allowed, const std::string& what) {
  std::vector<std::string> foreign;
  for (const auto& root : roots) {
    std::error_code ec;
    const fs::path top = dir / root;
    const auto st = fs::symlink_status(top, ec);
    if (ec || !fs::exists(st)) continue;
    if (!fs::is_directory(st)) {
      foreign.push_back(root + " (not a directory)");
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(top, fs::directory_options::none, ec);
         !ec && it != fs::recursive_directory_iterator() && foreign.size() < 5; it.increment(ec)) {
      const std::string rel = it->path().lexically_relative(dir).generic_string();
      std::error_code sec;
      const auto est = it->symlink_status(sec);
      bool ok = fs::is_regular_file(est) || fs::is_directory(est);
      if (ok) {
        ok = false;
        for (const auto& g : allowed) ok = ok || glob_match(g, rel);
      }
      if (!ok) {
        foreign.push_back(rel + (fs::is_symlink(est) ? " (a symbolic link)" : ""));
        if (fs::is_directory(est)) it.disable_recursion_pending();
      }
    }
    if (ec) foreign.push_back("(cannot list " + top.string() + ": " + ec.message() + ")");
  }
  if (foreign.empty()) return;
  std::string list;
  for (const auto& f : foreign) list += (list.empty() ? "" : ", ") + f;
  throw InputError(dir.string() + " holds files syncscope did not write where --force would replace " + what + " (" +
                   list + "): move them away, or choose another --out");
}

std::pair<std::uint64_t, std::uint64_t> tree_size(const fs::path& dir) {
  std::uint64_t files = 0, bytes = 0;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {0, 0};
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) {
      ++files;
      bytes += it->file_size(fec);
    }
  }
  return {files, bytes};
}

std::string last_error_line(const fs::path& log) {
  std::ifstream in(log);
  if (!in) return "";
  std::string line, last, error;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    last = line;
    if (line.find("error:") != std::string::npos) error = line;
  }
  std::string s = error.empty() ? last : error;
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return s;
}

}  // namespace syncscope::cluster::detail
