// Nothing lost, nothing unbounded, through the `syncscope` executable, as a hostile user tried it: one table row per
// defect (items 1-8 and 10 of the issue; 9 is the report's), each with the exit status, what
// stderr must say and what must (still) be on disk afterwards.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "syncscope/core/csv.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

// Small and quick to simulate.
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

const char* kConfig = R"({
  "num_hidden_layers": 2,
  "hidden_size": 256,
  "num_attention_heads": 4,
  "num_key_value_heads": 2,
  "head_dim": 64,
  "intermediate_size": 512,
  "vocab_size": 1000
})";

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// Runs `syncscope ARGS` with bash in `cwd` (bash: process substitution); `env` prefixes it.
Result run(const fs::path& cwd, const std::string& args, const std::string& env = "") {
  const fs::path out = cwd / ".stdout", err = cwd / ".stderr";
  // A group, so that redirections and pipes inside ARGS apply to their own commands.
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

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

// One row: set up the directory, run, check.
struct Case {
  const char* name;
  std::function<void(const fs::path&)> setup;
  std::string args;
  int code;                // expected exit status; -2: 0 or 1 (a verdict)
  const char* stderr_has;  // substring of stderr, or nullptr
  std::function<void(const fs::path&, const Result&)> check;
  std::string env = "";
};

void tiny(const fs::path& d) { put(d / "tiny.yaml", kTiny); }

// A results directory `run` wrote.
void our_run(const fs::path& d, const std::string& name = "res") {
  tiny(d);
  const Result r = run(d, "run tiny.yaml --device sim --out " + name);
  ASSERT_LE(r.code, 1) << r.err;
}

class CliSafety : public ::testing::TestWithParam<Case> {};

TEST_P(CliSafety, Row) {
  const Case& c = GetParam();
  test::TempDir dir;
  if (c.setup) c.setup(dir.path());
  const Result r = run(dir.path(), c.args, c.env);
  if (c.code == -2) {
    EXPECT_TRUE(r.code == 0 || r.code == 1) << c.name << ": exit " << r.code << "\n" << r.err;
  } else {
    EXPECT_EQ(r.code, c.code) << c.name << "\n" << r.err;
  }
  if (c.stderr_has) {
    EXPECT_NE(r.err.find(c.stderr_has), std::string::npos) << c.name << "\n  stderr: " << r.err;
  }
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << c.name << ": " << r.err;
  if (c.check) c.check(dir.path(), r);
}

std::string row_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// ---- 1, 2: --force replaces only what syncscope wrote; special files are written through --

const Case kForce[] = {
    {"run --out PWD --force keeps the user's files",
     [](const fs::path& d) {
       tiny(d);
       put(d / "notes.txt", "mine");
     },
     "run tiny.yaml --device sim --out \"$PWD\" --force", 2, "is not a syncscope results directory",
     [](const fs::path& d, const Result&) {
       EXPECT_EQ(slurp(d / "notes.txt"), "mine");
       EXPECT_TRUE(present(d / "tiny.yaml"));
     }},
    {"run --out notarun --force keeps notarun/sub/important.txt",
     [](const fs::path& d) {
       tiny(d);
       fs::create_directories(d / "notarun" / "sub");
       put(d / "notarun" / "sub" / "important.txt", "keep");
     },
     "run tiny.yaml --device sim --out notarun --force", 2, "notarun is not a syncscope results directory",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d / "notarun" / "sub" / "important.txt"), "keep"); }},
    {"run --force replaces our own run", [](const fs::path& d) { our_run(d); },
     "run tiny.yaml --device sim --out res --force --repeats 2", -2, nullptr,
     [](const fs::path& d, const Result&) {
       const auto j = nlohmann::json::parse(slurp(d / "res" / "results.json"));
       EXPECT_EQ(j["variants"][0]["step_time_ns"]["n"], 2);
       for (const auto& e : fs::directory_iterator(d))
         EXPECT_EQ(e.path().filename().string().find("res."), std::string::npos) << e.path();
     }},
    {"run --force refuses our run holding another file",
     [](const fs::path& d) {
       our_run(d);
       put(d / "res" / "analysis-notes.md", "mine");
     },
     "run tiny.yaml --device sim --out res --force", 2, "analysis-notes.md",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d / "res" / "analysis-notes.md"), "mine"); }},
    {"run --out onto a regular file",
     [](const fs::path& d) {
       tiny(d);
       put(d / "res", "a file");
     },
     "run tiny.yaml --device sim --out res --force", 2, "is a regular file, not a results directory",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d / "res"), "a file"); }},
    {"run --force through a symlink replaces the target and keeps the link",
     [](const fs::path& d) {
       our_run(d, "real");
       fs::create_directory_symlink("real", d / "res");
     },
     "run tiny.yaml --device sim --out res --force --repeats 2", -2, nullptr,
     [](const fs::path& d, const Result&) {
       EXPECT_TRUE(fs::is_symlink(d / "res"));
       EXPECT_EQ(nlohmann::json::parse(slurp(d / "real" / "results.json"))["variants"][0]["step_time_ns"]["n"], 2);
     }},
    {"convert to /dev/null --force writes through the device",
     [](const fs::path& d) { fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json"); },
     "convert t.json /dev/null --force", 0, nullptr,
     [](const fs::path&, const Result&) { EXPECT_EQ(path_kind("/dev/null"), PathKind::CharDevice); }},
    {"convert to /dev/null without --force",
     [](const fs::path& d) { fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json"); },
     "convert t.json /dev/null", 0, nullptr, nullptr},
    {"convert to - writes to stdout",
     [](const fs::path& d) { fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json"); },
     "convert t.json - | head -c 100000 > piped.json", 0, nullptr,
     [](const fs::path& d, const Result&) {
       EXPECT_NE(slurp(d / "piped.json").find("traceEvents"), std::string::npos);
     }},
    {"convert --output a directory --force (issue: cannot rename, exit 1)",
     [](const fs::path& d) {
       fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json");
       fs::create_directory(d / "outdir");
       put(d / "outdir" / "x", "x");
     },
     "convert t.json outdir --force", 2, "a directory is never replaced by a file",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d / "outdir" / "x"), "x"); }},
    {"convert onto an existing file without --force",
     [](const fs::path& d) {
       fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json");
       put(d / "o.json", "old");
     },
     "convert t.json o.json", 2, "already exists",
     [](const fs::path& d, const Result&) { EXPECT_EQ(slurp(d / "o.json"), "old"); }},
    {"convert through a symlink replaces its target",
     [](const fs::path& d) {
       fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json");
       put(d / "real.json", "old");
       fs::create_symlink("real.json", d / "o.json");
     },
     "convert t.json o.json --force", 0, nullptr,
     [](const fs::path& d, const Result&) {
       EXPECT_TRUE(fs::is_symlink(d / "o.json"));
       EXPECT_NE(slurp(d / "real.json").find("traceEvents"), std::string::npos);
     }},
    {"convert to a FIFO writes through it",
     [](const fs::path& d) {
       fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json");
       ::mkfifo((d / "p.json").c_str(), 0600);
     },
     "convert t.json p.json & cat p.json > got.json; wait $!", 0, nullptr,
     [](const fs::path& d, const Result&) {
       EXPECT_EQ(path_kind(d / "p.json"), PathKind::Fifo);
       EXPECT_NE(slurp(d / "got.json").find("traceEvents"), std::string::npos);
     }},
    {"validate --output /dev/stdout", [](const fs::path& d) { our_run(d); },
     "validate res --output /dev/stdout --format json > v.json", -2, nullptr,
     [](const fs::path& d, const Result&) {
       EXPECT_EQ(nlohmann::json::parse(slurp(d / "v.json"))["kind"], "syncscope.validation");
     }},
    {"stale partial directory of a dead run is removed, a live one kept",
     [](const fs::path& d) {
       tiny(d);
       const pid_t child = ::fork();
       if (child == 0) ::_exit(0);
       int st = 0;
       ::waitpid(child, &st, 0);
       // One made by a process that has exited, one by us (alive), one not ours.
       const fs::path live = make_partial_dir(d / "res");
       fs::rename(live, d / "res.partial-live");
       const fs::path dead = make_partial_dir(d / "res");
       std::string marker = slurp(dead / kPartialMarker);
       marker.replace(marker.find("\npid ") + 5, std::to_string(::getpid()).size(), std::to_string(child));
       put(dead / kPartialMarker, marker);
       put(dead / "results.json", "{}");
       fs::rename(dead, d / ("res.partial-" + std::to_string(child) + "-abcdef"));
       fs::create_directories(d / "res.partial-users");
     },
     "run tiny.yaml --device sim --out res", -2, "removed the stale partial directory",
     [](const fs::path& d, const Result&) {
       int partials = 0;
       for (const auto& e : fs::directory_iterator(d))
         if (e.path().filename().string().rfind("res.partial-", 0) == 0) ++partials;
       EXPECT_EQ(partials, 2);  // the live one and the user's
       EXPECT_TRUE(fs::exists(d / "res.partial-live"));
       EXPECT_TRUE(fs::exists(d / "res.partial-users"));
       EXPECT_TRUE(fs::exists(d / "res" / "results.json"));
       EXPECT_FALSE(fs::exists(d / "res" / kPartialMarker));
     }},
};
INSTANTIATE_TEST_SUITE_P(Force, CliSafety, ::testing::ValuesIn(kForce), row_name);

// ---- 3: unbounded memory; 4: profile values break the simulator ---------------------------

void profile_with(const fs::path& d, const std::string& from, const std::string& to) {
  put(d / "p.yaml", replace(slurp(test::source_dir() / "model/profiles/H200.yaml"), from, to));
}

const Case kBounds[] = {
    {"num_hidden_layers 1e9",
     [](const fs::path& d) {
       put(d / "s.yaml", replace(kTiny, "num_hidden_layers: 2", "num_hidden_layers: 1000000000"));
     },
     "run s.yaml --device sim --out r", 2, "s.yaml:4:22: model.num_hidden_layers: expected an integer in 1..1024",
     [](const fs::path& d, const Result&) { EXPECT_FALSE(present(d / "r")); }},
    {"packed_tokens 2e9",
     [](const fs::path& d) { put(d / "s.yaml", replace(kTiny, "packed_tokens: 256", "packed_tokens: 2000000000")); },
     "run s.yaml --device sim --out r", 2, "s.yaml:12:18: batch.packed_tokens: expected an integer in 1..16777216",
     nullptr},
    {"repeat_steps 1e8",
     [](const fs::path& d) { put(d / "s.yaml", replace(kTiny, "repeat_steps: 1", "repeat_steps: 100000000")); },
     "run s.yaml --device sim --out r", 2, "s.yaml:21:17: measure.repeat_steps: expected an integer in 1..10000",
     nullptr},
    {"run --repeats 1000000", tiny, "run tiny.yaml --device sim --out r --repeats 1000000", 2,
     "--repeats: '1000000': expected an integer in 1..10000", nullptr},
    {"run --layers 0", tiny, "run tiny.yaml --device sim --out r --layers 0", 2, "--layers", nullptr},
    {"predict --samples 2000000000", nullptr,
     "predict --fix packing --layers 16 --per-layer-ms 13.7 --samples 2000000000", 2,
     "--samples: '2000000000': expected an integer in 100..1000000", nullptr},
    {"a simulation larger than the memory available", tiny, "run tiny.yaml --device sim --out r", 2,
     "needs an estimated",
     [](const fs::path& d, const Result& r) {
       EXPECT_NE(r.err.find("MemAvailable"), std::string::npos) << r.err;
       EXPECT_FALSE(present(d / "r"));
     },
     "SYNCSCOPE_MEM_AVAILABLE_BYTES=1000"},
    {"sync_round_trip_ns 1e300 (issue: 0 ns steps, exit 0)",
     [](const fs::path& d) {
       tiny(d);
       profile_with(d, "sync_round_trip_ns: 26000", "sync_round_trip_ns: 1e300");
     },
     "run tiny.yaml --device sim --gpu-profile p.yaml --out r", 2,
     "p.yaml:6:21: GPU profile field 'sync_round_trip_ns': expected a number in [1, 1e+09] ns", nullptr},
    {"bf16_flops_per_s 1e-300 (issue: faster than the stock H200)",
     [](const fs::path& d) {
       tiny(d);
       profile_with(d, "bf16_flops_per_s: 989.4e12", "bf16_flops_per_s: 1e-300");
     },
     "run tiny.yaml --device sim --gpu-profile p.yaml --out r", 2, "p.yaml:12:19: GPU profile field 'bf16_flops_per_s'",
     nullptr},
    {"bf16_flops_per_s 1e17 names the file and field",
     [](const fs::path& d) {
       tiny(d);
       profile_with(d, "bf16_flops_per_s: 989.4e12", "bf16_flops_per_s: 1e17");
     },
     "run tiny.yaml --device sim --gpu-profile p.yaml --out r", 2,
     "p.yaml:12:19: GPU profile field 'bf16_flops_per_s': expected a number in [1e+09, 1e+16] FLOP/s", nullptr},
};
INSTANTIATE_TEST_SUITE_P(Bounds, CliSafety, ::testing::ValuesIn(kBounds), row_name);

// ---- 5: names ---------------------------------------------------------------------------

void named(const fs::path& d, const std::string& yaml_name) {
  put(d / "s.yaml", replace(kTiny, "name: tiny", "name: " + yaml_name));
}

void no_partial_left(const fs::path& d, const Result&) {
  for (const auto& e : fs::directory_iterator(d))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();
  EXPECT_FALSE(present(d / "r"));
}

const Case kNames[] = {
    {"invalid UTF-8 (issue: json type_error 316 after running)", [](const fs::path& d) { named(d, "bad\xFF"); },
     "run s.yaml --device sim --out r", 2, "s.yaml:1:7: name: the name is not valid UTF-8", no_partial_left},
    {"newline", [](const fs::path& d) { named(d, "\"a\\nb\""); }, "run s.yaml --device sim --out r", 2,
     "s.yaml:1:7: name: the name holds a control character (U+000A", no_partial_left},
    {"NUL", [](const fs::path& d) { named(d, "\"a\\0b\""); }, "run s.yaml --device sim --out r", 2,
     "control character (U+0000", no_partial_left},
    {"1 MB name (issue: fails at write time)", [](const fs::path& d) { named(d, std::string(1 << 20, 'n')); },
     "run s.yaml --device sim --out r", 2, "the name has 1048576 characters; at most 128", no_partial_left},
    // No '/' in it: a scenario name holds no path separator (it names out/<name>).
    {"markup in a name is escaped by every printer", [](const fs::path& d) { named(d, "'<b>x<b> & \"q\", y'"); },
     "run s.yaml --device sim --out r", -2, nullptr,
     [](const fs::path& d, const Result& r) {
       const std::string want = "<b>x<b> & \"q\", y";
       EXPECT_EQ(nlohmann::json::parse(slurp(d / "r" / "results.json"))["variants"][0]["scenario"], want);
       const auto rows = csv_parse(slurp(d / "r" / "results.csv"));
       ASSERT_GT(rows.size(), 1u);
       EXPECT_EQ(rows[1][2], want);
       const std::string html = slurp(d / "r" / "report.html");
       EXPECT_EQ(html.find("<b>x<b>"), std::string::npos);
       EXPECT_NE(html.find("&lt;b&gt;x&lt;b&gt; &amp;"), std::string::npos);
       EXPECT_NE(r.out.find(want), std::string::npos);  // the table prints it as it is: printable
     }},
};
INSTANTIATE_TEST_SUITE_P(Names, CliSafety, ::testing::ValuesIn(kNames), row_name);

// ---- 6: validate with nothing to compare; 7: pipes (non-trace inputs) ---------------------

void results_with(const fs::path& d, const std::function<void(nlohmann::json&)>& edit) {
  our_run(d);
  auto j = nlohmann::json::parse(slurp(d / "res" / "results.json"));
  edit(j);
  put(d / "edited.json", j.dump(2));
}

const Case kValidatePipes[] = {
    {"validate with no variants (issue: exit 0)",
     [](const fs::path& d) { results_with(d, [](nlohmann::json& j) { j["variants"] = nlohmann::json::array(); }); },
     "validate edited.json", 1, "nothing to compare in edited.json: it holds no variants", nullptr},
    {"validate with no predictions (issue: exit 0)",
     [](const fs::path& d) {
       results_with(d, [](nlohmann::json& j) {
         for (auto& v : j["variants"]) v.erase("predicted_speedup");
       });
     },
     "validate edited.json", 1, "no variant beside a baseline carries a prediction", nullptr},
    {"validate reads standard input", [](const fs::path& d) { our_run(d); }, "validate - < res/results.json", -2,
     nullptr,
     [](const fs::path&, const Result& r) {
       EXPECT_NE(r.out.find("syncscope validate: -"), std::string::npos) << r.out;
     }},
    {"run a scenario from process substitution, gzip", tiny, "run <(gzip -c tiny.yaml) --device sim --out r", -2,
     nullptr, [](const fs::path& d, const Result&) { EXPECT_TRUE(present(d / "r" / "results.json")); }},
    {"GPU profile and config.json from pipes",
     [](const fs::path& d) {
       tiny(d);
       put(d / "config.json", kConfig);
     },
     "run tiny.yaml --device sim --out r --gpu-profile <(cat " +
         (test::source_dir() / "model/profiles/B200.yaml").string() + ") --hf-config <(gzip -c config.json)",
     -2, nullptr,
     [](const fs::path& d, const Result&) {
       EXPECT_EQ(nlohmann::json::parse(slurp(d / "r" / "results.json"))["mode"], "simulated");
     }},
};
INSTANTIATE_TEST_SUITE_P(ValidatePipes, CliSafety, ::testing::ValuesIn(kValidatePipes), row_name);

// ---- 8: trace exit status ----------------------------------------------------------------

// Needs the CUPTI injection library (a CUDA build; no GPU: programs never initialize CUDA).
#ifdef SYNCSCOPE_TEST_HAVE_TRACER
const Case kTrace[] = {
    {"trace --output an empty directory --force (issue: replaced by a file)",
     [](const fs::path& d) { fs::create_directory(d / "emptydir"); }, "trace --output emptydir --force -- true", 2,
     "is a directory", [](const fs::path& d, const Result&) { EXPECT_TRUE(fs::is_directory(d / "emptydir")); }},
    {"program that cannot start: no trace, non-zero (issue: wrote one)", nullptr,
     "trace --output t.json -- ./no-such-program", 127, "could not be started",
     [](const fs::path& d, const Result&) { EXPECT_FALSE(present(d / "t.json")); }},
    {"program's own non-zero status wins", nullptr, "trace --output t.json -- sh -c 'exit 3'", 3, nullptr, nullptr},
    {"no trace written, program exit 0 (issue: exit 0)", [](const fs::path& d) { fs::create_directory(d / "gone"); },
     "trace --output gone/t.json -- rm -rf gone", 1, "no trace was written", nullptr},
    {"a program without CUDA gets an empty trace saying so", nullptr, "trace --output t.json -- true", 0,
     "never initialized CUDA", [](const fs::path& d, const Result&) { EXPECT_TRUE(present(d / "t.json")); }},
};
INSTANTIATE_TEST_SUITE_P(Trace, CliSafety, ::testing::ValuesIn(kTrace), row_name);
#endif

// ---- 10: the smaller items ---------------------------------------------------------------

const Case kSmall[] = {
    {"predict --samples 0 (issue: intervals collapse)", nullptr,
     "predict --fix packing --layers 16 --per-layer-ms 13.7 --samples 0", 2,
     "--samples: '0': expected an integer in 100..", nullptr},
    {"predict --prefetch-depth 0 (issue: silently 2)", nullptr,
     "predict --fix offload --layers 16 --copy-ms 2 --compute-ms 3 --prefetch-depth 0", 2,
     "--prefetch-depth: '0': expected an integer in 2..1024", nullptr},
    {"predict --slowdown 1e9 (issue: accepted)", nullptr,
     "predict --fix offload --layers 16 --copy-ms 2 --compute-ms 3 --slowdown 1e9", 2, "--slowdown '1e9': at most 10",
     nullptr},
    {"predict --layers -16 (issue: says needs --layers)", nullptr,
     "predict --fix packing --layers -16 --per-layer-ms 13.7", 2, "--layers: '-16': expected an integer in 1..1024",
     [](const fs::path&, const Result& r) { EXPECT_EQ(r.err.find("needs --layers"), std::string::npos) << r.err; }},
    // The fixes' own options (FixSpec::predict_options), added by looping over the registry:
    // their declared bounds are checked when the command line is parsed.
    {"predict --passes 0: moe's declared range", nullptr,
     "predict --fix moe --experts 8 --moe-layers 4 --per-expert-us 10 --passes 0", 2,
     "--passes: '0': expected an integer in 1..16", nullptr},
    {"predict --reload-bytes 0: offload's declared range", nullptr,
     "predict --fix offload --layers 16 --compute-ms 3 --reload-bytes 0 --gpu H200", 2,
     "--reload-bytes: '0': expected a number in", nullptr},
    {"predict --syncs-per-layer x: packing's declared kind", nullptr,
     "predict --fix packing --layers 16 --per-layer-ms 13.7 --syncs-per-layer x", 2,
     "--syncs-per-layer: 'x': expected an integer in 1..1000", nullptr},
    {"predict --gpu DIR (issue: says no such file)", [](const fs::path& d) { fs::create_directory(d / "profiles"); },
     "predict --fix packing --layers 16 --per-layer-ms 13.7 --gpu profiles", 2, "'profiles': is a directory", nullptr},
    // With --trace, what only explicit values read is refused by name (it was left unread).
    {"predict --trace with --layers (issue: ignored)",
     [](const fs::path& d) { fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json"); },
     "predict --trace t.json --layers 28", 2, "--layers: not read with --trace (the trace's layer ranges give them",
     nullptr},
    {"predict --trace with a fix's explicit option (issue: ignored)",
     [](const fs::path& d) { fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json"); },
     "predict --trace t.json --per-layer-ms 13.7", 2, "--per-layer-ms: no fix takes this option with a trace (",
     [](const fs::path&, const Result& r) { EXPECT_NE(r.err.find("--prefetch-depth"), std::string::npos) << r.err; }},
    {"analyze --pid 999999 (issue: says no CUDA runtime calls)", nullptr,
     "analyze " + test::fixture("traces/kineto_all_categories.json").string() + " --pid 999999", 2, "--pid 999999: ",
     [](const fs::path&, const Result& r) {
       EXPECT_NE(r.err.find("has no host records of that process; its processes: "), std::string::npos) << r.err;
     }},
    {"convert --format binary is not offered", nullptr, "convert --help", 0, nullptr,
     [](const fs::path&, const Result& r) { EXPECT_EQ(r.out.find("binary"), std::string::npos) << r.out; }},
    {"convert --format binary is refused as an option value",
     [](const fs::path& d) { fs::copy_file(test::fixture("traces/kineto_all_categories.json"), d / "t.json"); },
     "convert t.json o.json --format binary", 2, "binary", nullptr},
    {"run to a read-only place says the OS error (issue: exit 1 without it)", tiny,
     "run tiny.yaml --device sim --out /proc/syncscope-test-out", 2, "for the results: ",
     [](const fs::path&, const Result& r) {
       const auto p = r.err.find("for the results: ");
       ASSERT_NE(p, std::string::npos);
       EXPECT_GT(r.err.size(), p + 18) << "no OS error after the colon: " << r.err;
     }},
    {"duplicate key in config.json (issue: last wins)",
     [](const fs::path& d) {
       tiny(d);
       put(d / "config.json",
           replace(kConfig, "\"vocab_size\": 1000", "\"vocab_size\": 1000,\n  \"hidden_size\": 512"));
     },
     "run tiny.yaml --device sim --out r --hf-config config.json", 2,
     "config.json:9:3: hidden_size: duplicate key (first at line 3, column 3); give it once", nullptr},
    {"hybrid Mamba/attention config (issue 37: ran as qwen3_moe with exit 0)",
     [](const fs::path& d) {
       tiny(d);
       put(d / "config.json",
           R"({"model_type": "jamba", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
 "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 65536, "num_experts": 16,
 "num_experts_per_tok": 2, "attn_layer_period": 8, "attn_layer_offset": 4, "expert_layer_period": 2,
 "expert_layer_offset": 1, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "use_mamba_kernels": true})");
     },
     "run tiny.yaml --device sim --out r --hf-config config.json", 2,
     "config.json:3:52: model_type \"jamba\" describes state-space (Mamba/SSM), linear-attention or hybrid layers",
     [](const fs::path& d, const Result& r) {
       for (const char* key : {"attn_layer_period", "attn_layer_offset", "mamba_d_state", "mamba_d_conv",
                               "mamba_expand", "use_mamba_kernels", "expert_layer_period", "cannot model this family"})
         EXPECT_NE(r.err.find(key), std::string::npos) << key << " in " << r.err;
       EXPECT_FALSE(fs::exists(d / "r"));
     }},
};
INSTANTIATE_TEST_SUITE_P(Small, CliSafety, ::testing::ValuesIn(kSmall), row_name);

}  // namespace
}  // namespace syncscope
