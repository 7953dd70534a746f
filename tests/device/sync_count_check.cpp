#include "sync_count_check.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

namespace syncscope::gpucheck {
namespace {

using Key = std::tuple<std::string, std::string, std::string, int>;

Key key_of(const model::VariantResult& v) { return {v.scenario, v.fix, v.variant, v.layers}; }

}  // namespace

SyncCountComparison compare_sync_counts(const model::RunResults& measured, const std::string& measured_source,
                                        const model::RunResults& program, const std::string& program_source) {
  SyncCountComparison c;
  c.measured_source = measured_source;
  c.measured_mode = measured.mode;
  c.program_source = program_source;
  c.program_mode = program.mode;
  std::map<Key, const model::VariantResult*> by_key;
  for (const auto& v : program.variants) by_key.emplace(key_of(v), &v);
  for (const auto& m : measured.variants) {
    auto it = by_key.find(key_of(m));
    if (it == by_key.end()) {
      c.without_program.push_back(m.scenario + "/" + m.fix + "=" + m.variant + " L=" + std::to_string(m.layers));
      continue;
    }
    SyncCountRow r;
    r.scenario = m.scenario;
    r.fix = m.fix;
    r.variant = m.variant;
    r.layers = m.layers;
    r.measured = m.syncs_per_step;
    r.program = it->second->syncs_per_step;
    r.match = std::fabs(r.measured - r.program) < 0.5;
    (r.match ? c.matched : c.mismatched) += 1;
    c.rows.push_back(std::move(r));
  }
  return c;
}

std::string sync_counts_to_json(const SyncCountComparison& c) {
  nlohmann::json j;
  j["schema_version"] = c.schema_version;
  j["measured"] = {{"source", c.measured_source}, {"mode", c.measured_mode}};
  j["program"] = {{"source", c.program_source}, {"mode", c.program_mode}};
  j["rows"] = nlohmann::json::array();
  for (const auto& r : c.rows)
    j["rows"].push_back({{"scenario", r.scenario},
                         {"fix", r.fix},
                         {"variant", r.variant},
                         {"layers", r.layers},
                         {"measured_syncs_per_step", r.measured},
                         {"program_syncs_per_step", r.program},
                         {"match", r.match}});
  j["without_program"] = c.without_program;
  j["matched"] = c.matched;
  j["mismatched"] = c.mismatched;
  j["all_match"] = c.all_match();
  return j.dump(2) + "\n";
}

std::string sync_counts_to_text(const SyncCountComparison& c) {
  std::string out = "syncs per step: " + c.measured_mode + " run (" + c.measured_source + ") vs step program (" +
                    c.program_mode + " run " + c.program_source + ")\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %-12s %-9s %6s %10s %10s  %s\n", "scenario", "fix", "variant", "layers",
                "measured", "program", "verdict");
  out += line;
  for (const auto& r : c.rows) {
    std::snprintf(line, sizeof line, "%-20s %-12s %-9s %6d %10.1f %10.1f  %s\n", r.scenario.c_str(), r.fix.c_str(),
                  r.variant.c_str(), r.layers, r.measured, r.program, r.match ? "match" : "DIFFERS");
    out += line;
  }
  for (const auto& w : c.without_program) out += "no step-program run for " + w + "\n";
  out += std::to_string(c.matched) + " match, " + std::to_string(c.mismatched) + " differ\n";
  return out;
}

}  // namespace syncscope::gpucheck
