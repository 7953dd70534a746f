// What a fitted GPU profile (calibrate --from-trace) adds to the simulator: host time per
// framework op and per range boundary, and kernel durations as the trace showed them.
// Profiles without these fields (datasheet ones) leave the simulator as it was.
#pragma once

#include <string>
#include <string_view>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/program/program.hpp"

namespace syncscope::sim::detail {

// The host time a fitted profile charges around one program op:
// - a launch that starts a framework op (a kernel, memset or copy without continues_op):
//   `before` = the op's host time up to its launch call (the fitted kernel's own figure when
//   the kernel is named like one the trace showed, else host_launch_op_ns), plus
//   plain_ops_per_launch_op * host_op_ns for the ops that launch nothing in between (step
//   programs list launches, not every framework op); `after` = its host time after the call,
//   charged when the next op starts or a range opens or closes (after its sync, for .item());
// - a range push or pop: `before` = host_range_ns, and it closes the previous op;
// - anything else (a continuing launch, syncs, event records, HostWork with its own host_ns):
//   nothing.
struct OpHostCost {
  double before = 0;
  double after = 0;
  bool starts_op = false;  // a new framework op begins here
  bool boundary = false;   // a range push or pop
};
OpHostCost op_host_cost(const program::Op& op, const model::GpuProfile& profile);

// The fitted kernel whose name contains `name` as a whole identifier (the most launched one
// when several do); nullptr when none does or `name` is empty.
const model::FittedKernel* fitted_kernel(const model::GpuProfile& profile, std::string_view name);

// op_duration.cpp: "GPU profile H200 (model/profiles/H200.yaml)" for messages.
std::string profile_label(const model::GpuProfile& p);
// A simulated time as integer ns; beyond bounds::kMaxTimeNs an InputError naming `field`.
Ns round_ns(double t, const model::GpuProfile& p, const char* field);
// An InputError naming `field` unless v > 0.
void require_positive(const model::GpuProfile& p, double v, const char* field);

}  // namespace syncscope::sim::detail
