// Least-squares fits of step time against layer count (and experts), with bootstrap
// intervals. Deterministic: the bootstrap draws come from a seeded Rng (interval.hpp).
//
// Method: ordinary least squares (Eigen, column-pivoting QR); intervals by the residual
// bootstrap for a fixed design (the L sweep is chosen, not sampled): residuals are
// leverage-adjusted (e_i / sqrt(1 - h_ii)) and centred, resampled with replacement onto the
// fitted values, refitted; percentile intervals at `level`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/model/interval.hpp"

namespace syncscope::model {

struct FitOptions {
  int bootstrap = 2000;
  std::uint64_t seed = 20261130;
  double level = kIntervalLevel;
};

struct FittedParameter {
  std::string name;
  double value = 0;
  double lo = 0;
  double hi = 0;
  double std_error = 0;  // bootstrap standard deviation
  Interval interval() const { return {value, lo, hi}; }
};

struct LinearFit {
  std::vector<FittedParameter> parameters;
  std::vector<double> fitted;
  std::vector<double> residuals;  // y - fitted, in input order
  double rmse = 0;                // sqrt(sum e^2 / (n - p))
  int n = 0;
  int p = 0;
  // Bootstrap replicates of the coefficients (bootstrap x p), for derived quantities.
  std::vector<std::vector<double>> replicates;
};

// y ~ X beta, X given row-major as rows of equal length with one name per column.
// Throws InputError when there are fewer rows than columns + 1 or X is rank-deficient
// (e.g. every run has the same layer count).
LinearFit fit_linear(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                     const std::vector<std::string>& names, const FitOptions& options = {});

// w' beta with its bootstrap interval.
FittedParameter linear_combination(const LinearFit& fit, const std::vector<double>& weights, std::string name,
                                   double level = kIntervalLevel);

// One measured run: a variant at a layer count (and expert count for MoE).
struct RunObservation {
  std::string variant;
  int layers = 0;
  int experts = 0;  // 0 when not a MoE run
  double step_ns = 0;
};

// Fits T = a_v + b_v L (+ e_v L E when the expert count varies) jointly for a baseline and
// a fixed variant, and reports:
//   per_layer_saving = b_base - b_fix        (s in the packing model)
//   intercept_difference = a_base - a_fix     (-s if T_saved = (L-1) s holds exactly)
//   per_layer_expert_saving = e_base - e_fix  (q per MoE layer per pass, when fitted)
//   saving_at(L) for the layer counts seen
struct SavingFit {
  LinearFit fit;
  FittedParameter per_layer_saving;
  FittedParameter intercept_difference;
  bool has_experts = false;
  FittedParameter per_layer_expert_saving;
  std::vector<std::pair<int, FittedParameter>> saving_at_layers;
};

SavingFit fit_per_layer_saving(const std::vector<RunObservation>& runs, const std::string& base_variant,
                               const std::string& fix_variant, const FitOptions& options = {});

}  // namespace syncscope::model
