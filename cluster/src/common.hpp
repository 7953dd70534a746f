// Pieces the sweep and the rank jobs share: files we write atomically, the record of what
// was submitted to Slurm, the batch scripts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "syncscope/cluster/slurm.hpp"

namespace syncscope {
class DirHandle;
}

namespace syncscope::cluster::detail {

// FNV-1a, 64 bits, as 16 hex digits: stable across compilers and runs (std::hash is not).
std::string fnv1a_hex(std::string_view data);

std::string host_name();

// The job id this process runs as: "ARRAY_TASK" in an array task, the job id in a plain
// job, "local" outside Slurm.
std::string current_job_id();

// Files we write into a sweep's or rank analysis's directory DIR, named relative to it: read,
// written and tested through core/dir_handle.hpp, so a link planted under DIR is never
// followed and a FIFO or device there is InputError, never a hang.
// read_json: InputError naming it when unreadable, not a regular file or not JSON.
nlohmann::json read_json(const std::filesystem::path& dir, const std::filesystem::path& rel);
void write_json(const std::filesystem::path& dir, const std::filesystem::path& rel,
                const nlohmann::ordered_json& j);  // atomic, replaces
void write_text(const std::filesystem::path& dir, const std::filesystem::path& rel, std::string_view text,
                unsigned mode = 0644);
std::string read_text(const std::filesystem::path& dir, const std::filesystem::path& rel);
// Something (a file, a directory, a link) is at DIR/REL; false when DIR itself is missing.
bool has_entry(const std::filesystem::path& dir, const std::filesystem::path& rel);
// A real directory (not a link to one) at DIR/REL.
bool has_directory(const std::filesystem::path& dir, const std::filesystem::path& rel);
void remove_entry(const std::filesystem::path& dir, const std::filesystem::path& rel);  // links not followed

// What was submitted: DIR/slurm/jobs.json.
struct Submission {
  std::string job;                   // the job id sbatch printed
  std::string kind;                  // "array" or "final"
  std::vector<std::size_t> indices;  // array tasks ("array")
  std::string constraint;
  std::vector<std::string> after;  // the jobs a final job waits for
  std::string utc;
};
std::vector<Submission> read_submissions(const std::filesystem::path& dir);
void append_submission(const std::filesystem::path& dir, const Submission& s);

// `p` as the value of an #SBATCH --output line; InputError when it holds what a batch script
// cannot hold safely (a control character, '"', '\\').
std::string sbatch_path(const std::filesystem::path& p);

// A batch script: #SBATCH lines for the job name, the log file pattern (per array task when
// `array`) and the options, then `exec COMMAND` (words starting with $SLURM stay variables).
// Written atomically, mode 0755.
void write_batch_script(const std::filesystem::path& dir, const std::filesystem::path& rel, const std::string& job_name,
                        const std::filesystem::path& log_dir, const SlurmOptions& options, bool with_gres, bool array,
                        const std::vector<std::string>& command);

// What we wrote (written_record.cpp): every write_text records the file's size and FNV-1a
// in DIR/syncscope-written.txt; changed_since_written names the files among `rels` (those
// that exist) whose content is no longer what we wrote, or that we never wrote: what
// --force must not replace. At most `limit`.
inline constexpr const char* kWrittenRecord = "syncscope-written.txt";
void record_written(const DirHandle& dir, const std::string& rel, std::string_view content);
std::vector<std::string> changed_since_written(const std::filesystem::path& dir, const std::vector<std::string>& rels,
                                               std::size_t limit = 5);
// Every non-directory entry under DIR/REL, as '/'-separated paths relative to DIR.
std::vector<std::string> files_under(const std::filesystem::path& dir, const std::string& rel);

// files_under(DIR, "slurm") but for slurm/logs/: the batch scripts and jobs.json we wrote.
// What Slurm writes into slurm/logs/ (and a user's file there) is never ours to remove.
std::vector<std::string> files_outside_slurm_logs(const std::filesystem::path& dir);

// An output directory: "" when it does not exist or is empty, else the name of the manifest
// file it holds (`manifest` when present), else "foreign". A directory holding only our lock
// and record files (core/dir_lock.hpp, kWrittenRecord) is empty.
enum class DirKind { Absent, Empty, Ours, Foreign };
DirKind classify_dir(const std::filesystem::path& dir, std::string_view manifest);
// Before the lock is taken: Foreign, and no lock file in it either (so no writer of ours,
// whose temporary files classify_dir would call foreign, may be at work there: the caller
// takes the lock and classifies again, and a live holder is named).
bool foreign_before_lock(const std::filesystem::path& dir, std::string_view manifest);

// Before --force removes the subtrees `roots` (relative to `dir`) that an earlier sweep or
// rank analysis wrote: throws InputError naming up to five entries under them that match
// none of `allowed` (globs over '/'-separated paths relative to `dir`). Nothing we did not
// write is deleted (core/output_policy's rule); files elsewhere in `dir` are left alone.
void check_only_ours(const std::filesystem::path& dir, const std::vector<std::string>& roots,
                     const std::vector<std::string>& allowed, const std::string& what);

// Files and bytes under DIR/REL (0 when absent or not a real directory).
std::pair<std::uint64_t, std::uint64_t> tree_size(const std::filesystem::path& dir, const std::filesystem::path& rel);

// The last line of a log that reports an error ("syncscope: error: ..."), else its last
// non-empty line; "" when the log is empty or unreadable. At most 300 characters.
std::string last_error_line(const std::filesystem::path& dir, const std::filesystem::path& rel);

}  // namespace syncscope::cluster::detail
