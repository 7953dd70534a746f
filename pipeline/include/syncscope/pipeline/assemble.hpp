// From trace summaries to results: one VariantResult per job (step time, syncs, overlap,
// measured and predicted speedups, model parameters, notes), and the L-sweep fits.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "syncscope/model/results.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/pipeline/summary.hpp"

namespace syncscope::pipeline {

// baseline / variant, with the interval from the two ranges.
model::Estimate speedup_estimate(const model::Estimate& base, const model::Estimate& v);

// Rows for every job in plan order; notes for variants without a prediction and for trace
// warnings are appended to results.notes, each once. `summaries` is keyed by Job::key.
void assemble_variants(const std::vector<scenario::Scenario>& scenarios, const std::vector<Job>& jobs,
                       const std::map<std::string, TraceSummary>& summaries, model::RunResults& results);

// L sweep: for each scenario with two or more depths, fits step time against depth for
// each fixed variant against its baseline (model::fit_per_layer_saving) into the variant
// rows' model_parameters ("fit_per_layer_saving_ns", ...); a failed fit is a note.
void fit_layer_sweeps(const std::vector<scenario::Scenario>& scenarios, model::RunResults& results);

}  // namespace syncscope::pipeline
