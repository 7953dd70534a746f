// Frequent kernel sequences: the same ordered list of GPU kernels launched again and again
// under one host operator, counted, with the GPU time it took: candidates for fusion (one
// kernel, a CUDA graph, torch.compile). Computed in profiler/analysis/src/kernel_sequences.cpp.
//
// Definition (Holistic Trace Analysis, hta/analyzers/cuda_kernel_analysis.py,
// CudaKernelAnalysis.get_frequent_cuda_kernel_sequences, HTA f4d0062):
// - Roots. With an operator name: the host ranges (cpu_op, user_annotation, python_function,
//   NVTX) whose name CONTAINS it (case-sensitive), at the smallest nesting depth any of them
//   has (Range::depth, over all host ranges of the thread, as HTA's call-stack depth), so a
//   matching op nested in another matching op is not counted twice. Without one (HTA
//   requires it): every top-level cpu_op, i.e. a cpu_op no other cpu_op of its thread
//   encloses (the ATen ops and autograd nodes the Python code called).
// - A root's kernels: the GPU activities (kernels, copies, memsets) whose launch call
//   (joined by correlation id) starts inside the root, [start, end), on the root's thread,
//   ordered by GPU start. Roots with fewer than min_pattern_len of them are skipped.
// - Pattern: the root's name followed by its kernels' names (copies as "Memcpy DtoH",
//   memsets as "Memset", as in the kernel breakdown). Per pattern: how many roots had it,
//   the summed GPU durations of its kernels (HTA's "GPU kernel duration") and the summed
//   root durations (HTA's "CPU op duration"). Ordered by count, largest first, then by the
//   pattern's text ('|'-joined, as HTA); the first top_k are kept.
// Where HTA differs (docs/analysis.md): HTA also counts the CUPTI synchronization records
// of a cudaStreamSynchronize inside the root ("Stream Sync") as kernels (in the pattern, the
// length and the GPU time; we count GPU work only); HTA matches GPU-side events too, so an
// operator name that a gpu_user_annotation also carries finds nothing in HTA (its depth -1
// is the smallest); HTA rounds fractional-µs times (ceil start, floor end), which can move a
// launch into the neighbouring op and reorder kernels; HTA joins the backward thread's
// stack under the forward one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "syncscope/core/units.hpp"

namespace syncscope {

// HTA's defaults (get_frequent_cuda_kernel_sequences: min_pattern_len=3, top_k=5).
inline constexpr std::size_t kDefaultSequenceMinLen = 3;
inline constexpr std::size_t kDefaultSequenceTop = 5;

struct KernelSequenceOptions {
  std::string op;  // substring of the root ops' names; empty: top-level cpu_ops
  std::size_t min_pattern_len = kDefaultSequenceMinLen;
  std::size_t top_k = kDefaultSequenceTop;
};

struct KernelSequence {
  std::string op;                    // the root's name
  std::vector<std::string> kernels;  // in GPU start order
  std::uint64_t count = 0;           // roots with exactly this pattern
  Ns gpu_ns = 0;                     // summed kernel durations over those roots
  Ns host_ns = 0;                    // summed root durations
};

struct KernelSequences {
  KernelSequenceOptions options;
  std::uint64_t roots = 0;     // roots with at least min_pattern_len kernels
  std::uint64_t patterns = 0;  // distinct patterns among them (top may hold fewer)
  std::vector<KernelSequence> top;
};

}  // namespace syncscope
