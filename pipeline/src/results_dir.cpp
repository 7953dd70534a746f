// The results directory written atomically (results_dir.hpp), by core's output policy.
#include "syncscope/pipeline/results_dir.hpp"

#include <cstdio>
#include <string>

#include "syncscope/core/dir_manifest.hpp"
#include "syncscope/model/results.hpp"

namespace syncscope::pipeline {

namespace fs = std::filesystem;

OwnedDirRules run_dir_rules() {
  OwnedDirRules r;
  r.marker = "results.json";
  r.marker_is_ours = [](const fs::path& p) { return (void)model::read_results(p), true; };
  r.allowed = {"results.json", "results.csv", "timelines.json",   "sim_check.json",
               "report.html",  "traces",      "traces/*.json.gz", kRunManifest};
  // Names alone let a user's own traces/x.json.gz be deleted by --force: the run's
  // manifest of names, sizes and contents decides.
  r.manifest = kRunManifest;
  return r;
}

std::string safe_file_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    // Anything else (a slash, a space, a control or non-ASCII byte) becomes one '-'.
    if (ok) out += c;
    else if (out.empty() || out.back() != '-') out += '-';
  }
  // No hidden or climbing names ("..", ".x") and no option-like leading '-'.
  while (!out.empty() && (out.front() == '.' || out.front() == '-')) out.erase(out.begin());
  while (!out.empty() && (out.back() == '.' || out.back() == '-')) out.pop_back();
  if (out.size() > 80) out.resize(80);  // a cache path as a name; the directory stays readable
  return out.empty() ? "model" : out;
}

fs::path default_results_dir(const std::string& scenario, const std::string& model, const std::string& mode) {
  std::string name = safe_file_name(scenario);
  if (!model.empty()) name += "--" + safe_file_name(model);
  return fs::path("out") / (name + "-" + safe_file_name(mode));
}

OutputDir plan_results_dir(const fs::path& dir, bool force) { return plan_output_dir(dir, force, run_dir_rules()); }

fs::path make_partial_dir(const OutputDir& out) {
  remove_stale_partial_dirs(out.target,
                            [](const std::string& line) { std::fprintf(stderr, "syncscope run: %s\n", line.c_str()); });
  const fs::path partial = syncscope::make_partial_dir(out.target);
  fs::create_directories(partial / "traces");
  return partial;
}

void publish(const fs::path& partial, const OutputDir& out, bool force) {
  publish_partial_dir(partial, out, force, run_dir_rules());
}

PartialDirGuard::~PartialDirGuard() {
  if (published || dir.empty()) return;
  if (abandon_partial_dir(dir))
    std::fprintf(stderr,
                 "syncscope run: stopped; the complete files written so far are in %s (the next run into the same "
                 "place removes it)\n",
                 dir.c_str());
}

}  // namespace syncscope::pipeline
