// The pieces the HTML report is assembled from (html_report.cpp): charts, timelines and
// tables. Each returns an HTML fragment; `outcome` is the run's word for its own numbers,
// "simulated" or "measured" (html_format.hpp), used in every label that names them.
#pragma once

#include <string>
#include <vector>

#include "syncscope/model/run_directory.hpp"

namespace syncscope::html {

// The validate command's rule (model/validate.hpp): error = (predicted - measured) /
// measured speedup; a non-baseline variant with a prediction fails beyond its tolerance.
struct Verdict {
  bool applicable = false;
  bool within = true;
  double error = 0;
};
Verdict verdict(const model::VariantResult& v);
std::string verdict_html(const Verdict& v);
std::string variant_label(const model::VariantResult& v, bool show_layers);

// html_charts.cpp
std::string speedup_chart(const std::string& id, const std::vector<const model::VariantResult*>& vs, bool show_layers,
                          const std::string& outcome);
std::string syncs_chart(const std::string& id, const std::vector<const model::VariantResult*>& vs, bool show_layers,
                        const std::string& outcome);
// One stacked bar per variant with a step breakdown: where one step's time goes, the host's
// blocked time beside it, and on each fix's bar the saving the model predicted.
std::string step_chart(const std::string& id, const std::vector<const TimelineStrip*>& strips,
                       const std::vector<const model::VariantResult*>& vs, const std::string& outcome);
// html_critical_path.cpp: the critical path of the strips' steps (a bar each on one time
// axis, and their longest runs); "" when no strip carries one.
std::string critical_path_chart(const std::string& id, const std::vector<const TimelineStrip*>& strips,
                                const std::string& outcome);

// html_timeline.cpp: the strips of one scenario on one time axis, with their legend.
std::string timeline_strips(const std::string& id_prefix, const std::vector<const TimelineStrip*>& strips,
                            const std::string& outcome);

// html_tables.cpp
std::string provenance_section(const std::vector<model::ReportRun>& runs);
std::string validation_section(const std::vector<model::ReportRun>& runs);
// html_published.cpp: empty unless the runs include scenarios/published/ ones.
std::string published_section(const std::vector<model::ReportRun>& runs);
std::string cross_run_tables(const std::vector<model::ReportRun>& runs);
std::string variants_table(const std::vector<const model::VariantResult*>& vs, const std::string& outcome);
// html_removals.cpp: each variant's worst sync causes and what replaying its trace without
// them saves; empty when no variant has any.
std::string removals_table(const std::vector<const model::VariantResult*>& vs, const std::string& outcome);
// Per fix, a table of the model's parameters with units and intervals, folded (<details>).
std::string parameters_details(const std::vector<const model::VariantResult*>& vs);
std::string sim_check_table(const std::vector<const model::ReportRun::SimCheckRow*>& checks);

std::string provenance_line(const model::RunResults& r);
// The models a run trained ("Mistral-7B-v0.1"; several joined by ", "; "" when unrecorded).
std::string run_models(const model::RunResults& r);

}  // namespace syncscope::html
