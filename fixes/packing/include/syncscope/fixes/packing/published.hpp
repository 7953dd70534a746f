// The packing fix's published figures (docs/sources.md#packing-cache: the Unsloth blog): the
// speedups the blog prints (the registry's `published` hook, which validate and the report
// compare runs with), and the same figures run through the closed form (L-1) s: how close the
// plain form lands. The inputs are the published numbers; everything else is computed here
// and checked independently by tests/model/test_published.cpp.
#pragma once

#include <string>
#include <vector>

#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope::fixes::packing {

struct PublishedCase {
  std::string model;
  int layers = 0;
  double per_layer_ms = 0;       // s = 13.7 ms (mask rebuild on a Blackwell GPU)
  double predicted_ms = 0;       // (L-1) s
  double measured_ms = 0;        // saving per step
  double measured_fraction = 0;  // saving / baseline step time
  double step_ms = 0;            // implied baseline step: measured_ms / measured_fraction
  double error = 0;              // (predicted - measured) / measured
  double predicted_speedup = 0;  // T / (T - predicted)
  double measured_speedup = 0;   // T / (T - measured) = 1 / (1 - fraction)
};

// The blog's Llama-3.2-1B and Qwen3-0.6B savings through (L-1) s with s = 13.7 ms.
std::vector<PublishedCase> reproduce_published_figures();
// The blog's speedups of this fix, as printed (FixSpec::published).
std::vector<PublishedFigure> published_figures();
// Its figures beside the runs of scenarios/published/ (FixSpec::published_scenarios: validate
// --published's table).
std::vector<PublishedScenarioFigure> published_scenario_figures();
// The reproduction as a Markdown table (docs/published-figures.md).
std::string published_to_markdown(const std::vector<PublishedCase>& cases);

}  // namespace syncscope::fixes::packing
