// Printers over AnalysisResult (nvbench printer_base style): the analysis computes, these
// only render. Every machine-readable form carries schema_version.
//
// JSON (schema_version = kAnalysisSchemaVersion): top level `schema_version`, `kind`
// ("syncscope.analysis"), `source`, `options`, `meta`, `totals`, `steps[]`, `layers[]`,
// `step_summary`, `layer_summary`, `worst`, `warnings`, `sync_points[]`,
// `sync_points_total`, `sync_points_truncated`. A window (totals, each step and layer)
// carries name, index, start_ns, end_ns, duration_ns, gpu_busy_ns, gpu_busy_by_device,
// kernel_ns, compute_kernel_ns, communication.{kernel_ns,kernels,overlapped_ns,
// overlap_fraction} (NCCL/RCCL kernels apart from compute), kernels, memcpys, memcpy_bytes,
// syncs.{total,by_cause,by_api, stream_wait_events,polling}, sync_blocked_ns, sync_bubble_ns,
// overlap.{h2d,d2h}.{copy_ns, overlapped_ns,fraction}, idle.{window_ns,busy_ns,sync_bubble_ns,host_wait_ns,
// dependency_wait_ns,other_ns,span_ns,fractions_of_window,sync_bubble_by_cause} and verdict
// (analysis/idle.hpp). Top level also: idle_by_device[], idle_by_stream[] ({device, stream,
// first_ns, last_ns, gaps, idle, verdict}) and gpu.{kernels_by_class, kernels_by_name,
// kernel_names, launch_delay, queue_length, annotations, copy_bandwidth, findings,
// gpu_annotations, gpu_annotation_names, kernel_sequences} (analysis/gpu_analyses.hpp,
// analysis/kernel_sequences.hpp; duration statistics: count, total_ns, median_ns, p90_ns,
// max_ns, min_ns, mean_ns, std_ns). `worst[]`: {cause, count, blocked_ns, bubble_ns, cost_ns}, and
// when analyze replayed the trace (replay/replay.hpp, add_removal_savings) `syncs_per_step`
// and `removal_saving_ns`: the step time saved per step by replaying the trace without that
// cause's syncs (median over the steps the replay built fully, or over the whole trace when
// it has no step ranges; null: not claimed). Times are
// integer nanoseconds, fractions 0..1.
//
// CSV (RFC 4180, tidy): header row
//   window_kind,window_name,window_index,metric,value,schema_version
// then one row per window x metric. window_kind is `total`, `step`, `layer`, or
// `step_summary` / `layer_summary` (window_name is then the statistic: n, median, p10, p90,
// min, max). metric names are the JSON paths above joined with '.', e.g. `syncs.total`,
// `syncs.by_cause.aten::item`, `gpu_busy_by_device.0`, `overlap.d2h.fraction`,
// `idle.host_wait_ns`, `verdict` (its value a word). After the windows, rows of kind
// idle_device / idle_stream (name "device D[ stream S]"), kernel_class, kernel, launch_delay,
// queue, annotation, copy ("HtoD pinned"), finding (the rule), gpu_annotation,
// kernel_sequences (the roots' rule) and kernel_sequence (the root op; index its rank) carry
// the GPU analyses, then
// rows of kind worst (name the cause, index its rank: count, blocked_ns, bubble_ns, cost_ns,
// and when replayed syncs_per_step and removal_saving_ns, empty when not claimed). Every
// row repeats schema_version so that concatenated or filtered files stay self-describing.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include <vector>

#include "syncscope/analysis/analysis.hpp"

namespace syncscope::replay {
struct CauseCost;  // syncscope/replay/replay.hpp: what removing a cause's syncs saves, by replay
}

namespace syncscope {

// What removing each worst offender's syncs saves (analyze computes it with the model's
// replay, replay_cost_of_causes; the analysis library cannot): matched to `worst` by cause.
using CauseRemovals = std::vector<replay::CauseCost>;

enum class OutputFormat { Table, Json, Csv };

// The one-screen summary a person reads first: totals, per-step distribution, the worst
// offenders named, warnings.
void print_analysis_table(const AnalysisResult& result, std::ostream& out, const CauseRemovals* removals = nullptr);

struct AnalysisJsonOptions {
  int indent = 2;  // < 0: one line
  // At most this many entries in sync_points[] (0: none); sync_points_truncated says when
  // some were left out and sync_points_total gives the full count.
  std::size_t max_sync_points = 10000;
  const CauseRemovals* removals = nullptr;  // worst[]'s syncs_per_step and removal_saving_ns
};
std::string analysis_to_json(const AnalysisResult& result, int indent = 2);
std::string analysis_to_json(const AnalysisResult& result, const AnalysisJsonOptions& options);

// Tidy CSV: one row per window (totals, step N, layer N) x metric.
std::string analysis_to_csv(const AnalysisResult& result, const CauseRemovals* removals = nullptr);

// "1.234 ms", "56.7 us", "890 ns": the unit people read for a duration.
std::string format_duration(Ns ns);

}  // namespace syncscope
