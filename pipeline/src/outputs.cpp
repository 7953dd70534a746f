// results.json, results.csv, timelines.json, sim_check.json and report.html (outputs.hpp).
#include "syncscope/pipeline/outputs.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "syncscope/core/file_io.hpp"
#include "syncscope/reports/html_report.hpp"

namespace syncscope::pipeline {

namespace fs = std::filesystem;

void write_run_outputs(const fs::path& partial, const fs::path& out, const model::RunResults& results,
                       const std::vector<scenario::Scenario>& scenarios, const std::vector<Job>& jobs,
                       const std::map<std::string, TraceSummary>& summaries) {
  write_file_atomic(partial / "results.json", model::results_to_json(results));
  write_file_atomic(partial / "results.csv", model::results_to_csv(results));
  std::vector<TimelineStrip> strips;
  std::set<std::string> strip_done;
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& job : jobs) {
    const scenario::Scenario& s = scenarios[job.scenario];
    const TraceSummary& sum = summaries.at(job.key);
    const std::string id = fmt::format("{}/{}/{}", s.name, scenario::fix_name(job.fix), job.variant);
    if (sum.strip && strip_done.insert(id).second) {
      TimelineStrip st = *sum.strip;
      st.scenario = s.name;
      st.fix = scenario::fix_name(job.fix);
      st.variant = job.variant;
      strips.push_back(std::move(st));
    }
    if (sum.sim_check && strip_done.insert("check/" + id + "/" + std::to_string(job.layers)).second) {
      nlohmann::json comparison = nlohmann::json::parse(sim::comparison_to_json(sum.sim_check->comparison));
      comparison["gpu_profile"] = sum.sim_check->gpu_profile;
      checks.push_back({{"scenario", s.name},
                        {"fix", scenario::fix_name(job.fix)},
                        {"variant", job.variant},
                        {"layers", job.layers},
                        {"comparison", comparison}});
    }
  }
  write_file_atomic(partial / "timelines.json", model::timelines_to_json(strips));
  if (!checks.empty()) {
    nlohmann::json sc;
    sc["schema_version"] = 1;
    sc["mode"] = results.mode;
    sc["checks"] = checks;
    write_file_atomic(partial / "sim_check.json", sc.dump(2));
  }
  model::ReportRun rr;
  rr.results = results;
  rr.source = out.string();
  rr.timelines = strips;
  // Only its sim_checks are read: timelines.json is written above, so no strip is rebuilt
  // (nor its critical path).
  if (fs::exists(partial / "sim_check.json")) rr.sim_checks = model::load_report_run(partial, nullptr).sim_checks;
  HtmlReportOptions ho;
  // The model is named beside the scenario (a --hf-config model is not the scenario's).
  ho.title =
      fmt::format("syncscope run: {} \u2014 {} ({})",
                  scenarios.front().name + (scenarios.size() > 1 ? " and others" : ""),
                  scenarios.front().model.name.empty() ? std::string("unnamed model") : scenarios.front().model.name,
                  results.mode);
  ho.generated_utc = results.env.date_utc;
  write_file_atomic(partial / "report.html", render_html_report({rr}, ho));
}

}  // namespace syncscope::pipeline
