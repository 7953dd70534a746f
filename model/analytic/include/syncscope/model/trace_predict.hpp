// `syncscope predict --trace`: estimate the model's parameters from one trace of a run that
// has not applied the fixes, and predict what each fix would save in that very run.
//
// What is looked for (model/README.md, "Predicting from a trace"):
// - packing: sync points inside layer ranges that repeat in most layers with the same cause,
//   and ranges named like a metadata/mask build (names containing mask, seqlen, seq_len,
//   cu_seq, packed_seq). s per layer = bubbles of those syncs + GPU time of kernels launched
//   inside the build ranges.
// - offload: H2D copies of at least 1 MiB inside backward ranges (names containing
//   "backward"), one per layer; c = their duration, g = kernel time in backward per reload;
//   already-overlapped copies mean the fix is in place.
// - MoE routing: runs of nonzero/where-style syncs inside a layer (count ~ E); q = their
//   bubbles.
// Each fix comes back with the evidence it used, or "not applicable" and why.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::model {

struct TracePredictOptions {
  std::string step_glob = "ProfilerStep#*";
  std::string layer_glob;             // empty: try common layer names (layer_*, *DecoderLayer*, ...)
  std::optional<GpuProfile> profile;  // round trip, overlap slowdown, unified memory
  // Each registered fix's own settings for its detector and replay edits, by fix name then key:
  // from predict's options that a fix declares for traces (FixSpec::PredictOption::trace_key:
  // offload's prefetch_depth, MoE's top_k) and from a run's scenario and step options
  // (FixSpec::trace_predict_options: logging's logging_steps). A key not given: the fix's default.
  std::map<std::string, std::map<std::string, double>> fix_numbers;
  // ... and its lists of numbers (packing's visit_windows: the sliding window of each
  // metadata build of a step in issue order, as the run's step ran it).
  std::map<std::string, std::map<std::string, std::vector<double>>> fix_lists;
  // fix_numbers[fix][key], nullopt when not given.
  std::optional<double> fix_number(const std::string& fix, const std::string& key) const;
  // fix_lists[fix][key], empty when not given.
  const std::vector<double>& fix_list(const std::string& fix, const std::string& key) const;
  int bootstrap = 1000;
  std::uint64_t seed = 20261130;
  PropagationOptions propagation;
};

// The overlap slowdown sigma from a trace where kernels sometimes run beside host-to-device
// copies (e.g. a double-buffered run): per kernel name with at least 3 launches that ran
// entirely alone and 3 that ran at least half beside a copy of >= 1 MiB on another stream of
// the same device, ratio = median(beside) / median(alone); sigma = median ratio - 1 over
// those names, with a bootstrap interval over names. nullopt when no name qualifies.
struct SlowdownEstimate {
  Interval sigma;
  int kernel_names = 0;       // names that qualified
  int beside = 0, alone = 0;  // launches used
};
std::optional<SlowdownEstimate> estimate_overlap_slowdown(const Trace& trace, int bootstrap = 1000,
                                                          std::uint64_t seed = 20261130);

// Whether a kernel's time scales with the rows it is given: GEMMs (cuBLAS/cuBLASLt's
// nvjet/xmma/gemm kernels, CUTLASS, matmul/bmm; and kernels named after a projection, as
// `*_proj`, `*.gate`, `*.up`, `*.down`, which is how our simulator and reference steps name
// expert GEMMs) and activations (silu, gelu, swiglu). Used to price capacity padding in MoE.
bool is_row_scaled_kernel(std::string_view name);

PredictionReport predict_from_trace(const Trace& trace, const TracePredictOptions& options,
                                    const std::string& source_name);

}  // namespace syncscope::model
