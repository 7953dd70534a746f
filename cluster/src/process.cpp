#include "syncscope/cluster/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

extern char** environ;

namespace syncscope::cluster {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  v.reserve(argv.size() + 1);
  for (const auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

// Children start with default signal dispositions and an empty mask, whatever ours are.
struct SpawnAttr {
  posix_spawnattr_t attr;
  SpawnAttr() {
    posix_spawnattr_init(&attr);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  ~SpawnAttr() { posix_spawnattr_destroy(&attr); }
};

struct FileActions {
  posix_spawn_file_actions_t fa;
  FileActions() { posix_spawn_file_actions_init(&fa); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa); }
};

void finish(ProcessResult& r, int status) {
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

// run_logged's signal forwarding: the handler only reads and writes these.
std::atomic<pid_t> g_child{0};
std::atomic<int> g_signal{0};

void forward_signal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  const pid_t c = g_child.load();
  if (c > 0) ::kill(c, sig);
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + error;
  if (signal != 0) {
    const char* name = ::sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : std::string());
  }
  return "exit status " + std::to_string(exit_code);
}

std::optional<std::filesystem::path> find_program(std::string_view name, const char* path_list) {
  if (name.empty()) return std::nullopt;
  auto executable = [](const std::filesystem::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string_view::npos) {
    std::filesystem::path p(name);
    if (executable(p)) return p;
    return std::nullopt;
  }
  const char* env = path_list ? path_list : std::getenv("PATH");
  std::string_view paths = env ? env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = paths.find(':');
    std::string_view dir = paths.substr(0, colon);
    std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / std::string(name);
    if (executable(p)) return p;
    if (colon == std::string_view::npos) break;
    paths.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

ProcessResult run_capture(const std::vector<std::string>& argv, std::size_t max_bytes) {
  ProcessResult r;
  if (argv.empty()) {
    r.error = "no program";
    return r;
  }
  const auto prog = find_program(argv[0]);
  if (!prog) {
    r.error = argv[0] + " not found" + (argv[0].find('/') == std::string::npos ? " on PATH" : "");
    return r;
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return r;
  }
  FileActions fa;
  posix_spawn_file_actions_addopen(&fa.fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa.fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa.fa, err_pipe[1], 2);
  SpawnAttr attr;
  auto args = c_argv(argv);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, prog->c_str(), &fa.fa, &attr.attr, args.data(), environ);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    r.error = prog->string() + ": " + std::strerror(rc);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return r;
  }
  r.started = true;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[8192];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        const std::size_t room = max_bytes > sinks[i]->size() ? max_bytes - sinks[i]->size() : 0;
        sinks[i]->append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  const int status = wait_child(pid);
  if (status < 0) {
    r.error = std::string("waitpid: ") + std::strerror(errno);
    r.started = false;
    return r;
  }
  finish(r, status);
  return r;
}

LoggedRun run_logged(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    LoggedRun lr;
    lr.result.error = log.string() + ": " + std::strerror(errno);
    return lr;
  }
  LoggedRun lr = run_logged(argv, fd);
  ::close(fd);
  return lr;
}

LoggedRun run_logged(const std::vector<std::string>& argv, int fd) {
  LoggedRun lr;
  ProcessResult& r = lr.result;
  if (argv.empty()) {
    r.error = "no program";
    return lr;
  }
  const auto prog = find_program(argv[0]);
  if (!prog) {
    r.error = argv[0] + " not found";
    return lr;
  }
  FileActions fa;
  posix_spawn_file_actions_addopen(&fa.fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa.fa, fd, 1);
  posix_spawn_file_actions_adddup2(&fa.fa, fd, 2);
  SpawnAttr attr;
  auto args = c_argv(argv);

  struct sigaction sa {
  }, old_term{}, old_int{}, old_hup{};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  g_signal = 0;
  g_child = 0;
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGHUP, &sa, &old_hup);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, prog->c_str(), &fa.fa, &attr.attr, args.data(), environ);
  int status = 0;
  if (rc == 0) {
    g_child = pid;
    if (const int s = g_signal.load(); s != 0) ::kill(pid, s);  // arrived before the child existed
    status = wait_child(pid);
    g_child = 0;
  }
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  lr.interrupted_by = g_signal.load();
  if (rc != 0) {
    r.error = prog->string() + ": " + std::strerror(rc);
    return lr;
  }
  r.started = true;
  if (status < 0) {
    r.error = std::string("waitpid: ") + std::strerror(errno);
    r.started = false;
    return lr;
  }
  finish(r, status);
  return lr;
}

namespace {

// run_in_process_group's forwarding: the handler only reads these and calls kill(2).
std::atomic<pid_t> g_group{0};
std::atomic<int> g_group_signal{0};
constexpr int kGroupForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void forward_to_group(int sig) {
  int expected = 0;
  g_group_signal.compare_exchange_strong(expected, sig);
  const pid_t g = g_group.load();
  if (g > 0) ::kill(-g, sig);
}

// Gives the terminal on fd 0 to process group `pgid`. SIGTTOU is ignored meanwhile: a
// background process taking the terminal back would otherwise be stopped by it.
void give_terminal(pid_t pgid) {
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGTTOU, &ign, &old);
  (void)::tcsetpgrp(STDIN_FILENO, pgid);
  ::sigaction(SIGTTOU, &old, nullptr);
}

}  // namespace

GroupRun run_in_process_group(const std::vector<std::string>& argv, const EnvChanges& env, const char* pid_env) {
  GroupRun g;
  ProcessResult& r = g.result;
  if (argv.empty()) {
    r.error = "no program";
    return g;
  }
  // Ours only when we are in the terminal's foreground: not under nohup, in a pipeline's
  // background, or in a batch job.
  const bool terminal = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return g;
  }
  struct sigaction sa {};
  sa.sa_handler = forward_to_group;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  struct sigaction old[std::size(kGroupForwarded)];
  g_group = 0;
  g_group_signal = 0;
  for (std::size_t i = 0; i < std::size(kGroupForwarded); ++i) ::sigaction(kGroupForwarded[i], &sa, &old[i]);
  auto args = c_argv(argv);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The child: its own group (also set by the parent: whichever runs first), the terminal
    // when we had it, default signal handling, the environment, then exec.
    ::setpgid(0, 0);
    if (terminal) give_terminal(::getpid());
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig : kGroupForwarded) ::sigaction(sig, &dfl, nullptr);
    for (int sig : {SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE}) ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (const auto& [name, value] : env) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
    if (pid_env) ::setenv(pid_env, std::to_string(static_cast<long>(::getpid())).c_str(), 1);
    ::execvp(args[0], args.data());
    const int err = errno;
    (void)!::write(status_pipe[1], &err, sizeof err);
    ::_exit(err == ENOENT ? 127 : 126);
  }
  ::close(status_pipe[1]);
  if (pid < 0) {
    const int err = errno;
    ::close(status_pipe[0]);
    for (std::size_t i = 0; i < std::size(kGroupForwarded); ++i) ::sigaction(kGroupForwarded[i], &old[i], nullptr);
    r.error = std::string("fork: ") + std::strerror(err);
    return g;
  }
  ::setpgid(pid, pid);
  if (terminal) give_terminal(pid);
  g_group = pid;
  if (const int s = g_group_signal.load(); s != 0) ::kill(-pid, s);  // arrived before the group existed
  ssize_t got;
  while ((got = ::read(status_pipe[0], &g.exec_errno, sizeof g.exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(status_pipe[0]);
  const bool exec_failed = got == static_cast<ssize_t>(sizeof g.exec_errno);
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WUNTRACED);
    if (w < 0) {
      if (errno == EINTR) continue;
      status = -1;
      break;
    }
    if (!WIFSTOPPED(status)) break;
    // Stopped (Ctrl-Z): stop with it, so the shell sees the job stopped; on `fg`, hand the
    // terminal back and continue the program.
    if (terminal) give_terminal(::getpgrp());
    ::kill(::getpid(), SIGSTOP);
    if (terminal) give_terminal(pid);
    ::kill(-pid, SIGCONT);
  }
  g_group = 0;
  if (terminal) give_terminal(::getpgrp());
  for (std::size_t i = 0; i < std::size(kGroupForwarded); ++i) ::sigaction(kGroupForwarded[i], &old[i], nullptr);
  g.forwarded = g_group_signal.load();
  if (status < 0) {
    r.error = std::string("waitpid: ") + std::strerror(errno);
    return g;
  }
  finish(r, status);
  if (exec_failed) {
    r.error = argv[0] + ": " + std::strerror(g.exec_errno);
    return g;  // started stays false
  }
  r.started = true;
  return g;
}

std::string shell_quote(std::string_view s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:@%+,") ==
                        std::string_view::npos)
    return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

}  // namespace syncscope::cluster
