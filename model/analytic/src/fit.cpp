#include "syncscope/model/fit.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

namespace {

FittedParameter summarize(std::string name, double value, const std::vector<double>& draws, double level) {
  FittedParameter p;
  p.name = std::move(name);
  p.value = value;
  double tail = (1 - level) / 2;
  if (draws.empty()) {
    p.lo = p.hi = value;
    return p;
  }
  p.lo = std::min(quantile(draws, tail), value);
  p.hi = std::max(quantile(draws, 1 - tail), value);
  double mean = 0;
  for (double d : draws) mean += d;
  mean /= static_cast<double>(draws.size());
  double var = 0;
  for (double d : draws) var += (d - mean) * (d - mean);
  p.std_error = draws.size() > 1 ? std::sqrt(var / static_cast<double>(draws.size() - 1)) : 0;
  return p;
}

}  // namespace

LinearFit fit_linear(const std::vector<std::vector<double>>& rows, const std::vector<double>& yv,
                     const std::vector<std::string>& names, const FitOptions& options) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  const auto p = static_cast<Eigen::Index>(names.size());
  SYNCSCOPE_INPUT_ERROR_IF(static_cast<std::size_t>(n) != yv.size(),
                           fmt::format("fit: {} design rows but {} observations", n, yv.size()));
  SYNCSCOPE_INPUT_ERROR_IF(n < p + 1, fmt::format("fit: {} observations cannot fit {} parameters with a residual "
                                                  "(need at least {})",
                                                  n, p, p + 1));
  Eigen::MatrixXd X(n, p);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    SYNCSCOPE_INPUT_ERROR_IF(static_cast<Eigen::Index>(rows[i].size()) != p,
                             fmt::format("fit: design row {} has {} columns, expected {}", i, rows[i].size(), p));
    for (Eigen::Index k = 0; k < p; ++k) X(i, k) = rows[i][k];
    y(i) = yv[i];
  }
  // Scale columns so the rank test is not fooled by ns-sized values next to counts.
  Eigen::VectorXd scale = X.colwise().norm().transpose();
  for (Eigen::Index k = 0; k < p; ++k)
    if (scale(k) == 0) scale(k) = 1;
  Eigen::MatrixXd Xs = X * scale.cwiseInverse().asDiagonal();
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Xs);
  qr.setThreshold(1e-10);
  if (qr.rank() < p) {
    std::string cols;
    for (const auto& s : names) cols += (cols.empty() ? "" : ", ") + s;
    throw InputError(
        fmt::format("fit: the runs do not determine all of ({}): the design has rank {} < {}; "
                    "vary the layer count (and expert count) across runs",
                    cols, qr.rank(), p));
  }
  auto solve = [&](const Eigen::VectorXd& rhs) -> Eigen::VectorXd {
    return (qr.solve(rhs).array() / scale.array()).matrix();
  };
  Eigen::VectorXd beta = solve(y);
  Eigen::VectorXd fitted = X * beta;
  Eigen::VectorXd e = y - fitted;

  LinearFit out;
  out.n = static_cast<int>(n);
  out.p = static_cast<int>(p);
  out.fitted.assign(fitted.data(), fitted.data() + n);
  out.residuals.assign(e.data(), e.data() + n);
  out.rmse = std::sqrt(e.squaredNorm() / static_cast<double>(n - p));

  // Leverages h_ii = diag(X (X'X)^-1 X') from the thin Q of the scaled design.
  Eigen::MatrixXd Q = qr.householderQ() * Eigen::MatrixXd::Identity(n, p);
  Eigen::VectorXd h = Q.rowwise().squaredNorm();
  Eigen::VectorXd adj(n);
  for (Eigen::Index i = 0; i < n; ++i) adj(i) = e(i) / std::sqrt(std::max(1e-12, 1.0 - h(i)));
  adj.array() -= adj.mean();

  Rng rng(options.seed);
  std::vector<std::vector<double>> draws(static_cast<std::size_t>(p));
  out.replicates.reserve(static_cast<std::size_t>(std::max(0, options.bootstrap)));
  Eigen::VectorXd ystar(n);
  for (int b = 0; b < options.bootstrap; ++b) {
    for (Eigen::Index i = 0; i < n; ++i) ystar(i) = fitted(i) + adj(static_cast<Eigen::Index>(rng.index(n)));
    Eigen::VectorXd bb = solve(ystar);
    out.replicates.emplace_back(bb.data(), bb.data() + p);
    for (Eigen::Index k = 0; k < p; ++k) draws[k].push_back(bb(k));
  }
  for (Eigen::Index k = 0; k < p; ++k) out.parameters.push_back(summarize(names[k], beta(k), draws[k], options.level));
  return out;
}

FittedParameter linear_combination(const LinearFit& fit, const std::vector<double>& w, std::string name, double level) {
  SYNCSCOPE_THROW_IF(static_cast<int>(w.size()) != fit.p, "linear_combination: weight count != parameter count");
  double value = 0;
  for (int k = 0; k < fit.p; ++k) value += w[k] * fit.parameters[k].value;
  std::vector<double> draws;
  draws.reserve(fit.replicates.size());
  for (const auto& r : fit.replicates) {
    double v = 0;
    for (int k = 0; k < fit.p; ++k) v += w[k] * r[k];
    draws.push_back(v);
  }
  return summarize(std::move(name), value, draws, level);
}

SavingFit fit_per_layer_saving(const std::vector<RunObservation>& runs, const std::string& base, const std::string& fix,
                               const FitOptions& options) {
  std::vector<const RunObservation*> use;
  std::set<int> layers_seen, experts_seen;
  for (const auto& r : runs) {
    if (r.variant != base && r.variant != fix) continue;
    SYNCSCOPE_INPUT_ERROR_IF(r.layers < 1,
                             fmt::format("fit: run of '{}' has layers {} (need >= 1)", r.variant, r.layers));
    SYNCSCOPE_INPUT_ERROR_IF(!(r.step_ns > 0), fmt::format("fit: run of '{}' at L={} has step time {} ns (need > 0)",
                                                           r.variant, r.layers, r.step_ns));
    use.push_back(&r);
    layers_seen.insert(r.layers);
    experts_seen.insert(r.experts);
  }
  SYNCSCOPE_INPUT_ERROR_IF(layers_seen.size() < 2,
                           fmt::format("fit: runs of '{}' and '{}' need at least two different layer counts", base,
                                       fix));
  const bool experts = experts_seen.size() > 1;
  // Columns: a_base, b_base, [e_base], a_fix, b_fix, [e_fix].
  std::vector<std::string> names = {"intercept_" + base, "per_layer_" + base};
  if (experts) names.push_back("per_layer_expert_" + base);
  names.push_back("intercept_" + fix);
  names.push_back("per_layer_" + fix);
  if (experts) names.push_back("per_layer_expert_" + fix);
  const std::size_t half = experts ? 3 : 2;
  std::vector<std::vector<double>> X;
  std::vector<double> y;
  for (const auto* r : use) {
    std::vector<double> row(names.size(), 0.0);
    std::size_t off = r->variant == base ? 0 : half;
    row[off] = 1;
    row[off + 1] = r->layers;
    if (experts) row[off + 2] = static_cast<double>(r->layers) * r->experts;
    X.push_back(std::move(row));
    y.push_back(r->step_ns);
  }
  SavingFit out;
  out.fit = fit_linear(X, y, names, options);
  auto w = [&](std::size_t col) {
    std::vector<double> v(names.size(), 0.0);
    v[col] = 1;
    v[col + half] = -1;
    return v;
  };
  out.per_layer_saving = linear_combination(out.fit, w(1), "per_layer_saving_ns", options.level);
  out.intercept_difference = linear_combination(out.fit, w(0), "intercept_difference_ns", options.level);
  out.has_experts = experts;
  if (experts)
    out.per_layer_expert_saving = linear_combination(out.fit, w(2), "per_layer_expert_saving_ns", options.level);
  if (!experts) {
    for (int L : layers_seen) {
      std::vector<double> v(names.size(), 0.0);
      v[0] = 1;
      v[1] = L;
      v[half] = -1;
      v[half + 1] = -L;
      out.saving_at_layers.emplace_back(L, linear_combination(out.fit, v, fmt::format("saving_at_L{}_ns", L),
                                                              options.level));
    }
  }
  return out;
}

}  // namespace syncscope::model
