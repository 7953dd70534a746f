// Issue 39 ("nothing lost, round three"), through the built `syncscope`: each reproduction of
// the issue's "Why" as one test, with the exit status, what stderr or stdout must say and
// what must (not) be on disk afterwards.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "sanitizers.hpp"
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

// `syncscope ARGS` run by bash in `cwd`, `env` before it (a variable, `timeout 60`, ulimit).
Result run(const fs::path& cwd, const std::string& args, const std::string& env = "") {
  const fs::path out = cwd / ".stdout", err = cwd / ".stderr";
  const std::string script = "cd '" + cwd.string() + "' && { " + env + " '" SYNCSCOPE_CLI "' " + args + " ; } > '" +
                             out.string() + "' 2> '" + err.string() + "' < /dev/null";
  put(cwd / ".cmd", script);
  const int status = std::system(("bash '" + (cwd / ".cmd").string() + "'").c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  fs::remove(cwd / ".cmd");
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << args << ": " << r.err;
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The all-categories fixture with a kernel, a step-like range and the trace name set to a
// terminal escape (set the window title, clear the screen) and a bidi override.
const std::string kEvil = "\\u001b]0;owned\\u0007\\u001b[2J\\u202e";
void evil_trace(const fs::path& p) {
  std::string t = slurp(test::fixture("traces/kineto_all_categories.json"));
  for (const std::string from : {"triton_poi_fused_0", "void gemm<\\\"q\\\">(float*) \\u00e9\\t"}) {
    for (std::size_t at = t.find(from); at != std::string::npos; at = t.find(from, at + 1))
      t.replace(at, from.size(), "k" + kEvil);
  }
  put(p, t);
}
void no_raw_controls(const Result& r, const std::string& what) {
  for (const std::string* s : {&r.out, &r.err}) {
    EXPECT_EQ(s->find('\x1b'), std::string::npos) << what << ": " << *s;
    EXPECT_EQ(s->find('\x07'), std::string::npos) << what << ": " << *s;
    EXPECT_EQ(s->find("\u202e"), std::string::npos) << what << ": " << *s;
  }
}

// ---- names printed raw ---------------------------------------------------------------------

TEST(Round3Names, AnalyzeDiffCalibratePrintKernelNamesEscaped) {
  test::TempDir d;
  evil_trace(d / "t.json");
  const Result a = run(d.path(), "analyze t.json");
  ASSERT_EQ(a.code, 0) << a.err;
  no_raw_controls(a, "analyze");
  EXPECT_TRUE(has(a.out, "k\\x1B]0;owned\\x07\\x1B[2J\\u{202E}")) << a.out;
  const Result df = run(d.path(), "diff t.json t.json");
  no_raw_controls(df, "diff");
  const Result c = run(d.path(), "calibrate --from-trace t.json --base H200 --output p.yaml --step-range '*'");
  no_raw_controls(c, "calibrate");
}

TEST(Round3Names, ScenarioNameWithBidiOverrideRefusedAtParse) {
  test::TempDir d;
  put(d / "s.yaml", std::string(kTiny).replace(0, 10, "name: \"ab\\u202Ecd\""));
  const Result r = run(d.path(), "run s.yaml --device sim --out res");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "U+202E")) << r.err;
  EXPECT_FALSE(present(d / "res"));
}

TEST(Round3Names, ScenarioNameOver255BytesRefusedAtParse) {
  test::TempDir d;
  std::string name;
  for (int i = 0; i < 128; ++i) name += "é";  // 128 characters, 256 bytes
  put(d / "s.yaml", std::string(kTiny).replace(0, 10, "name: " + name));
  const Result r = run(d.path(), "run s.yaml --device sim");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "256 bytes in UTF-8; at most 255")) << r.err;
}

TEST(Round3Names, CalibrateNameIsANameNotAPath) {
  test::TempDir d;
  fs::create_directories(d / "w");
  for (const std::string& bad : std::vector<std::string>{"../x", (d / "abs").string(), "..", "a\x1b[2J"}) {
    const Result r = run(d / "w", "calibrate --from-trace t.json --base H200 --name $'" + bad + "'");
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_TRUE(has(r.err, "--name")) << r.err;
    no_raw_controls(r, bad);
  }
  EXPECT_FALSE(present(d / "x.yaml"));
  EXPECT_FALSE(present(d / "abs.yaml"));
}

// ---- readers that are not strict where it matters ------------------------------------------

TEST(Round3Readers, TraceDuplicateDurKeepsTheFirstAndSaysSo) {
  test::TempDir d;
  std::string t = slurp(test::fixture("traces/kineto_all_categories.json"));
  const auto at = t.find("\"dur\":", t.find("triton_poi_fused_0"));
  ASSERT_NE(at, std::string::npos);
  t.insert(at, "\"dur\": 1000000000000000, ");  // a kernel of 1e9 s, given first... then the real one
  put(d / "t.json", t);
  const Result r = run(d.path(), "analyze t.json --format json --output a.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "more than once")) << r.err;
  EXPECT_TRUE(has(r.err, "the first value was kept")) << r.err;
}

// A run directory of the tiny scenario on the simulator, its results.json edited by `edit`.
fs::path edited_run(const fs::path& d, const std::function<void(std::string&)>& edit) {
  put(d / "tiny.yaml", kTiny);
  const Result r = run(d, "run tiny.yaml --device sim --out res");
  EXPECT_LE(r.code, 1) << r.err;
  std::string j = slurp(d / "res" / "results.json");
  edit(j);
  put(d / "res" / "results.json", j);
  return d / "res";
}

TEST(Round3Readers, ReportAndValidateRefuseADuplicateMode) {
  test::TempDir d;
  edited_run(d.path(), [](std::string& j) { j.insert(j.find('{') + 1, "\n  \"mode\": \"measured\","); });
  const Result rep = run(d.path(), "report res -o r.html");
  EXPECT_EQ(rep.code, 2) << rep.err;
  // Named at its second occurrence, file:line:column, with its JSON path.
  EXPECT_TRUE(has(rep.err, "res/results.json:")) << rep.err;
  EXPECT_TRUE(has(rep.err, ":3: duplicate key 'mode' (at $.mode)")) << rep.err;
  EXPECT_FALSE(present(d / "r.html"));
  const Result val = run(d.path(), "validate res");
  EXPECT_EQ(val.code, 2) << val.err;
  EXPECT_TRUE(has(val.err, "duplicate key 'mode'")) << val.err;
}

TEST(Round3Readers, NumbersBoundedByPhysicalSense) {
  for (const auto& [field, value, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"syncs_per_step", "-1e18", "syncs_per_step: -1e+18 is out of range"},
           {"h2d_overlap_fraction", "1.5", "h2d_overlap_fraction: 1.5 is out of range: expected a fraction"}}) {
    test::TempDir d;
    // Copies: a lambda may not capture a structured binding before C++20's P1091 (clang < 16).
    const std::string key = field, text = value;
    edited_run(d.path(), [&](std::string& j) {
      auto doc = nlohmann::ordered_json::parse(j);
      doc["variants"][0][key] = nlohmann::json::parse(text);
      j = doc.dump(2);
    });
    for (const std::string cmd : {"report res -o r.html", "validate res"}) {
      const Result r = run(d.path(), cmd);
      EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
      EXPECT_TRUE(has(r.err, says)) << cmd << ": " << r.err;
    }
  }
  test::TempDir d;
  edited_run(d.path(), [](std::string& j) {
    auto doc = nlohmann::ordered_json::parse(j);
    doc["variants"][0]["step_time_ns"]["lo"] = -5;
    j = doc.dump(2);
  });
  const Result r = run(d.path(), "report res -o r.html");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "step_time_ns.lo: -5 is out of range")) << r.err;
}

TEST(Round3Readers, ValidateRefusesAFifoWithoutWaiting) {
  test::TempDir d;
  fs::create_directories(d / "res");
  ASSERT_EQ(::mkfifo((d / "res" / "results.json").c_str(), 0600), 0);
  for (const std::string arg : {"res", "res/results.json"}) {
    const Result r = run(d.path(), "validate " + arg, "timeout 60");
    EXPECT_EQ(r.code, 2) << arg << ": " << r.err;  // 124 when it hung
    EXPECT_TRUE(has(r.err, "is a FIFO (named pipe), expected a regular file")) << r.err;
  }
  const Result rep = run(d.path(), "report res -o r.html", "timeout 60");
  EXPECT_EQ(rep.code, 2) << rep.err;
}

TEST(Round3Readers, OutOfMemoryNamesTheFile) {
#if defined(SYNCSCOPE_TEST_ASAN)
  GTEST_SKIP() << "an address-space limit (ulimit -v) cannot hold an ASan build; checked in the ci build";
#endif
  test::TempDir d;
  fs::create_directories(d / "big");
  // 250 MiB (sparse: no disk used) read under a 200 MB address space: the buffer cannot be had.
  put(d / "big" / "results.json", "");
  fs::resize_file(d / "big" / "results.json", std::uintmax_t{250} << 20);
  const Result r = run(d.path(), "validate big", "ulimit -v 200000;");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.err, "out of memory while reading big/results.json (0 MiB so far)")) << r.err;
  EXPECT_FALSE(has(r.err, "bad_alloc")) << r.err;
}

TEST(Round3Readers, OutOfMemoryInAReaderThreadNamesItsFile) {
#if defined(SYNCSCOPE_TEST_ASAN)
  GTEST_SKIP() << "an address-space limit (ulimit -v) cannot hold an ASan build; checked in the ci build";
#endif
  test::TempDir d;
  fs::create_directories(d / "R");
  for (const auto& e : fs::directory_iterator(test::fixture("ranks/nccl4")))
    if (e.path().extension() == ".json") fs::copy_file(e.path(), d / "R" / e.path().filename());
  // rank3: an event whose name is 300 MB (300 kB gzipped), read by one of three threads
  // under a 500 MB address space.
  std::string t = slurp(test::fixture("ranks/nccl4/node0_1000.1700000000000000000.pt.trace.json"));
  t.replace(t.find("\"rank\": 0"), 9, "\"rank\": 3");
  const std::size_t at = t.find('[', t.find("\"traceEvents\"")) + 1;
  put(d / "pre", t.substr(0, at) + "\n{\"ph\": \"i\", \"cat\": \"cpu_op\", \"name\": \"");
  put(d / "post", "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"s\": \"t\"}," + t.substr(at));
  const std::string make = "cd '" + d.path().string() +
                           "' && { cat pre; head -c 300000000 /dev/zero | tr '\\0' a; cat post; } | gzip -1 > "
                           "R/rank3.pt.trace.json.gz";
  ASSERT_EQ(std::system(make.c_str()), 0);
  const Result r = run(d.path(), "analyze R --jobs 3", "ulimit -v 500000;");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.err, "out of memory while reading ")) << r.err;
  EXPECT_TRUE(has(r.err, "R/rank3.pt.trace.json.gz")) << r.err;
}

// ---- sweeps: edits kept, one writer, plans checked -----------------------------------------

TEST(Round3Sweep, ForceKeepsAnEditedResultsCsv) {
  test::TempDir d;
  put(d / "a.yaml", kTiny);
  put(d / "b.yaml", std::string(kTiny).replace(0, 10, "name: tinb"));
  const Result a = run(d.path(), "sweep a.yaml --device sim --out D");
  ASSERT_LE(a.code, 1) << a.err;
  ASSERT_TRUE(present(d / "D" / "results.csv"));
  put(d / "D" / "results.csv", slurp(d / "D" / "results.csv") + "my edit\n");
  const Result b = run(d.path(), "sweep b.yaml --device sim --out D --force");
  EXPECT_EQ(b.code, 2) << b.err;
  EXPECT_TRUE(has(b.err, "results.csv (changed since syncscope wrote it)")) << b.err;
  EXPECT_TRUE(has(slurp(d / "D" / "results.csv"), "my edit"));
  // Untouched, the same --force replaces the earlier sweep.
  fs::remove(d / "D" / "results.csv");
  const Result c = run(d.path(), "sweep b.yaml --device sim --out D --force");
  EXPECT_LE(c.code, 1) << c.err;
  EXPECT_TRUE(has(c.out, "replaced the earlier sweep")) << c.out;
}

// Holds DIR's lock as another syncscope would, with its text.
struct HeldLock {
  int fd = -1;
  HeldLock(const fs::path& dir, const std::string& text) {
    fs::create_directories(dir);
    fd = ::open((dir / ".syncscope-lock").c_str(), O_RDWR | O_CREAT, 0644);
    EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  ~HeldLock() { ::close(fd); }
};

TEST(Round3Sweep, SecondWriterRefusedNamingTheHolder) {
  test::TempDir d;
  put(d / "s.yaml", kTiny);
  HeldLock held(d / "D", "pid 4242 on host elsewhere since 2026-12-03T12:00:00Z\n");
  const Result r = run(d.path(), "sweep s.yaml --device sim --out D");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "another syncscope is writing this sweep directory (pid 4242 on host elsewhere")) << r.err;
  EXPECT_FALSE(present(d / "D" / "sweep.json"));
  // A rank analysis directory likewise.
  HeldLock held2(d / "J", "pid 4343 on host elsewhere since 2026-12-03T12:00:00Z\n");
  const Result j = run(d.path(), "analyze '" + test::fixture("ranks/nccl4").string() + "' --out J");
  EXPECT_EQ(j.code, 2) << j.err;
  EXPECT_TRUE(has(j.err, "pid 4343")) << j.err;
  EXPECT_FALSE(present(d / "J" / "rank_job.json"));
}

TEST(Round3Sweep, StaleLockTakenOverAndSaid) {
  test::TempDir d;
  put(d / "s.yaml", kTiny);
  fs::create_directories(d / "D");
  put(d / "D" / ".syncscope-lock", "pid 999999 on host gone since 2026-12-03T12:00:00Z\n");  // nobody holds it
  const Result r = run(d.path(), "sweep s.yaml --device sim --dry-run --out D");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "took over the lock of pid 999999 on host gone")) << r.out;
  EXPECT_TRUE(present(d / "D" / "sweep.json"));
  EXPECT_EQ(slurp(d / "D" / ".syncscope-lock"), "");  // let go cleanly
}

void planned(const fs::path& d, const std::string& scenarios = "s.yaml") {
  put(d / "s.yaml", kTiny);
  put(d / "t.yaml", std::string(kTiny).replace(0, 10, "name: tint"));
  const Result r = run(d, "sweep " + scenarios + " --device sim --dry-run --out sw");
  ASSERT_EQ(r.code, 0) << r.err;
}

TEST(Round3Sweep, DuplicateTaskNamesInAPlantedPlanRefused) {
  test::TempDir d;
  planned(d.path(), "s.yaml t.yaml");
  auto j = nlohmann::json::parse(slurp(d / "sw" / "sweep.json"));
  j["tasks"][1]["name"] = j["tasks"][0]["name"];
  put(d / "sw" / "sweep.json", j.dump(2));
  const Result r = run(d.path(), "job sweep-task sw 1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "tasks 0 and 1 are both named 's--default'")) << r.err;
  EXPECT_FALSE(present(d / "sw" / "tasks" / "s--default"));
}

TEST(Round3Sweep, DuplicateKeyInSweepJsonRefused) {
  test::TempDir d;
  planned(d.path());
  std::string s = slurp(d / "sw" / "sweep.json");
  s.insert(s.find('{') + 1, "\n  \"device\": \"cuda\",");
  put(d / "sw" / "sweep.json", s);
  const Result r = run(d.path(), "sweep --status sw");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "sw/sweep.json:6:3: duplicate key 'device' (at $.device)")) << r.err;
}

TEST(Round3Sweep, NegativeTaskIndexIsNotANumber) {
  test::TempDir d;
  planned(d.path());
  for (const char* bad : {"-1", "+0", "1x", "99999999999999999999"}) {
    const Result r = run(d.path(), std::string("job sweep-task sw -- ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_TRUE(has(r.err, "is not a number")) << bad << ": " << r.err;
    EXPECT_FALSE(has(r.err, "18446744073709551615")) << r.err;
  }
}

TEST(Round3Sweep, StatusNamesASymlinkedTask) {
  test::TempDir d;
  planned(d.path());
  fs::create_directories(d / "sw" / "tasks");
  fs::create_directories(d / "elsewhere");
  fs::create_symlink(d / "elsewhere", d / "sw" / "tasks" / "s--default");
  const Result r = run(d.path(), "sweep --status sw");
  EXPECT_TRUE(has(r.out, "is a symbolic link, not the directory a run wrote")) << r.out << r.err;
  EXPECT_FALSE(has(r.out, "missing")) << r.out;
}

// ---- the audit's gaps (issue 39, round three) ----------------------------------------------

TEST(Round3Sweep, ForceKeepsAnEditedLogAndAUsersSlurmLog) {
  test::TempDir d;
  put(d / "a.yaml", kTiny);
  put(d / "b.yaml", std::string(kTiny).replace(0, 10, "name: tinb"));
  const Result a = run(d.path(), "sweep a.yaml --device sim --out D");
  ASSERT_LE(a.code, 1) << a.err;
  const fs::path log = d / "D" / "logs" / "a--default.log";
  ASSERT_TRUE(present(log));
  const std::string as_written = slurp(log);
  // A line appended to a log: it still starts with "$ ", and is still not what we wrote.
  put(log, as_written + "my note\n");
  const Result b = run(d.path(), "sweep b.yaml --device sim --out D --force");
  EXPECT_EQ(b.code, 2) << b.err;
  EXPECT_TRUE(has(b.err, "logs/a--default.log (changed since syncscope wrote it)")) << b.err;
  EXPECT_EQ(slurp(log), as_written + "my note\n");
  // A user's file beside the batch scripts: refused, named.
  put(log, as_written);
  fs::create_directories(d / "D" / "slurm" / "logs");
  put(d / "D" / "slurm" / "mine.sh", "#!/bin/sh\n");
  const Result c = run(d.path(), "sweep b.yaml --device sim --out D --force");
  EXPECT_EQ(c.code, 2) << c.err;
  EXPECT_TRUE(has(c.err, "slurm/mine.sh (not written by syncscope)")) << c.err;
  EXPECT_TRUE(present(d / "D" / "slurm" / "mine.sh"));
  // What Slurm (or a user) put in slurm/logs/ is never ours to remove: kept, and said.
  fs::remove(d / "D" / "slurm" / "mine.sh");
  put(d / "D" / "slurm" / "logs" / "mine.out", "my notes\n");
  const Result e = run(d.path(), "sweep b.yaml --device sim --out D --force");
  EXPECT_LE(e.code, 1) << e.err;
  EXPECT_TRUE(has(e.out, "replaced the earlier sweep")) << e.out;
  EXPECT_TRUE(has(e.out, "slurm/logs: Slurm wrote the jobs' output there, not syncscope")) << e.out;
  EXPECT_EQ(slurp(d / "D" / "slurm" / "logs" / "mine.out"), "my notes\n");
  EXPECT_FALSE(present(log));  // the earlier sweep's own log, as written: replaced
  EXPECT_TRUE(present(d / "D" / "logs" / "b--default.log"));
}

TEST(Round3Sweep, LoserOfTwoWritersNamesTheHolderWhileItWritesItsPlan) {
  test::TempDir d;
  put(d / "s.yaml", kTiny);
  // The winner holds the lock and is writing sweep.json (its temporary file is there).
  HeldLock held(d / "D", "pid 4242 on host elsewhere since 2026-12-03T12:00:00Z\n");
  put(d / "D" / ".sweep.json.tmp4242-17", "{\n");
  const Result r = run(d.path(), "sweep s.yaml --device sim --out D");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "another syncscope is writing this sweep directory (pid 4242 on host elsewhere")) << r.err;
  EXPECT_FALSE(has(r.err, "holds no syncscope sweep")) << r.err;
  // A rank analysis directory likewise.
  HeldLock held2(d / "J", "pid 4343 on host elsewhere since 2026-12-03T12:00:00Z\n");
  put(d / "J" / ".rank_job.json.tmp4343-5", "{\n");
  const Result j = run(d.path(), "analyze '" + test::fixture("ranks/nccl4").string() + "' --out J");
  EXPECT_EQ(j.code, 2) << j.err;
  EXPECT_TRUE(has(j.err, "pid 4343")) << j.err;
  EXPECT_FALSE(has(j.err, "holds no syncscope rank analysis")) << j.err;
  // Without a lock file, a folder of other files is still refused as it is, and gets no lock.
  fs::create_directories(d / "F");
  put(d / "F" / "notes.txt", "mine\n");
  const Result f = run(d.path(), "sweep s.yaml --device sim --out F");
  EXPECT_EQ(f.code, 2) << f.err;
  EXPECT_TRUE(has(f.err, "holds no syncscope sweep")) << f.err;
  EXPECT_FALSE(present(d / "F" / ".syncscope-lock"));
}

TEST(Round3Names, AnalyzeCsvEscapesKernelAndAnnotationNames) {
  test::TempDir d;
  evil_trace(d / "t.json");
  for (const std::string opts : {"--format csv", "--format csv --critical-path"}) {
    const Result a = run(d.path(), "analyze t.json " + opts);
    ASSERT_EQ(a.code, 0) << opts << ": " << a.err;
    no_raw_controls(a, opts);
    EXPECT_TRUE(has(a.out, "kernel,k\\x1B]0;owned\\x07\\x1B[2J\\u{202E},0,")) << opts << ": " << a.out;
  }
}

TEST(Round3Names, OptionErrorsAndSweepLogsEscaped) {
  test::TempDir d;
  // CLI11's own message ("File does not exist: NAME") quotes what was given.
  for (const std::string cmd : {"run ARG", "sweep --out D ARG", "convert ARG o.json"}) {
    const Result r = run(d.path(), std::string(cmd).replace(cmd.find("ARG"), 3, "$'nofile\\x1b]0;owned\\x07.yaml'"));
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    no_raw_controls(r, cmd);
    EXPECT_TRUE(has(r.err, "nofile\\x1B]0;owned\\x07.yaml")) << cmd << ": " << r.err;
  }
  // A sweep task's log quotes the scenario's path on its "$ " line.
  put(d / "e\x1b]0;owned\x07.yaml", kTiny);
  const Result s = run(d.path(), "sweep $'e\\x1b]0;owned\\x07.yaml' --device sim --out S");
  ASSERT_LE(s.code, 1) << s.err;
  no_raw_controls(s, "sweep");
  const std::string log = slurp(d / "S" / "logs" / "e__0_owned_--default.log");
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
  EXPECT_EQ(log.find('\x07'), std::string::npos) << log;
  EXPECT_TRUE(has(log, "e\\x1B]0;owned\\x07.yaml")) << log;
}

TEST(Round3Names, LongNameOfTwoByteCharactersRuns) {
  test::TempDir d;
  std::string name;
  for (int i = 0; i < 127; ++i) name += "é";  // 127 characters, 254 bytes: a valid name
  put(d / "s.yaml", std::string(kTiny).replace(0, 10, "name: " + name));
  const Result r = run(d.path(), "run s.yaml --device sim --out R");
  EXPECT_LE(r.code, 1) << r.err;
  EXPECT_FALSE(has(r.err, "too long")) << r.err;
  EXPECT_TRUE(present(d / "R" / "results.json")) << r.err;
  const Result s = run(d.path(), "sweep s.yaml --device sim --out S");
  EXPECT_LE(s.code, 1) << s.out << s.err;
  EXPECT_TRUE(present(d / "S" / "tasks" / "s--default" / "results.json")) << s.out;
  // A scenario file whose name makes a task name too long for the files named after it.
  const std::string long_file = std::string(230, 'a') + ".yaml";
  put(d / long_file, kTiny);
  const Result t = run(d.path(), "sweep " + long_file + " --device sim --out T");
  EXPECT_EQ(t.code, 2) << t.err;
  EXPECT_TRUE(has(t.err, "is 239 bytes; at most 200 are allowed")) << t.err;
  EXPECT_FALSE(present(d / "T" / "sweep.json"));
}

TEST(Round3Readers, DuplicateKeyWarnedByEveryCommandThatReadsATrace) {
  test::TempDir d;
  std::string t = slurp(test::fixture("traces/kineto_all_categories.json"));
  const auto at = t.find("\"dur\":", t.find("triton_poi_fused_0"));
  ASSERT_NE(at, std::string::npos);
  t.insert(at, "\"dur\": 1000000000000000, ");
  put(d / "t.json", t);
  for (const std::string cmd : {"diff t.json t.json", "convert t.json c.json",
                                "calibrate --from-trace t.json --base H200 --output p.yaml --step-range '*'"}) {
    const Result r = run(d.path(), cmd);
    EXPECT_TRUE(has(r.err, "t.json: 1 \"kernel\" events give the key \"dur\" more than once")) << cmd << ": " << r.err;
    EXPECT_TRUE(has(r.err, "the first value was kept")) << cmd << ": " << r.err;
  }
}

}  // namespace
}  // namespace syncscope
