// A stand-in for `syncscope run` in sweep tests: a shell script that behaves like run's
// output contract (a NAME.partial-* directory renamed to --out at the end, exit 1 after
// publishing when a verdict fails) without simulating anything, steered per task by files
// in a control directory:
//   fail-NAME     print "syncscope: error: <its content>" and exit 2
//   kill-NAME     write into the partial directory (with run's owner marker), then SIGKILL itself
//   verdict-NAME  publish, then exit 1
//   sleep-NAME    sleep that many seconds inside the run first
// Every call appends "run NAME" to runs.log. NAME is --out's last component.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fake_slurm.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/model/results.hpp"

namespace syncscope::test {

// A scenario loader accepts this (tests/reports/test_run_cli.cpp's tiny model).
inline std::string tiny_scenario(const std::string& name) {
  return "name: " + name + R"(
model:
  name: Tiny
  num_hidden_layers: 4
  hidden_size: 256
  num_attention_heads: 4
  num_key_value_heads: 2
  head_dim: 64
  intermediate_size: 512
  vocab_size: 1000
batch:
  packed_tokens: 512
  min_len: 32
  max_len: 256
  seed: 1
fixes:
  packing:
    variants: [rebuild, cached]
measure:
  warmup_steps: 0
  repeat_steps: 2
)";
}

inline model::RunResults template_results() {
  model::RunResults r;
  r.mode = "simulated";
  r.env.gpu = "H200";
  r.env.gpu_profile = "H200";
  r.env.commit = "test";
  r.env.date_utc = "2026-12-01T00:00:00Z";
  for (const char* v : {"rebuild", "cached"}) {
    model::VariantResult x;
    x.scenario = "tiny";
    x.fix = "packing";
    x.variant = v;
    x.baseline = std::string(v) == "rebuild";
    x.layers = 4;
    // Intervals hold their value (results.json's reader checks it).
    const double t = x.baseline ? 2e6 : 1.5e6, m = x.baseline ? 1.0 : 2.0 / 1.5, p = x.baseline ? 1.0 : 1.3;
    x.step_time_ns = {t, 0.99 * t, 1.01 * t, 2};
    x.syncs_per_step = x.baseline ? 13 : 4;
    x.measured_speedup = {m, 0.99 * m, 1.01 * m, 2};
    x.predicted_speedup = {p, 0.95 * p, 1.05 * p, 1};
    r.variants.push_back(x);
  }
  return r;
}

class FakeRun {
 public:
  explicit FakeRun(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_ / "ctl");
    const auto r = template_results();
    write_file_atomic(dir_ / "results.json", model::results_to_json(r), true);
    write_file_atomic(dir_ / "results.csv", model::results_to_csv(r), true);
    const std::string d = dir_.string(), c = (dir_ / "ctl").string();
    write_executable(dir_ / "syncscope",
                     "#!/bin/bash\n"
                     "out=''\n"
                     "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
                     "name=$(basename \"$out\")\n"
                     "echo \"run $name\" >> '" +
                         d +
                         "/runs.log'\n"
                         "echo \"syncscope run: simulated mode, writing $out\" >&2\n"
                         "[ -e '" +
                         c + "/sleep-'$name ] && sleep $(cat '" + c +
                         "/sleep-'$name)\n"
                         "if [ -e '" +
                         c + "/fail-'$name ]; then echo \"syncscope: error: $(cat '" + c +
                         "/fail-'$name)\" >&2; exit 2; fi\n"
                         "p=\"$out.partial-$$\"; mkdir -p \"$p\"\n"
                         // The owner marker core/output_policy reads (no start time: a gone pid is enough).
                         "printf 'syncscope partial results v1\\npid %s\\nhost %s\\nboot %s\\n' $$ \"$(hostname)\" "
                         "\"$(cat /proc/sys/kernel/random/boot_id)\" > \"$p/.syncscope-partial\"\n"
                         "cp '" +
                         d +
                         "/results.json' \"$p/\"\n"
                         "[ -e '" +
                         c +
                         "/kill-'$name ] && kill -9 $$\n"
                         "cp '" +
                         d +
                         "/results.csv' \"$p/\"\n"
                         "rm \"$p/.syncscope-partial\"; mv \"$p\" \"$out\"\n"
                         "[ -e '" +
                         c +
                         "/verdict-'$name ] && exit 1\n"
                         "exit 0\n");
  }
  std::filesystem::path exe() const { return dir_ / "syncscope"; }
  void set(const std::string& what, const std::string& task, const std::string& content = "x") const {
    write_file_atomic(dir_ / "ctl" / (what + "-" + task), content, true);
  }
  void clear(const std::string& what, const std::string& task) const {
    std::filesystem::remove(dir_ / "ctl" / (what + "-" + task));
  }
  std::vector<std::string> runs() const {
    std::vector<std::string> out;
    std::ifstream in(dir_ / "runs.log");
    std::string line;
    while (std::getline(in, line)) out.push_back(line.substr(4));
    return out;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace syncscope::test
