// `predict --trace`, private: the facts every detector reads (steps, layers, GPU work by
// correlation id, sync points per layer, the round trip) and the small helpers they share.
// collect_trace_facts() gathers them once; each fix's detector (FixSpec::detect, in its folder:
// fixes/<name>/src/detect.cpp) turns them into predictions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/model/trace_predict.hpp"

namespace syncscope::model::detail {

std::string lower(std::string_view s);
bool contains_any(const std::string& lowered, std::initializer_list<const char*> keys);

// Data-dependent-shape ops whose result size the host must read: one sync each (nonzero,
// masked_select, unique, ...). A trace fact, not a fix's: MoE routing's detector counts runs of
// them, packing's leaves them out of the syncs it looks at.
bool is_data_dependent_shape_cause(const std::string& lowered);

inline bool is_host_range(const Range& r) { return r.kind != RangeKind::GpuUserAnnotation; }
inline bool same_thread(std::int64_t a, std::int64_t b) { return a == -1 || b == -1 || a == b; }

struct Window {
  Ns start = 0, end = 0;
  std::int64_t pid = -1, tid = -1;
  std::string name;
  int step = -1;  // index into steps; -1 when the trace has none
};

// Disjoint sorted intervals; measure inside a window by binary search.
struct Union {
  std::vector<std::pair<Ns, Ns>> iv;
  void build(std::vector<std::pair<Ns, Ns>> v);
  Ns measure(Ns a, Ns b) const;
};

// Mean of v with a bootstrap interval (B resamples) at `level`; exact for fewer than 2 values.
Interval mean_ci(const std::vector<double>& v, int B, std::uint64_t seed, double level);
double median(std::vector<double> v);
std::string ms(double ns);
std::string us(double ns);

// Outermost matches only: a matching range nested in another match on the same thread is
// part of it (a module and its submodules, a python function and its cpu op).
std::vector<Window> outermost(std::vector<Window> w);
std::vector<Window> match_ranges(const Trace& t, const std::string& glob, bool annotations_only);

// What a layer range holds that every detector reads; each fix classifies these its own way in
// its folder (packing's rebuild syncs, MoE's routing runs: fixes/<name>/src/detect.cpp).
struct LayerStats {
  std::vector<const SyncPoint*> syncs;  // sync points of the layer's thread inside it, time order
};

// Everything the detectors share, gathered once from one trace.
class TraceFacts {
 public:
  TraceFacts(const Trace& trace, const TracePredictOptions& options, PredictionReport& report);

  const Trace& trace;
  const TracePredictOptions& opt;
  double level = kIntervalLevel;

  std::string layer_glob;
  std::vector<Window> layers;  // outermost layer ranges, time order
  AnalysisResult an;
  std::vector<Window> steps;  // the step ranges (--step-range)
  // Iterations: the step ranges when the trace has them, else the windows between repeated
  // iteration markers (torch.optim's "Optimizer.step#..." ranges, or a top-level forward or
  // backward range repeated once per iteration); empty when neither. Per-step figures come
  // from these, never from sums over the whole trace.
  std::vector<Window> iterations;
  std::string iteration_source;  // how they were found, for the evidence
  std::size_t n_steps = 1;       // iterations, at least 1
  std::optional<Interval> step_ns;
  std::size_t distinct_layer_names = 0;

  bool have_iterations() const { return !iterations.empty(); }
  int iteration_of(Ns t) const;  // index into iterations, -1 outside all
  // Whether layer i counts towards per-step figures: inside a whole iteration when there
  // are iterations (a partial one at the trace's edge would skew the counts), else always.
  bool in_scope(std::size_t layer) const { return !have_iterations() || layers[layer].step >= 0; }
  // "" when the layers with a pattern (has[i], per layer) appear in at least 75% of the
  // iterations that hold layers (or there are no iterations); else why not, naming `what`.
  std::string repeat_check(const std::vector<bool>& has, const std::string& what) const;

  // GPU time of the work each host call launched, by correlation id: all work, kernels, and
  // the row-scaled (GEMM and activation) kernels.
  std::unordered_map<std::uint64_t, Ns> gpu_by_corr, kernel_by_corr, row_work_by_corr;

  double round_trip_ns = 0;
  std::string round_trip_source;

  std::vector<LayerStats> ls;  // per layer

  // Calls of thread `tid` (-1: any) starting in [a, b), in start order.
  template <typename Fn>
  void for_api_in(Ns a, Ns b, std::int64_t tid, const Fn& fn) const {
    auto it = first_api_at(a);
    for (; it != api_order_.end() && trace.api_calls[*it].start < b; ++it)
      if (same_thread(tid, trace.api_calls[*it].tid)) fn(trace.api_calls[*it]);
  }
  // GPU time (from `by_corr`) of the work launched by calls of `tid` starting in [a, b).
  double launched_ns(const std::unordered_map<std::uint64_t, Ns>& by_corr, Ns a, Ns b, std::int64_t tid) const;
  // Sync points of the window's thread starting inside it.
  std::vector<const SyncPoint*> syncs_in(const Window& w) const;
  std::string layer_count_text(std::size_t n) const;

 private:
  std::vector<std::size_t>::const_iterator first_api_at(Ns a) const;
  void find_layers(PredictionReport& report);
  void find_steps(PredictionReport& report);
  void find_iterations(PredictionReport& report);
  void attribute_gpu_work();
  void choose_round_trip();
  void collect_layer_syncs();

  std::vector<std::size_t> api_order_;  // api_calls indices by start
};

// Iteration markers in a trace without step ranges: the windows between consecutive
// occurrences of the best marker (see TraceFacts::iterations); empty when none repeats.
struct IterationMarkers {
  std::vector<Window> windows;
  std::string description;  // "12 iterations between repeated 'Optimizer.step#SGD.step' ranges"
};
IterationMarkers find_iteration_markers(const Trace& trace);

// Appends `base` (not applicable, with its reason) once per variant, saving 0.
void add_not_applicable(PredictionReport& report, const FixPrediction& base,
                        std::initializer_list<const char*> variants);

// Each fix's detector (FixSpec::detect) lives in its folder (fixes/<name>/src/detect.cpp)
// and appends its variants' predictions to the report from these facts.

}  // namespace syncscope::model::detail
