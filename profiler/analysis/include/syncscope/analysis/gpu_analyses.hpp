// The analyses users of Holistic Trace Analysis (HTA) and Nsight Systems expect beside the
// sync points: kernels by name and class, launch delay and queue length per stream, GPU
// time per annotation range, copy bandwidth, and Nsight-Systems-style rules as counted
// findings. Plain result structs over the whole trace; computed in
// profiler/analysis/src/{kernel_breakdown,launch_queue,annotations_copies,rules,gpu_annotations,
// kernel_sequences}.cpp.
//
// Definitions (docs/analysis.md repeats them):
// - Kernel class, by name, first match wins (a heuristic over names, not a measurement):
//   comm (nccl*/rccl*, as is_communication_kernel), copy (GPU copies and memsets, and
//   kernels whose name says memcpy/memset/copy), attention (flash, fmha, attention, attn,
//   sdpa), gemm (gemm, cutlass, xmma, nvjet, cublas, matmul, wgmma, triton_tem), reduce
//   (reduce, reduction, softmax, norm, scan, sort, topk, bincount, triton_red, triton_per),
//   elementwise (elementwise, pointwise, triton_poi, fill, where, cat), else other;
//   case-insensitive. HTA splits only communication / memory / computation
//   (hta/utils/utils.py, get_kernel_type).
// - Launch delay of a kernel: its GPU start minus the start of the API call that launched
//   it (joined by correlation id), per (device, stream); HTA's "launch delay"
//   (hta/analyzers/cuda_kernel_analysis.py). Kernels without a launch call are not counted.
// - Queue length of a stream at time t: activities (kernels, copies, memsets) whose launch
//   call started at or before t and which have not ended at t (HTA's queue length,
//   hta/analyzers/trace_counters.py: +1 at the runtime call, -1 at the kernel's end). Max
//   and the time-weighted mean over [first launch, last end) of the stream.
// - GPU time of an annotation (UserAnnotation / NVTX range on a host thread): the summed
//   durations of the GPU activities launched by calls that start inside it on the same
//   thread (nested ranges each count their launches). Grouped by name.
// - Copy bandwidth: per direction and host memory kind, bytes / summed copy durations
//   (GB/s = 1e9 bytes/s).
// - Findings (Nsight Systems `nsys analyze` rules, cited per rule in rules.cpp): async
//   copies with pageable host memory (they block), synchronous copies (except host-to-
//   device of at most 64 KiB, as Nsight), synchronous memsets, cudaEventQuery polling
//   loops (two or more polling queries in a row; not in Nsight's rules).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/analysis/hta_extras.hpp"
#include "syncscope/analysis/kernel_sequences.hpp"
#include "syncscope/analysis/memory.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope {

enum class KernelClass : std::uint8_t { Gemm = 0, Attention, Elementwise, Reduce, Comm, Copy, Other };
inline constexpr int kKernelClasses = 7;

KernelClass classify_kernel_name(std::string_view name);
std::string_view kernel_class_name(KernelClass c);  // "gemm", "attention", ...

struct DurationStats {
  std::uint64_t count = 0;
  Ns total_ns = 0;
  double median_ns = 0;
  double p90_ns = 0;
  Ns max_ns = 0;
  // Per-kernel min/mean/std (HTA get_gpu_kernel_breakdown's second frame,
  // hta/analyzers/breakdown_analysis.py _aggr_gpu_kernel_time): std is the SAMPLE standard
  // deviation (ddof = 1, pandas' .std(), as HTA) and 0 for fewer than two values (HTA fills
  // pandas' NaN with 0).
  Ns min_ns = 0;
  double mean_ns = 0;
  double std_ns = 0;
};

struct KernelGroup {
  std::string name;  // kernel name (by_name) or class name (by_class)
  KernelClass cls = KernelClass::Other;
  DurationStats stats;
};

struct LaunchDelayCall {
  std::string api;
  std::string kernel;
  Ns launch_ns = 0;  // API call start
  Ns start_ns = 0;   // kernel start
  Ns delay_ns = 0;
  std::uint64_t correlation = 0;
};

struct StreamLaunchDelay {
  std::int32_t device = -1;
  std::int64_t stream = -1;
  DurationStats delay;                 // over kernels with a launch call
  std::vector<LaunchDelayCall> worst;  // largest delays first (at most 5)
};

struct StreamQueue {
  std::int32_t device = -1;
  std::int64_t stream = -1;
  std::uint64_t max_depth = 0;
  Ns max_at_ns = 0;       // when the maximum was first reached
  double mean_depth = 0;  // time-weighted over [first launch, last end)
};

struct AnnotationGpuTime {
  std::string name;
  std::uint64_t count = 0;  // ranges of this name
  Ns host_ns = 0;           // summed range durations
  Ns gpu_ns = 0;            // summed durations of the GPU work they launched
  std::uint64_t activities = 0;
};

// GPU user annotations (Kineto's "gpu_user_annotation" events: a record_function range as
// the GPU ran it, RangeKind::GpuUserAnnotation), per name: count and the durations' total,
// min, max, mean, sample std (HTA get_gpu_user_annotation_breakdown,
// hta/analyzers/breakdown_analysis.py; computed in gpu_annotations.cpp). Every range of the
// name counts, nested ones too, over all devices and streams of the trace (HTA: per rank).
struct GpuAnnotationTime {
  std::string name;
  DurationStats stats;
  std::uint64_t streams = 0;  // distinct (device, stream) it ran on
};

struct CopyBandwidth {
  CopyKind kind = CopyKind::Unknown;
  MemoryKind host_memory = MemoryKind::Unknown;  // the host side (src of HtoD, dst of DtoH); Device otherwise
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  Ns time_ns = 0;
  double gb_per_s = 0;  // bytes / time_ns (1 byte/ns = 1 GB/s)
};

struct FindingEvent {
  std::string api;
  std::int64_t pid = -1, tid = -1;
  Ns start_ns = 0;
  Ns duration_ns = 0;
  std::uint64_t correlation = 0;
  std::uint64_t bytes = 0;
  std::uint64_t calls = 1;  // API calls in the event (a polling loop's queries)
};

struct Finding {
  std::string rule;  // "async_copy_pageable", "sync_copy", "sync_memset", "event_query_polling"
  std::string title;
  std::uint64_t count = 0;
  Ns host_ns = 0;                    // host time in the calls that triggered it
  std::vector<FindingEvent> events;  // the first few (at most 5)
  std::string advice;
};

struct GpuAnalyses {
  std::vector<KernelGroup> by_class;  // by total time, largest first
  std::vector<KernelGroup> by_name;   // by total time, largest first; at most kTopKernels
  std::uint64_t kernel_names = 0;     // distinct names (by_name may hold fewer)
  std::vector<StreamLaunchDelay> launch_delay;
  std::vector<StreamQueue> queues;
  std::vector<AnnotationGpuTime> annotations;  // by gpu_ns, largest first; at most kTopAnnotations
  std::vector<CopyBandwidth> copies;
  std::vector<Finding> findings;  // only rules that fired
  // HTA's analyses we lacked: kernels and launch delay per ATen op, queue length over time
  // and time blocked on a full queue (hta_extras.hpp; aten_op_kernels.cpp, queue_series.cpp).
  AtenOpKernels aten_ops;
  QueueSeries queue_series;
  // Memory (issue 38): profile_memory events per device, peaks and their owners (memory.hpp).
  MemoryAnalysis memory;
  // GPU user annotations (HTA get_gpu_user_annotation_breakdown; gpu_annotations.hpp).
  std::vector<GpuAnnotationTime> gpu_annotations;  // by total, largest first; at most kTopGpuAnnotations
  std::uint64_t gpu_annotation_names = 0;          // distinct names (the list may hold fewer)
  // Frequent kernel sequences (HTA get_frequent_cuda_kernel_sequences; kernel_sequences.hpp).
  KernelSequences kernel_sequences;
};

inline constexpr std::size_t kTopKernels = 50;
inline constexpr std::size_t kTopAnnotations = 50;
inline constexpr std::size_t kTopGpuAnnotations = 50;

}  // namespace syncscope
