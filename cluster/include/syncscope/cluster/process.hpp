// Running other programs: Slurm's clients (sbatch, squeue, scontrol) with their output
// captured, and `syncscope run` for a sweep task with its output in a log file. POSIX only.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace syncscope::cluster {

struct ProcessResult {
  bool started = false;  // false: it could not be started (`error` says why)
  int exit_code = -1;    // when it exited
  int signal = 0;        // when a signal ended it
  std::string out;       // captured stdout (run_capture)
  std::string err;       // captured stderr (run_capture)
  std::string error;     // why it did not start
  bool ok() const { return started && signal == 0 && exit_code == 0; }
  // "exit status 2", "killed by signal 9 (SIGKILL)", "could not start: ..."
  std::string describe() const;
};

// The program's path: `name` itself when it holds a '/', else the first executable file
// named so in $PATH (or in `path_list`, ':'-separated, when given).
std::optional<std::filesystem::path> find_program(std::string_view name, const char* path_list = nullptr);

// Runs argv (argv[0] looked up like find_program), captures stdout and stderr (each kept up
// to `max_bytes`; the rest is read and dropped so the child never blocks) and waits.
ProcessResult run_capture(const std::vector<std::string>& argv, std::size_t max_bytes = std::size_t{1} << 20);

// Runs argv with stdin from /dev/null and stdout and stderr appended to `log`, and waits.
// SIGTERM, SIGINT and SIGHUP received meanwhile are passed on to the child (Slurm signals
// a cancelled or timed-out job this way) and reported in `interrupted_by`.
struct LoggedRun {
  ProcessResult result;
  int interrupted_by = 0;  // the first signal passed on, 0 when none
};
LoggedRun run_logged(const std::vector<std::string>& argv, const std::filesystem::path& log);
// The same with the log already open for appending (the caller keeps and closes `log_fd`).
LoggedRun run_logged(const std::vector<std::string>& argv, int log_fd);

// Runs argv (looked up on $PATH like execvp) in a process group of its own, with standard
// input, output and error inherited and `env` applied over ours (nullopt: unset). While it
// runs, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to this process are passed
// on to the whole group, so the program's own children (a launcher's workers, data loader
// processes) get them too. When our standard input is the terminal and we are in its
// foreground, the group gets the terminal (Ctrl-C reaches it directly, as a shell does for
// a job) and gives it back at the end; a program stopped by Ctrl-Z stops us too, and `fg`
// continues both. `exec_errno` is set when the program could not be started (result.started
// false, exit_code 127 for ENOENT, else 126).
struct GroupRun {
  ProcessResult result;
  int exec_errno = 0;
  int forwarded = 0;  // the first signal passed on, 0 when none
};
using EnvChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;
// `pid_env`, when given, is set in the program's environment to its own pid.
GroupRun run_in_process_group(const std::vector<std::string>& argv, const EnvChanges& env,
                              const char* pid_env = nullptr);

// A string as one shell word: 'it'\''s'.
std::string shell_quote(std::string_view s);

}  // namespace syncscope::cluster
