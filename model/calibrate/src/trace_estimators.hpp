// calibrate --from-trace, private: the samples each estimator draws from a trace, and the
// statistics that turn them into profile values with 90% intervals.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/model/interval.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::calibrate::calib {

// A window the fit reads: one selected step range, or the whole trace. `tid` is the step
// range's thread (its pop is a range boundary there); -1 for the whole trace.
struct FitWindow {
  Ns start = 0, end = 0;
  std::int64_t tid = -1;
};

struct CopySample {
  double bytes = 0;
  double ns = 0;
};

// Everything the estimators need, pooled over traces and windows.
struct Samples {
  // Host partition (host_costs.cpp): per op name, the host time of each top-level op (its
  // own time outside launch and sync calls, plus the host gap before it); for ops that launch,
  // split at the start of their first launch call into before (gap included) and after.
  std::map<std::string, std::vector<double>> launch_ops, launch_ops_after, plain_ops;
  // The same split per kernel key, for ops whose first launch was that kernel.
  std::map<std::string, std::vector<double>> kernel_host_before, kernel_host_after;
  // Per boundary kind ("push", "pop"), the host gap before each range boundary.
  std::map<std::string, std::vector<double>> boundaries;
  std::int64_t launches_in_launch_ops = 0;  // launch calls the launching ops made
  std::int64_t host_threads = 0;            // threads that launched GPU work

  // GPU side (gpu_estimators.cpp).
  std::map<std::string, std::vector<double>> launch_call_ns;  // API name -> call durations
  std::vector<double> latency_ns;                             // launch call start -> kernel/memset start, stream idle
  std::vector<double> copy_latency_ns;                        // the same for copies
  std::vector<double> round_trip_ns;                          // last GPU activity end -> sync return, syncs that waited
  std::int64_t syncs = 0, syncs_idle = 0;
  std::map<std::string, std::vector<CopySample>> copies;  // "h2d_pinned", ..., "d2d": copies >= 256 KiB
  std::vector<double> small_copy_ns;                      // host copies < 64 KiB
  std::map<std::string, std::vector<double>> kernels;     // kernel key -> durations
  std::int64_t gpu_records = 0;
};

// Windows of one trace: the first `max_steps` (0: all) step ranges that are no warm-up (not
// longer than warmup_factor x the median step; 0: keep all; `skipped` names the others), else
// the whole trace.
std::vector<FitWindow> fit_windows(const AnalysisResult& analysis, const Trace& trace, int max_steps,
                                   double warmup_factor, std::vector<std::string>& skipped);

void collect_host_costs(const Trace& trace, const AnalysisResult& analysis, const std::vector<FitWindow>& windows,
                        Samples& out);
void collect_gpu_samples(const Trace& trace, const AnalysisResult& analysis, const std::vector<FitWindow>& windows,
                         Samples& out);

// ---- statistics (bootstrap intervals at kIntervalLevel) ----
model::Interval median_ci(const std::vector<double>& v, int bootstrap, std::uint64_t seed);
model::Interval quantile_ci(const std::vector<double>& v, double q, int bootstrap, std::uint64_t seed);
// Sum over groups of count x median, over the total count: a mean that one-off outliers (a
// first call's set-up) do not move, with a bootstrap that resamples within each group.
model::Interval grouped_median_mean(const std::map<std::string, std::vector<double>>& groups, int bootstrap,
                                    std::uint64_t seed);
// Total bytes over total time, resampling copies.
model::Interval rate_ci(const std::vector<CopySample>& v, int bootstrap, std::uint64_t seed);
std::int64_t total_count(const std::map<std::string, std::vector<double>>& groups);

}  // namespace syncscope::calibrate::calib
