// Predicted against measured speedups over a results set (`syncscope validate`).
//
// Per scenario x fix x variant: the error is (predicted - measured) / measured speedup; a
// variant fails when |error| exceeds its tolerance. Over the set: mean absolute percentage
// error and max |error| over the non-baseline variants with a prediction, and whether the
// model orders the variants of each scenario x fix as the measurements do. Two variants
// whose measured intervals overlap are a tie: either predicted order is accepted.
#pragma once

#include <string>
#include <vector>

#include "syncscope/model/published.hpp"
#include "syncscope/model/results.hpp"

namespace syncscope::model {

// 2: "measured_speedup"/"measured_order" became "observed_speedup"/"observed_order" with
// "observed_by" (a simulated run's speedups are the simulator's, not measurements).
inline constexpr int kValidationSchemaVersion = 2;

struct VariantCheck {
  std::string scenario, fix, variant;
  int layers = 0;
  bool baseline = false;
  bool has_prediction = false;  // predicted_speedup.value > 0
  Estimate predicted, measured;
  double error = 0;      // fraction
  double tolerance = 0;  // fraction
  bool within = true;
};

// Variants are ranked within one scenario, fix and depth (a layer sweep ranks each depth
// on its own: a variant at 4 layers is not faster or slower than one at 28).
struct RankingCheck {
  std::string scenario, fix;
  int layers = 0;
  std::vector<std::string> measured_order;  // fastest first
  std::vector<std::string> predicted_order;
  bool matches = true;
  std::vector<std::string> discordant;  // "a vs b" pairs ordered differently (and not tied)
};

struct ValidationReport {
  int schema_version = kValidationSchemaVersion;
  std::string source;
  std::string mode;  // of the results
  std::vector<VariantCheck> variants;
  std::vector<RankingCheck> rankings;
  int compared = 0;  // variants in the error statistics
  double mape = 0;   // fraction
  double max_abs_error = 0;
  bool ranking_matches = true;
  int failures = 0;  // variants outside their tolerance
  std::vector<std::string> notes;
  // Speedups beside the blog's published ones (forward and step) for the same model, fix and
  // variant: informational, not part of the verdict (published.hpp).
  std::vector<PublishedCheck> published;
};

ValidationReport validate_results(const RunResults& results, const std::string& source);
// The report as JSON (the table for people: reports/model_printers.hpp).
std::string validation_to_json(const ValidationReport& report);

// A difference under this fraction of the slower speedup is a tie, not an order the model
// must reproduce: simulated runs carry no spread (their "intervals" are a few ns of
// rounding wide), and two reload schedules that simulate 1.0258x and 1.0257x are the same
// speed.
inline constexpr double kRankingTieFraction = 0.005;
// The word for the speedups a results set observed, by its mode ("simulated", "measured",
// else "observed"), so a simulated run never calls its own simulator's output "measured".
std::string observed_word(const std::string& mode);

}  // namespace syncscope::model
