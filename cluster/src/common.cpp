#include "common.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "syncscope/cluster/process.hpp"
#include "syncscope/core/dir_handle.hpp"
#include "syncscope/core/dir_lock.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/glob.hpp"
#include "syncscope/core/json_keys.hpp"
#include "syncscope/core/text.hpp"
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

namespace {
constexpr std::uint64_t kMaxOwnFileBytes = std::uint64_t{256} << 20;  // far above what we write there
}  // namespace

std::string read_text(const fs::path& dir, const fs::path& rel) {
  return DirHandle::open(dir).read(rel, kMaxOwnFileBytes);
}

nlohmann::json read_json(const fs::path& dir, const fs::path& rel) {
  const std::string text = read_text(dir, rel);
  auto j = nlohmann::json::parse(text, nullptr, false);
  SYNCSCOPE_INPUT_ERROR_IF(j.is_discarded(), (dir / rel).string() +
                                                 ": not valid JSON (damaged? it is written atomically, so "
                                                 "something else wrote it)");
  refuse_duplicate_keys(text, (dir / rel).string());  // the strict policy (core/json_keys.hpp)
  return j;
}

void write_json(const fs::path& dir, const fs::path& rel, const nlohmann::ordered_json& j) {
  write_text(dir, rel, j.dump(2) + "\n");
}

void write_text(const fs::path& dir, const fs::path& rel, std::string_view text, unsigned mode) {
  const DirHandle h = DirHandle::open(dir, true);
  h.write(rel, text, true, mode);
  record_written(h, rel.generic_string(), text);
}

bool has_entry(const fs::path& dir, const fs::path& rel) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  return DirHandle::open(dir).exists(rel);
}

bool has_directory(const fs::path& dir, const fs::path& rel) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  return DirHandle::open(dir).is_directory(rel);
}

void remove_entry(const fs::path& dir, const fs::path& rel) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  DirHandle::open(dir).remove(rel);
}

std::vector<Submission> read_submissions(const fs::path& dir) {
  std::vector<Submission> out;
  const fs::path p = dir / "slurm" / "jobs.json";
  if (!has_entry(dir, "slurm/jobs.json")) return out;
  const auto j = read_json(dir, "slurm/jobs.json");
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
  write_json(dir, "slurm/jobs.json", j);
}

// A value for an #SBATCH line. sbatch reads those lines itself (not bash), splitting words at
// blanks outside double quotes; bash sees a comment that a newline would end. So: no control
// character (that newline), no '"' or '\\' (sbatch's quoting), and a path with blanks in
// double quotes. '%' is sbatch's filename pattern character, doubled to stay itself.
std::string sbatch_path(const fs::path& p) {
  const std::string s = p.string();
  for (unsigned char c : s)
    SYNCSCOPE_INPUT_ERROR_IF(c < 0x20 || c == 0x7f || c == '"' || c == '\\',
                             "the output directory '" + printable(s) +
                                 "' holds a control character, '\"' or '\\', which a batch script cannot hold "
                                 "safely: choose another --out");
  std::string out;
  for (char c : s) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out.find_first_of(" \t") == std::string::npos ? out : "\"" + out + "\"";
}

namespace {

// The only words left unquoted for bash to expand: exactly $SLURM_ARRAY_TASK_ID and the like.
bool slurm_variable(const std::string& a) {
  if (a.size() < 8 || a.compare(0, 7, "$SLURM_") != 0) return false;
  for (std::size_t i = 7; i < a.size(); ++i)
    if (!((a[i] >= 'A' && a[i] <= 'Z') || a[i] == '_')) return false;
  return true;
}

}  // namespace

void write_batch_script(const fs::path& dir, const fs::path& rel, const std::string& job_name, const fs::path& log_dir,
                        const SlurmOptions& o, bool with_gres, bool array, const std::vector<std::string>& command) {
  validate_slurm_options(o);  // callers check earlier, with the option's name; this is the last gate
  SYNCSCOPE_THROW_IF(job_name.empty() ||
                         job_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos,
                     "internal: job name '" + printable(job_name) + "'");
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" + job_name + "\n";
  {
    // sbatch's filename patterns: %x job name, %A array job id, %a task id, %j job id.
    const std::string logs = sbatch_path(log_dir);
    const std::string pattern = array ? "/%x-%A_%a.out" : "/%x-%j.out";
    s += "#SBATCH --output=" +
         (logs.front() == '"' ? logs.substr(0, logs.size() - 1) + pattern + "\"" : logs + pattern) + "\n";
  }
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  if (with_gres && !o.gres.empty()) s += "#SBATCH --gres=" + o.gres + "\n";
  if (!o.time.empty()) s += "#SBATCH --time=" + o.time + "\n";
  s += "# Written by syncscope; the command runs in the job and writes its own status.\n";
  s += "exec";
  for (const auto& a : command) s += " " + (slurm_variable(a) ? "\"" + a + "\"" : shell_quote(a));
  s += "\n";
  write_text(dir, rel, s, 0755);
}

DirKind classify_dir(const fs::path& dir, std::string_view manifest) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return DirKind::Absent;
  SYNCSCOPE_INPUT_ERROR_IF(!fs::is_directory(dir, ec), dir.string() + " exists and is not a directory");
  if (fs::exists(dir / std::string(manifest), ec)) return DirKind::Ours;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n != kDirLockFile && n != kWrittenRecord) return DirKind::Foreign;
  }
  return DirKind::Empty;
}

bool foreign_before_lock(const fs::path& dir, std::string_view manifest) {
  // A writer holding the lock may be creating its manifest right now (a temporary file next
  // to it): a directory holding the lock file is classified again once the lock is taken.
  return classify_dir(dir, manifest) == DirKind::Foreign && !has_entry(dir, kDirLockFile);
}

void check_only_ours(const fs::path& dir, const std::vector<std::string>& roots,
                     const std::vector<std::string>& allowed, const std::string& what) {
  std::vector<std::string> foreign;
  const DirHandle h = DirHandle::open(dir);
  for (const auto& root : roots) {
    std::error_code ec;
    const fs::path top = dir / root;
    struct stat lst {};
    if (!h.stat(root, lst)) continue;  // InputError when a directory on the way is a link
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

std::pair<std::uint64_t, std::uint64_t> tree_size(const fs::path& dir, const fs::path& rel) {
  std::uint64_t files = 0, bytes = 0;
  if (!has_directory(dir, rel)) return {0, 0};
  std::error_code ec;
  // recursive_directory_iterator does not follow links below its start, which is checked above.
  for (auto it = fs::recursive_directory_iterator(dir / rel, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code fec;
    if (it->is_symlink(fec)) continue;
    if (it->is_regular_file(fec)) {
      ++files;
      bytes += it->file_size(fec);
    }
  }
  return {files, bytes};
}

std::string last_error_line(const fs::path& dir, const fs::path& rel) {
  std::string text;
  try {
    text = read_text(dir, rel);
  } catch (const Error&) {
    return "";
  }
  std::istringstream in(text);
  std::string line, last, error;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    last = line;
    if (line.find("error:") != std::string::npos) error = line;
  }
  std::string s = error.empty() ? last : error;
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return printable(s);
}

}  // namespace syncscope::cluster::detail
