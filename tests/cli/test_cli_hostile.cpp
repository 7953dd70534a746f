// No way in, nothing lost, through the `syncscope` executable, as an attacker sharing a cluster file system
// tried it: one table row per defect (the style of test_cli_safety.cpp), each with the exit
// status, what stderr must say and what must (not) be on disk afterwards. Rows that need
// only a library (threads, SQLite columns, signals) are unit tests beside their code:
// tests/cluster (thread start, process groups), tests/nsys (typed columns, cut strings),
// tests/core (dir handle, manifest, temporary files, CSV).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "sanitizers.hpp"
#include "syncscope/core/csv.hpp"
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

// Runs `syncscope ARGS` with bash in `cwd`; `env` prefixes the command (a variable, or a
// wrapper such as `timeout 60`).
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
  return r;
}

struct Case {
  const char* name;
  std::function<void(const fs::path&)> setup;
  std::string args;
  int code;                // expected exit status; -2: 0 or 1 (a run's verdict)
  const char* stderr_has;  // substring of stderr, or nullptr
  std::function<void(const fs::path&, const Result&)> check;
  std::string env = "";
};

class CliHostile : public ::testing::TestWithParam<Case> {};

TEST_P(CliHostile, Row) {
  const Case& c = GetParam();
#if defined(SYNCSCOPE_TEST_ASAN)
  // AddressSanitizer reserves terabytes of address space for its shadow memory, so an
  // instrumented syncscope cannot start under an address-space limit at all.
  if (c.env.find("ulimit -v") != std::string::npos)
    GTEST_SKIP() << "an address-space limit (ulimit -v) cannot hold an ASan build; checked in the ci build";
#endif
  test::TempDir dir;
  fs::create_directories(dir / "w");  // the working directory; dir itself is "outside"
  if (c.setup) c.setup(dir / "w");
  const Result r = run(dir / "w", c.args, c.env);
  if (c.code == -2) {
    EXPECT_TRUE(r.code == 0 || r.code == 1) << c.name << ": exit " << r.code << "\n" << r.err;
  } else {
    EXPECT_EQ(r.code, c.code) << c.name << "\n" << r.err;
  }
  if (c.stderr_has) {
    EXPECT_NE(r.err.find(c.stderr_has), std::string::npos) << c.name << "\n  stderr: " << r.err;
  }
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << c.name << ": " << r.err;
  if (c.check) c.check(dir / "w", r);
}

std::string row_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

void tiny(const fs::path& d) { put(d / "tiny.yaml", kTiny); }
void tiny_as(const fs::path& d, const std::string& name) {
  put(d / "s.yaml", std::string(kTiny).replace(0, 10, "name: " + name));
}
std::string nccl4() { return test::fixture("ranks/nccl4").string(); }

// Nothing an attacker's value could have run: no file a `touch PWNED...` would make, anywhere
// near (directories named after the hostile value are expected).
void nothing_ran(const fs::path& d, const Result&) {
  for (const auto& e : fs::recursive_directory_iterator(d.parent_path()))
    if (!e.is_directory()) {
      EXPECT_NE(e.path().filename().string().rfind("PWNED", 0), 0u) << e.path();
    }
}

// Every batch script under DIR/slurm run with bash, as Slurm would (no SLURM_* variables: the
// tasks fail to find their index, which is fine: only what ran matters).
std::string run_scripts(const fs::path& slurm_dir) {
  std::vector<fs::path> scripts;
  for (const auto& e : fs::directory_iterator(slurm_dir))
    if (e.path().extension() == ".sh") scripts.push_back(e.path());
  std::sort(scripts.begin(), scripts.end());
  std::string ran;
  for (const auto& p : scripts) {
    // The path travels in the environment: the test's own quoting is not under test.
    ::setenv("SCRIPT", p.c_str(), 1);
    (void)std::system("bash -c 'cd \"$(dirname \"$SCRIPT\")\" && bash \"$SCRIPT\"' > /dev/null 2>&1");
    ran += p.filename().string() + " ";
  }
  ::unsetenv("SCRIPT");
  return ran;
}

// A directory name that quoting must hold: blanks, $( ), backticks, ;, a single quote, %.
const std::string kNastyOut = "o $(touch PWNED1) `touch PWNED2`; touch PWNED3 'q' 100%";
// kNastyOut as one bash word ($'...': nothing in it expands when the test runs the command).
const std::string kNastyOutWord = "$'o $(touch PWNED1) `touch PWNED2`; touch PWNED3 \\'q\\' 100%'";

// ---- 1: shell injection in batch scripts ---------------------------------------------------

const Case kScripts[] = {
    {"analyze --partition with a newline", nullptr,
     "analyze '" + nccl4() + "' --slurm --dry-run --out o --partition $'gpu\\ntouch PWNED'", 2,
     "--partition 'gpu\\x0Atouch PWNED': expected partition names",
     [](const fs::path& d, const Result& r) {
       nothing_ran(d, r);
       EXPECT_FALSE(present(d / "o"));
     }},
    {"sweep --gres with a newline", tiny,
     "sweep tiny.yaml --device sim --slurm --dry-run --out sw --gres $'gpu:1\\ntouch PWNED'", 2, "--gres", nothing_ran},
    {"analyze --time with a newline", nullptr,
     "analyze '" + nccl4() + "' --slurm --dry-run --out o --time $'1:00\\ntouch PWNED'", 2, "--time", nothing_ran},
    {"analyze --time not Slurm's syntax", nullptr,
     "analyze '" + nccl4() + "' --slurm --dry-run --out o --time '1h; touch PWNED'", 2, "expected MM, MM:SS, HH:MM:SS",
     nothing_ran},
    {"analyze --out with a newline", nullptr, "analyze '" + nccl4() + "' --slurm --dry-run --out $'o\\ntouch PWNED'", 2,
     "holds a control character", nothing_ran},
    {"sweep --partition with a newline", tiny,
     "sweep tiny.yaml --device sim --slurm --dry-run --out sw --partition $'p\\ntouch PWNED'", 2, "--partition",
     [](const fs::path& d, const Result& r) {
       nothing_ran(d, r);
       EXPECT_FALSE(present(d / "sw"));
     }},
    {"sweep --constraint with shell syntax", tiny,
     "sweep tiny.yaml --device sim --slurm --dry-run --out sw --constraint 'h100$(touch PWNED)'", 2,
     "--constraint 'h100$(touch PWNED)': expected node features", nothing_ran},
    {"every analyze script run with a hostile --out: nothing runs", nullptr,
     "analyze '" + nccl4() + "' --slurm --dry-run --out " + kNastyOutWord + " --partition gpu --time 1-00:30:00", 0,
     nullptr,
     [](const fs::path& d, const Result& r) {
       const fs::path slurm = d / kNastyOut / "slurm";
       EXPECT_EQ(run_scripts(slurm), "merge.sh part.sh ") << r.out;
       nothing_ran(d, r);
       const std::string part = slurp(slurm / "part.sh");
       EXPECT_NE(part.find("#SBATCH --partition=gpu\n#SBATCH --time=1-00:30:00\n"), std::string::npos) << part;
       EXPECT_NE(part.find("100%%/slurm/logs/%x-%A_%a.out\"\n"), std::string::npos)
           << part;  // quoted for sbatch, % kept
     }},
    {"every sweep script run with a hostile --out: nothing runs", tiny,
     "sweep tiny.yaml --device sim --slurm --dry-run --out " + kNastyOutWord + " --gres gpu:h100:2", 0, nullptr,
     [](const fs::path& d, const Result& r) {
       EXPECT_EQ(run_scripts(d / kNastyOut / "slurm"), "report.sh task.sh ") << r.out;
       nothing_ran(d, r);
       const std::string task = slurp(d / kNastyOut / "slurm" / "task.sh");
       EXPECT_NE(task.find("#SBATCH --gres=gpu:h100:2\n"), std::string::npos) << task;
       EXPECT_NE(task.find("100%%/slurm/logs/%x-%A_%a.out\"\n"), std::string::npos) << task;
     }},
};
INSTANTIATE_TEST_SUITE_P(Scripts, CliHostile, ::testing::ValuesIn(kScripts), row_name);

// ---- 2: sweep.json's "syncscope" is never executed; 3: links and FIFOs in our directories ---

// A sweep planned here (`--dry-run`: sweep.json written, nothing run) with one task, s--default.
void planned_sweep(const fs::path& d) {
  put(d / "s.yaml", kTiny);
  const Result r = run(d, "sweep s.yaml --device sim --dry-run --out sw");
  ASSERT_EQ(r.code, 0) << r.err;
}

void evil_program_in_plan(const fs::path& d) {
  planned_sweep(d);
  put(d / "evil.sh", "#!/bin/sh\ntouch '" + (d / "PWNED").string() + "'\n");
  fs::permissions(d / "evil.sh", fs::perms::owner_all);
  auto j = nlohmann::json::parse(slurp(d / "sw" / "sweep.json"));
  j["syncscope"] = (d / "evil.sh").string();
  put(d / "sw" / "sweep.json", j.dump(2));
}

const Case kLinks[] = {
    {"sweep.json names another program (issue: it ran)", evil_program_in_plan, "job sweep-task sw 0", 0, nullptr,
     [](const fs::path& d, const Result& r) {
       EXPECT_FALSE(present(d / "PWNED"));
       EXPECT_NE(r.out.find("s--default: done"), std::string::npos) << r.out;
       EXPECT_TRUE(present(d / "sw" / "tasks" / "s--default" / "results.json"));
     }},
    {"sweep.json's scenario is an option, not a path",
     [](const fs::path& d) {
       planned_sweep(d);
       auto j = nlohmann::json::parse(slurp(d / "sw" / "sweep.json"));
       j["tasks"][0]["scenario"] = "--help";
       put(d / "sw" / "sweep.json", j.dump(2));
     },
     "job sweep-task sw 0", 2, "scenario is not an absolute path", nullptr},
    {"logs/TASK.log is a link out (issue: written through)",
     [](const fs::path& d) {
       planned_sweep(d);
       put(d.parent_path() / "victim.txt", "keep");
       fs::create_directories(d / "sw" / "logs");
       fs::create_symlink(d.parent_path() / "victim.txt", d / "sw" / "logs" / "s--default.log");
     },
     "job sweep-task sw 0", 2, "logs/s--default.log: is a symbolic link",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d.parent_path() / "victim.txt"), "keep"); }},
    {"status/TASK.json is a dangling link out (issue: created the target)",
     [](const fs::path& d) {
       planned_sweep(d);
       fs::create_directories(d / "sw" / "status");
       fs::create_symlink(d.parent_path() / "created.json", d / "sw" / "status" / "s--default.json");
     },
     "job sweep-task sw 0", 2, "status/s--default.json: ",
     [](const fs::path& d, const Result&) { EXPECT_FALSE(present(d.parent_path() / "created.json")); }},
    {"tasks is a link out (issue: results written there)",
     [](const fs::path& d) {
       planned_sweep(d);
       fs::create_directories(d.parent_path() / "elsewhere");
       fs::create_directory_symlink(d.parent_path() / "elsewhere", d / "sw" / "tasks");
     },
     "job sweep-task sw 0", 2, "sw/tasks: is a symbolic link",
     [](const fs::path& d, const Result&) { EXPECT_TRUE(fs::is_empty(d.parent_path() / "elsewhere")); }},
    {"the sweep's report.html is a link out (issue: written through)",
     [](const fs::path& d) {
       planned_sweep(d);
       put(d.parent_path() / "victim.html", "keep");
       fs::create_symlink(d.parent_path() / "victim.html", d / "sw" / "report.html");
     },
     "job sweep-report sw", 2, "report.html: is a symbolic link",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d.parent_path() / "victim.html"), "keep"); }},
    {"a FIFO at status/TASK.json (issue: sweep --status hung)",
     [](const fs::path& d) {
       planned_sweep(d);
       fs::create_directories(d / "sw" / "status");
       ASSERT_EQ(::mkfifo((d / "sw" / "status" / "s--default.json").c_str(), 0600), 0);
     },
     "sweep --status sw", 2, "s--default.json: is a FIFO", nullptr, "timeout 120"},
    {"analyze --out merge: summary.txt is a link out (issue: written through)",
     [](const fs::path& d) {
       const Result r = run(d, "analyze '" + nccl4() + "' --out job");
       ASSERT_EQ(r.code, 0) << r.err;
       put(d.parent_path() / "victim.txt", "keep");
       fs::remove(d / "job" / "summary.txt");
       fs::create_symlink(d.parent_path() / "victim.txt", d / "job" / "summary.txt");
     },
     "job rank-merge job", 2, "summary.txt: is a symbolic link",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d.parent_path() / "victim.txt"), "keep"); }},
    {"a FIFO at parts/part-00000.json (issue: the merge hung)",
     [](const fs::path& d) {
       const Result r = run(d, "analyze '" + nccl4() + "' --out job");
       ASSERT_EQ(r.code, 0) << r.err;
       fs::remove(d / "job" / "parts" / "part-00000.json");
       ASSERT_EQ(::mkfifo((d / "job" / "parts" / "part-00000.json").c_str(), 0600), 0);
     },
     "job rank-merge job", 2, "part-00000.json: is a FIFO", nullptr, "timeout 120"},
};
INSTANTIATE_TEST_SUITE_P(Links, CliHostile, ::testing::ValuesIn(kLinks), row_name);

// ---- 4: a scenario name is a name; 5: --force keeps its promise --------------------------

void our_run(const fs::path& d) {
  tiny(d);
  const Result r = run(d, "run tiny.yaml --device sim --out res");
  ASSERT_LE(r.code, 1) << r.err;
}

const Case kNamesForce[] = {
    {"name ../../../ESCAPED (issue: run wrote there)", [](const fs::path& d) { tiny_as(d, "'../../../ESCAPED'"); },
     "run s.yaml --device sim", 2, "s.yaml:1:7: name: '../../../ESCAPED' is a path, not a name",
     [](const fs::path& d, const Result&) {
       for (fs::path p = d; p != p.parent_path(); p = p.parent_path())
         for (const auto& e : fs::directory_iterator(p))
           EXPECT_EQ(e.path().filename().string().find("ESCAPED"), std::string::npos) << e.path();
     }},
    {"an absolute name", [](const fs::path& d) { tiny_as(d, (d.parent_path() / "abs").string()); },
     "run s.yaml --device sim", 2, "is a path, not a name",
     [](const fs::path& d, const Result&) { EXPECT_FALSE(present(d.parent_path() / "abs-simulated")); }},
    {"run --force keeps a user's trace copied into traces/ (issue: deleted)",
     [](const fs::path& d) {
       our_run(d);
       put(d / "res" / "traces" / "mine.json.gz", "my profile");
     },
     "run tiny.yaml --device sim --out res --force", 2, "traces/mine.json.gz",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d / "res" / "traces" / "mine.json.gz"), "my profile"); }},
    {"run --force keeps a results.csv the user edited",
     [](const fs::path& d) {
       our_run(d);
       put(d / "res" / "results.csv", "my edits");
     },
     "run tiny.yaml --device sim --out res --force", 2, "results.csv (not the content the run wrote)",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d / "res" / "results.csv"), "my edits"); }},
    {"run --force still replaces an untouched run", our_run, "run tiny.yaml --device sim --out res --force", -2,
     nullptr,
     [](const fs::path& d, const Result&) {
       EXPECT_NE(slurp(d / "res" / "syncscope-manifest.txt").find("file "), std::string::npos);
     }},
};
INSTANTIATE_TEST_SUITE_P(NamesForce, CliHostile, ::testing::ValuesIn(kNamesForce), row_name);

// ---- 6, 7: threads, printers, temporary files, bounds -------------------------------------

void trace_copy(const fs::path& d, const std::string& name) {
  fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / name);
}

const Case kMedium[] = {
    {"analyze --jobs 4096 under a memory limit (issue: abort)",
     [](const fs::path& d) {
       // 600 rank files (all one rank: the analysis ends in exit 2 naming two of them), read
       // with --jobs 4096 in 4 GB of address space: 600 threads' stacks alone would not fit.
       fs::create_directories(d / "ranks");
       const fs::path f = test::fixture("ranks/nccl4/node0_1000.1700000000000000000.pt.trace.json");
       for (int i = 0; i < 600; ++i) fs::create_symlink(f, d / "ranks" / ("r" + std::to_string(i) + ".json"));
     },
     "analyze ranks --jobs 4096", 2, "both claim rank 0",
     [](const fs::path&, const Result& r) { EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err; },
     "ulimit -v 4000000;"},
    {"a control character in a name is escaped on the terminal",
     [](const fs::path& d) { trace_copy(d, "t\x1b[2J.json"); }, "analyze $'t\\e[2J.json'", 0, nullptr,
     [](const fs::path&, const Result& r) {
       EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
       EXPECT_NE(r.out.find("t\\x1B[2J.json"), std::string::npos) << r.out;
     }},
    {"a formula in a CSV cell is quoted as text", [](const fs::path& d) { tiny_as(d, "'=HYPERLINK(\"x\")'"); },
     "run s.yaml --device sim --out r", -2, nullptr,
     [](const fs::path& d, const Result&) {
       const auto rows = csv_parse(slurp(d / "r" / "results.csv"));
       ASSERT_GT(rows.size(), 1u);
       EXPECT_EQ(rows[1][2], "'=HYPERLINK(\"x\")") << rows[1][2];
     }},
    {"many ranks: a FIFO named like a trace is counted and named (issue: dropped silently)",
     [](const fs::path& d) {
       fs::create_directories(d / "ranks");
       for (const auto& e : fs::directory_iterator(nccl4())) fs::copy_file(e.path(), d / "ranks" / e.path().filename());
       ASSERT_EQ(::mkfifo((d / "ranks" / "rank9.json").c_str(), 0600), 0);
     },
     "analyze ranks", 0, "skipped 1 entry named like a trace that is not a regular file: ranks/rank9.json (a FIFO",
     nullptr},
    {"a stale temporary output of a killed convert is removed",
     [](const fs::path& d) {
       trace_copy(d, "t.json");
       const pid_t child = ::fork();
       if (child == 0) ::_exit(0);
       int st = 0;
       ::waitpid(child, &st, 0);
       put(d / (".o.json.tmp" + std::to_string(child) + "-123"), "half");
     },
     "convert t.json o.json", 0, nullptr,
     [](const fs::path& d, const Result&) {
       for (const auto& e : fs::directory_iterator(d))
         EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
       EXPECT_TRUE(present(d / "o.json"));
     }},
    {"a file size limit is a write failure, exit 1 (issue: killed by SIGXFSZ)",
     [](const fs::path& d) { trace_copy(d, "t.json"); }, "convert t.json o.json", 1, "o.json: write failed",
     [](const fs::path& d, const Result&) {
       for (const auto& e : fs::directory_iterator(d))
         EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
     },
     "ulimit -f 1;"},
    {"disk full is a write failure, exit 1 (issue: exit 2)", [](const fs::path& d) { trace_copy(d, "t.json"); },
     "convert t.json /dev/full", 1, "/dev/full: write failed: No space left on device", nullptr},
    {"calibrate --output /dev/null writes through (issue: refused)", [](const fs::path& d) { trace_copy(d, "t.json"); },
     "calibrate --from-trace t.json --base H200 --output /dev/null", 0, nullptr, nullptr},
    {"calibrate --from-trace never writes a profile its loader refuses (issue: wrote 1e27 B/s)",
     [](const fs::path& d) {
       // The fixture's one pinned H2D copy made to carry 2e18 bytes in its 2 us: a rate of
       // 1e24 B/s, far past any link; the fitted profile would be unloadable.
       std::string t = slurp(test::fixture("traces/kineto_all_categories.json"));
       const std::string from = "\"bytes\": 4096, \"memory bandwidth (GB/s)\": 2.048";
       const auto at = t.find(from);
       ASSERT_NE(at, std::string::npos);
       t.replace(at, from.size(), "\"bytes\": 2000000000000000000, \"memory bandwidth (GB/s)\": 2.048");
       put(d / "t.json", t);
     },
     "calibrate --from-trace t.json --base H200 --output fitted.yaml", 2, "the fitted profile was not written",
     [](const fs::path& d, const Result&) { EXPECT_FALSE(fs::exists(d / "fitted.yaml")); }},
    {"report: a timelines.json of 20001 segments (issue: 299 MB of HTML)",
     [](const fs::path& d) {
       our_run(d);
       auto j = nlohmann::json::parse(slurp(d / "res" / "timelines.json"));
       ASSERT_FALSE(j["strips"].empty());
       auto& segs = j["strips"][0]["segments"];
       segs = nlohmann::json::array();
       for (int i = 0; i < 20001; ++i) segs.push_back({-1, "kernel", i, i + 1, "k"});
       put(d / "res" / "timelines.json", j.dump());
     },
     "report res --output rep.html", 2, "/strips/0/segments: 20001 segments, more than the 20000",
     [](const fs::path& d, const Result&) { EXPECT_FALSE(present(d / "rep.html")); }},
    {"validate: tolerance 1e300 (issue: accepted)",
     [](const fs::path& d) {
       our_run(d);
       auto j = nlohmann::json::parse(slurp(d / "res" / "results.json"));
       for (auto& v : j["variants"]) v["tolerance"] = 1e300;
       put(d / "e.json", j.dump(2));
     },
     "validate e.json", 2,
     "$.variants[0].tolerance: 1e+300 is out of range: expected a relative error, as the scenario allows it (0, 10]",
     nullptr},
    {"validate: a duplicate key (issue: last wins)",
     [](const fs::path& d) {
       our_run(d);
       std::string t = slurp(d / "res" / "results.json");
       const auto p = t.find("\"mode\"");
       ASSERT_NE(p, std::string::npos);
       t.insert(p, "\"mode\": \"measured\", ");
       put(d / "e.json", t);
     },
     "validate e.json", 2, ": duplicate key 'mode' (at $.mode)", nullptr},
};
INSTANTIATE_TEST_SUITE_P(Medium, CliHostile, ::testing::ValuesIn(kMedium), row_name);

}  // namespace
}  // namespace syncscope
