// Issue 39, through the built `syncscope`: the per-directory lock (core/dir_lock.hpp) held by
// the job steps a batch system runs (`job sweep-report`, `job rank-part`, `job rank-merge`) as
// `sweep` and `analyze --out` hold it, and the `.partial-*` cleanup of sweep and run: a dead
// writer's partial directory is removed by the next writer, a live one's is not, and nothing
// a user put there under a look-alike name is touched.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "syncscope/core/output_policy.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

const char* kTiny = R"(name: tiny
model:
  name: Tiny
  num_hidden_layers: 2
  hidden_size: 256
  num_attention_heads: 4
  num_key_value_heads: 2
  head_dim: 64
  intermediate_size: 512
  vocab_size: 1000
batch:
  packed_tokens: 256
  min_len: 32
  max_len: 128
  seed: 1
fixes:
  packing:
    variants: [rebuild, cached]
measure:
  warmup_steps: 0
  repeat_steps: 1
)";

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `syncscope ARGS` run by bash in `cwd`.
Result run(const fs::path& cwd, const std::string& args) {
  const fs::path out = cwd / ".stdout", err = cwd / ".stderr";
  const std::string script = "cd '" + cwd.string() + "' && '" SYNCSCOPE_CLI "' " + args + " > '" + out.string() +
                             "' 2> '" + err.string() + "' < /dev/null";
  const int status = std::system(script.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << args << ": " << r.err;
  return r;
}

// Holds DIR's lock as another syncscope would: exclusively with its text, or shared (a
// running task) with none.
struct HeldLock {
  int fd = -1;
  HeldLock(const fs::path& dir, const std::string& text, int op = LOCK_EX) {
    fd = ::open((dir / ".syncscope-lock").c_str(), O_RDWR | O_CREAT, 0644);
    EXPECT_EQ(::flock(fd, op | LOCK_NB), 0);
    EXPECT_EQ(::ftruncate(fd, 0), 0);  // as a holder finds it: an earlier one let go cleanly
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  ~HeldLock() { ::close(fd); }
};
const std::string kHolder = "pid 4242 on host elsewhere since 2026-12-03T12:00:00Z\n";
const std::string kStale = "pid 999999 on host gone since 2026-12-03T12:00:00Z\n";  // nobody holds it

// A sweep planned in D/sw (nothing run), and a rank analysis planned in D/J (2 parts).
void planned_sweep(const fs::path& d) {
  put(d / "s.yaml", kTiny);
  const Result r = run(d, "sweep s.yaml --device sim --dry-run --out sw");
  ASSERT_EQ(r.code, 0) << r.err;
}
void planned_ranks(const fs::path& d) {
  const Result r =
      run(d, "analyze '" + test::fixture("ranks/nccl4").string() + "' --out J --ranks-per-task 2 --dry-run");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(nlohmann::json::parse(slurp(d / "J" / "rank_job.json"))["tasks"], 2);
}

// ---- the lock of the job steps ---------------------------------------------------------------

TEST(JobLocks, SweepReportRefusedWhileAnotherWriterHoldsTheSweep) {
  test::TempDir d;
  planned_sweep(d.path());
  {
    HeldLock held(d / "sw", kHolder);
    const Result r = run(d.path(), "job sweep-report sw");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "another syncscope is writing this sweep directory (pid 4242 on host elsewhere")) << r.err;
    EXPECT_FALSE(present(d / "sw" / "report.html"));
    EXPECT_FALSE(present(d / "sw" / "results.csv"));
  }
  {
    // A task still running (a shared holder) keeps the report out too, said as such.
    HeldLock task(d / "sw", "", LOCK_SH);
    const Result r = run(d.path(), "job sweep-report sw");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "its running tasks")) << r.err;
    EXPECT_FALSE(present(d / "sw" / "report.html"));
  }
}

TEST(JobLocks, SweepReportTakesOverAStaleLock) {
  test::TempDir d;
  planned_sweep(d.path());
  put(d / "sw" / ".syncscope-lock", kStale);
  const Result r = run(d.path(), "job sweep-report sw");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "took over the lock of pid 999999 on host gone")) << r.out;
  EXPECT_TRUE(present(d / "sw" / "report.html"));
  EXPECT_EQ(slurp(d / "sw" / ".syncscope-lock"), "");  // let go cleanly
}

TEST(JobLocks, RankPartRefusedWhileAnExclusiveWriterHoldsTheDirectory) {
  test::TempDir d;
  planned_ranks(d.path());
  {
    HeldLock held(d / "J", kHolder);
    const Result r = run(d.path(), "job rank-part J 0 --lock-wait 0");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "another syncscope is writing this rank analysis directory (pid 4242 on host elsewhere"))
        << r.err;
    EXPECT_FALSE(present(d / "J" / "parts" / "part-00000.json"));
  }
  {
    // Parts run side by side: another part (a shared holder) does not keep this one out.
    HeldLock other_part(d / "J", "", LOCK_SH);
    const Result r = run(d.path(), "job rank-part J 0 --lock-wait 0");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(present(d / "J" / "parts" / "part-00000.json"));
  }
  const Result bad = run(d.path(), "job rank-part J 0 --lock-wait -1");
  EXPECT_EQ(bad.code, 2) << bad.err;
}

TEST(JobLocks, RankPartTakesOverAStaleLock) {
  test::TempDir d;
  planned_ranks(d.path());
  put(d / "J" / ".syncscope-lock", kStale);
  const Result r = run(d.path(), "job rank-part J 1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "took over the lock of pid 999999 on host gone")) << r.out;
  EXPECT_TRUE(present(d / "J" / "parts" / "part-00001.json"));
  EXPECT_EQ(slurp(d / "J" / ".syncscope-lock"), "");
}

TEST(JobLocks, RankMergeRefusedWhileAnotherWriterHoldsTheDirectory) {
  test::TempDir d;
  planned_ranks(d.path());
  for (const char* i : {"0", "1"}) ASSERT_EQ(run(d.path(), std::string("job rank-part J ") + i).code, 0);
  {
    HeldLock held(d / "J", kHolder);
    const Result r = run(d.path(), "job rank-merge J");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "another syncscope is writing this rank analysis directory (pid 4242 on host elsewhere"))
        << r.err;
    EXPECT_FALSE(present(d / "J" / "summary.json"));
  }
  {
    HeldLock part(d / "J", "", LOCK_SH);  // a part still running
    const Result r = run(d.path(), "job rank-merge J");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_FALSE(present(d / "J" / "summary.json"));
  }
  put(d / "J" / ".syncscope-lock", kStale);
  const Result r = run(d.path(), "job rank-merge J");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "took over the lock of pid 999999 on host gone")) << r.out;
  EXPECT_TRUE(present(d / "J" / "summary.json"));
  EXPECT_EQ(slurp(d / "J" / ".syncscope-lock"), "");
}

// ---- .partial-* cleanup ---------------------------------------------------------------------

// A pid that is certainly not running: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int st = 0;
  ::waitpid(child, &st, 0);
  return child;
}

// Partial directories of TARGET as run makes them (core/output_policy.hpp), renamed to
// TARGET.partial-SUFFIX: one whose writer is gone, one whose writer is this test (alive).
fs::path partial_of(const fs::path& target, const std::string& suffix, pid_t pid) {
  const fs::path p = make_partial_dir(target);
  if (pid != ::getpid()) {
    std::string marker = slurp(p / kPartialMarker);
    const std::string me = std::to_string(::getpid());
    marker.replace(marker.find("\npid " + me + "\n") + 5, me.size(), std::to_string(pid));
    put(p / kPartialMarker, marker);
  }
  put(p / "results.json", "{}");  // a file it had written before it stopped
  const fs::path named = target.string() + ".partial-" + suffix;
  fs::rename(p, named);
  return named;
}

// Next to TARGET, what a user may have that looks like a partial directory, none of it ours:
// a file, a directory without our marker, one whose marker is not ours, a link to a directory
// holding a dead writer's marker.
void users_lookalikes(const fs::path& target, const fs::path& elsewhere) {
  const std::string base = target.string() + ".partial-";
  put(base + "notours", "syncscope partial results v1\npid 999999\nhost x\n");
  fs::create_directories(base + "nomarker");
  put(base + "nomarker/results.json", "{\"mine\": true}");
  fs::create_directories(base + "othermarker");
  put(base + "othermarker/" + kPartialMarker, "my own notes\n");
  const fs::path victim = partial_of(elsewhere / "v", "dead", dead_pid());
  fs::create_directory_symlink(victim, base + "link");
}
void expect_lookalikes_kept(const fs::path& target, const fs::path& elsewhere, const std::string& what) {
  const std::string base = target.string() + ".partial-";
  EXPECT_EQ(slurp(base + "notours"), "syncscope partial results v1\npid 999999\nhost x\n") << what;
  EXPECT_EQ(slurp(base + "nomarker/results.json"), "{\"mine\": true}") << what;
  EXPECT_EQ(slurp(base + "othermarker/" + kPartialMarker), "my own notes\n") << what;
  EXPECT_TRUE(fs::is_symlink(base + "link")) << what;
  EXPECT_TRUE(present(elsewhere / "v.partial-dead" / "results.json")) << what;  // not followed
}

TEST(PartialCleanup, RunRemovesADeadWritersPartialOnly) {
  test::TempDir d;
  put(d / "s.yaml", kTiny);
  const fs::path dead = partial_of(d / "res", "dead", dead_pid());
  const fs::path live = partial_of(d / "res", "live", ::getpid());
  fs::create_directories(d / "elsewhere");
  users_lookalikes(d / "res", d / "elsewhere");
  const Result r = run(d.path(), "run s.yaml --device sim --out res");
  EXPECT_LE(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out + r.err, "removed the stale partial directory " + dead.string())) << r.out << r.err;
  EXPECT_FALSE(present(dead));
  EXPECT_TRUE(present(live / kPartialMarker));
  EXPECT_TRUE(present(live / "results.json"));
  expect_lookalikes_kept(d / "res", d / "elsewhere", "run");
  EXPECT_TRUE(present(d / "res" / "results.json"));
}

// A FIFO planted where a partial directory's marker goes: read as a regular file only, so the
// next run neither hangs on it nor takes the directory for ours.
TEST(PartialCleanup, AFifoAsTheMarkerDoesNotHangTheNextRun) {
  test::TempDir d;
  put(d / "s.yaml", kTiny);
  const fs::path planted = d / "res.partial-fifo";
  fs::create_directories(planted);
  ASSERT_EQ(::mkfifo((planted / kPartialMarker).c_str(), 0600), 0);
  const Result r = run(d.path(), "run s.yaml --device sim --out res");
  EXPECT_LE(r.code, 1) << r.err;
  EXPECT_TRUE(present(planted / kPartialMarker));
  EXPECT_TRUE(present(d / "res" / "results.json"));
}

TEST(PartialCleanup, SweepRemovesADeadWritersPartialOfATaskOnly) {
  test::TempDir d;
  planned_sweep(d.path());
  const fs::path task = fs::absolute(d / "sw" / "tasks" / "s--default");
  fs::create_directories(task.parent_path());
  const fs::path dead = partial_of(task, "dead", dead_pid());
  const fs::path live = partial_of(task, "live", ::getpid());
  fs::create_directories(d / "elsewhere");
  users_lookalikes(task, d / "elsewhere");
  const Result r = run(d.path(), "sweep s.yaml --device sim --out sw");
  EXPECT_LE(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out, "removed the stale partial directory")) << r.out;
  EXPECT_FALSE(present(dead));
  EXPECT_TRUE(present(live / kPartialMarker));
  expect_lookalikes_kept(task, d / "elsewhere", "sweep");
  EXPECT_TRUE(present(task / "results.json"));
}

TEST(PartialCleanup, SweepForceKeepsAUsersLookalikes) {
  test::TempDir d;
  planned_sweep(d.path());
  put(d / "b.yaml", std::string(kTiny).replace(0, 10, "name: tinb"));
  ASSERT_LE(run(d.path(), "sweep s.yaml --device sim --out sw").code, 1);
  const fs::path task = fs::absolute(d / "sw" / "tasks" / "s--default");
  const std::string base = task.string() + ".partial-";
  put(base + "note", "my note\n");
  fs::create_directories(base + "mine");
  put(base + "mine/results.json", "{\"mine\": true}");
  const fs::path dead = partial_of(task, "dead", dead_pid());
  const Result r = run(d.path(), "sweep b.yaml --device sim --out sw --force");
  EXPECT_LE(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.out, "replaced the earlier sweep")) << r.out << r.err;
  EXPECT_FALSE(present(task));
  EXPECT_FALSE(present(dead));  // the earlier sweep's own, checked file by file, went with it
  EXPECT_EQ(slurp(base + "note"), "my note\n");
  EXPECT_EQ(slurp(base + "mine/results.json"), "{\"mine\": true}");
}

}  // namespace
}  // namespace syncscope
