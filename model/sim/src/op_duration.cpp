// How long one program op runs on the GPU a profile describes (simulator.hpp,
// op_duration_ns), and the checked conversions the simulator uses for every time it makes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "profile_costs.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/sim/simulator.hpp"

namespace syncscope::sim {

using program::Op;
using program::OpKind;

namespace detail {

// "GPU profile H200 (model/profiles/H200.yaml)"
std::string profile_label(const model::GpuProfile& p) {
  return "GPU profile " + p.name + (p.source.empty() ? std::string() : " (" + p.source + ")");
}

// A simulated time as integer ns. Times are bounded (bounds::kMaxTimeNs, 146 years): a
// profile value that makes one larger is an error naming it, never a wrapped or 0 ns time.
Ns round_ns(double t, const model::GpuProfile& p, const char* field) {
  if (auto ns = bounds::ns_checked(t)) return *ns;
  throw InputError(
      fmt::format("simulator: {}: {} makes a simulated time of {:g} ns, beyond the simulator's range "
                  "(2^62 ns, 146 years); the value is not physical: check {}",
                  profile_label(p), field, t, field));
}

void require_positive(const model::GpuProfile& p, double v, const char* field) {
  if (!(v > 0))
    throw InputError(fmt::format("GPU profile {}: {} must be positive for the simulator, got {}", p.name, field, v));
}

}  // namespace detail

namespace {

using detail::require_positive;
using detail::round_ns;

// Profiles may leave the pageable rates out (datasheets do not give them); the pinned rate
// stands in then, an upper bound. Step programs copy only scalars and small index arrays
// through pageable memory, where min_copy_ns dominates anyway.
double copy_rate(const Op& op, const model::GpuProfile& p) {
  const bool pageable = op.host_memory == MemoryKind::Pageable;
  switch (op.copy) {
    case CopyKind::HtoD:
      if (pageable && p.h2d_pageable_bytes_per_s > 0) return p.h2d_pageable_bytes_per_s;
      require_positive(p, p.h2d_pinned_bytes_per_s, "h2d_pinned_bytes_per_s");
      return p.h2d_pinned_bytes_per_s;
    case CopyKind::DtoH:
      if (pageable && p.d2h_pageable_bytes_per_s > 0) return p.d2h_pageable_bytes_per_s;
      require_positive(p, p.d2h_pinned_bytes_per_s, "d2h_pinned_bytes_per_s");
      return p.d2h_pinned_bytes_per_s;
    default:
      require_positive(p, p.dram_bytes_per_s, "dram_bytes_per_s");
      return p.dram_bytes_per_s / 2;  // device-to-device: every byte is read and written
  }
}

Ns kernel_floor(const model::GpuProfile& p, const SimOptions& o) {
  return p.kernel_floor_ns > 0 ? round_ns(p.kernel_floor_ns, p, "kernel_floor_ns") : o.min_kernel_ns;
}

}  // namespace

Ns op_duration_ns(const Op& op, const model::GpuProfile& p, const SimOptions& options) {
  switch (op.kind) {
    case OpKind::Kernel: {
      Ns t = 0;
      if (op.flops > 0) {
        const double r = op.bf16 ? p.bf16_flops_per_s : p.fp32_flops_per_s;
        const char* field = op.bf16 ? "bf16_flops_per_s" : "fp32_flops_per_s";
        require_positive(p, r, field);
        t = std::max(t, round_ns(op.flops / r * 1e9, p, field));
      }
      if (op.bytes > 0) {
        require_positive(p, p.dram_bytes_per_s, "dram_bytes_per_s");
        t = std::max(t, round_ns(op.bytes / p.dram_bytes_per_s * 1e9, p, "dram_bytes_per_s"));
      }
      // A fitted profile knows this kernel's time at the traced shapes, and the shortest
      // kernels' time on that GPU (the floor below which no launch finishes).
      if (const model::FittedKernel* k = detail::fitted_kernel(p, op.name))
        t = std::max(t, round_ns(k->median_ns, p, "a fitted kernel's median_ns"));
      return std::max(t, kernel_floor(p, options));
    }
    case OpKind::Memset:
      require_positive(p, p.dram_bytes_per_s, "dram_bytes_per_s");
      return std::max(round_ns(op.bytes / p.dram_bytes_per_s * 1e9, p, "dram_bytes_per_s"), kernel_floor(p, options));
    case OpKind::Copy: {
      const double rate = copy_rate(op, p);
      const char* field = op.copy == CopyKind::HtoD   ? "h2d_pinned_bytes_per_s (or h2d_pageable_bytes_per_s)"
                          : op.copy == CopyKind::DtoH ? "d2h_pinned_bytes_per_s (or d2h_pageable_bytes_per_s)"
                                                      : "dram_bytes_per_s";
      return std::max(round_ns(op.bytes / rate * 1e9, p, field),
                      p.copy_floor_ns > 0 ? round_ns(p.copy_floor_ns, p, "copy_floor_ns") : options.min_copy_ns);
    }
    default: return 0;
  }
}

}  // namespace syncscope::sim
