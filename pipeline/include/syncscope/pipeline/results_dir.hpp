// Writing the results directory atomically: everything goes to DIR.partial-<pid>-XXXXXX next
// to DIR, which is renamed to DIR when complete. What --force may replace is decided by
// core's output policy (core/output_policy.hpp): only a directory `run` wrote.
#pragma once

#include <filesystem>
#include <string>

#include "syncscope/core/output_policy.hpp"

namespace syncscope::pipeline {

// What --force may replace: a directory `run` wrote (results.json of our schema) holding
// nothing else than what it writes.
OwnedDirRules run_dir_rules();

// The default results directory: out/<scenario>-<mode>, or
// out/<scenario>--<model>-<mode> when the model is not the scenario's own (--hf-config), so
// a second config against the same scenario does not collide with the first. Each name is
// reduced to a safe file name (letters, digits, '.', '_', '-'; nothing that climbs or
// hides), so the directory is always under ./out.
std::filesystem::path default_results_dir(const std::string& scenario, const std::string& model,
                                          const std::string& mode);
// A name reduced to a safe single path component ("Qwen/Qwen3 0.6B" -> "Qwen-Qwen3-0.6B").
std::string safe_file_name(const std::string& name);

// Decides whether `dir` may receive the results (InputError naming what is in the way).
OutputDir plan_results_dir(const std::filesystem::path& dir, bool force);

// Creates DIR.partial-<pid>-XXXXXX next to the plan's target (with traces/ in it), after
// removing those of dead runs.
std::filesystem::path make_partial_dir(const OutputDir& out);
// Moves the finished partial directory to DIR, replacing an old DIR only with --force and
// only when it is ours.
void publish(const std::filesystem::path& partial, const OutputDir& out, bool force);

// A run that stops half-way: the partial directory keeps the complete files written so
// far (each written atomically), or goes away when there are none.
struct PartialDirGuard {
  std::filesystem::path dir;
  bool published = false;
  ~PartialDirGuard();
};

}  // namespace syncscope::pipeline
