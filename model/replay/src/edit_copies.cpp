// pin-memory[:h2d|:d2h] (replay.hpp, docs/replay.md): every copy whose host side is pageable
// becomes a copy from or into pinned (page-locked) memory, as DataLoader(pin_memory=True) or
// tensor.pin_memory() does to a program's host buffers.
//
// What changes, from the CUDA Runtime API documentation, "API synchronization behavior"
// (https://docs.nvidia.com/cuda/cuda-runtime-api/api-sync-behavior.html):
// - Asynchronous copies (cudaMemcpyAsync and the driver's *Async): "For transfers between device
//   memory and pageable host memory, the function might be synchronous with respect to host";
//   "If pageable memory must first be staged to pinned memory, the driver may synchronize with
//   the stream and stage the copy into pinned memory"; "For all other transfers, the function
//   should be fully asynchronous." So a pinned async copy's call no longer stages nor blocks:
//   it keeps a launch call's cost (kLaunchCost below), and a device-to-host copy into pageable
//   memory, which the graph makes a wait of its call (graph_edges.cpp), stops being one.
// - Synchronous copies (cudaMemcpy): "For transfers from pinned host memory to device memory,
//   the function is synchronous with respect to the host", and device-to-host ones return once
//   the copy has completed: the call still waits for its copy (the graph's sync edge stays); the
//   copy is shorter.
// - On the device, the copy lasts bytes / the pinned rate of its direction, never longer than
//   it was recorded (a pageable copy's DMA runs from the driver's pinned staging buffer: at best
//   the pinned rate). A copy's fixed cost (its first bytes' latency) is not added: small copies
//   come out shorter than a real pinned copy of theirs, by a few microseconds each.
// - A pageable copy that the graph found held (it started later than its launch and stream
//   allow, by less than kHeldExternalNs: graph_infer.cpp) waited for the staging of its first
//   chunk; pinned, nothing is staged, so it is no longer held. Counted in a note.
//
// The pinned rate of a direction, in this order: the trace's own pinned copies of that
// direction (at least kRateMinCopies of them of kRateMinBytes or more: the median of their
// bytes / duration; smaller copies are dominated by their fixed cost), else the GPU profile
// (TracePredictOptions::profile, --gpu-profile: h2d_pinned_bytes_per_s / d2h_pinned_bytes_per_s),
// else the edit refuses (InputError, exit 2) naming the option. The rate is never taken from
// anything but the trace being edited and the profile the user names.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "edit_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/trace/api_classes.hpp"

namespace syncscope::replay::replay_detail {
namespace {

// Enough pinned copies in the trace to take their rate: a handful, each large enough that its
// duration is mostly transfer (a PCIe DMA's fixed cost is microseconds; 256 KiB take ~10 us at
// 25 GB/s).
constexpr std::size_t kRateMinCopies = 4;
constexpr std::uint64_t kRateMinBytes = std::uint64_t{256} << 10;
// Enough pinned async copy calls in the trace to take their median as the launch call's cost.
constexpr std::size_t kLaunchCostMinCalls = 4;

bool host_side_pageable(const Memcpy& m) {
  return (m.kind == CopyKind::HtoD && m.src_kind == MemoryKind::Pageable) ||
         (m.kind == CopyKind::DtoH && m.dst_kind == MemoryKind::Pageable);
}
bool host_side_pinned(const Memcpy& m) {
  return (m.kind == CopyKind::HtoD && m.src_kind == MemoryKind::Pinned) ||
         (m.kind == CopyKind::DtoH && m.dst_kind == MemoryKind::Pinned);
}

Ns median_ns(std::vector<Ns> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

struct Rate {
  double bytes_per_s = 0;
  std::string source;
};

// The pinned rate of `dir` (HtoD or DtoH): the trace's, else the profile's, else none.
std::optional<Rate> pinned_rate(const Trace& trace, CopyKind dir, const std::optional<model::GpuProfile>& profile) {
  std::vector<double> rates;
  for (const Memcpy& m : trace.memcpys)
    if (m.kind == dir && host_side_pinned(m) && m.bytes >= kRateMinBytes && m.end > m.start)
      rates.push_back(static_cast<double>(m.bytes) * 1e9 / static_cast<double>(m.end - m.start));
  const char* name = dir == CopyKind::HtoD ? "host-to-device" : "device-to-host";
  if (rates.size() >= kRateMinCopies) {
    std::sort(rates.begin(), rates.end());
    const std::size_t n = rates.size();
    const double med = n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
    return Rate{med, fmt::format("the median of the trace's {} pinned {} copies of {} KiB or more", n, name,
                                 kRateMinBytes >> 10)};
  }
  if (profile) {
    const double r = dir == CopyKind::HtoD ? profile->h2d_pinned_bytes_per_s : profile->d2h_pinned_bytes_per_s;
    const char* key = dir == CopyKind::HtoD ? "h2d_pinned_bytes_per_s" : "d2h_pinned_bytes_per_s";
    if (r > 0)
      return Rate{r, fmt::format("GPU profile {} ({}), {}; the trace has {} pinned {} copies of {} KiB or more, "
                                 "fewer than {}",
                                 profile->name, profile->source.empty() ? "built in" : profile->source, key,
                                 rates.size(), name, kRateMinBytes >> 10, kRateMinCopies)};
  }
  return std::nullopt;
}

struct LaunchCost {
  Ns ns = 0;
  std::string source;
};

// What a copy call costs once it no longer stages nor waits: the median duration of the trace's
// non-blocking async copy calls whose copy is pinned on the host side, else the median own time
// of the trace's kernel launch calls, else the profile's launch_overhead_ns.
std::optional<LaunchCost> launch_cost(const Trace& trace, const ReplayGraph& g,
                                      const std::optional<model::GpuProfile>& profile) {
  std::vector<Ns> copy_calls, launch_calls;
  std::set<std::uint32_t> seen;
  for (const ReplayNode& n : g.nodes) {
    if (n.kind == ReplayNode::Kind::Call || n.launch == kNoNode || !seen.insert(n.launch).second) continue;
    const ReplayNode& c = g.nodes[n.launch];
    if (c.sync || c.removed) continue;
    const ApiCall& a = trace.api_calls[c.record];
    if (n.kind == ReplayNode::Kind::Copy && host_side_pinned(trace.memcpys[n.record]) &&
        classify_api(a.kind, trace.str(a.name), a.cbid) == ApiClass::AsyncCopy)
      copy_calls.push_back(c.own_ns);
    else if (n.kind == ReplayNode::Kind::Kernel) launch_calls.push_back(c.own_ns);
  }
  if (copy_calls.size() >= kLaunchCostMinCalls)
    return LaunchCost{median_ns(copy_calls),
                      fmt::format("the median of the trace's {} pinned async copy calls", copy_calls.size())};
  if (!launch_calls.empty())
    return LaunchCost{median_ns(launch_calls),
                      fmt::format("the median of the trace's {} kernel launch calls (it has {} pinned async copy "
                                  "calls, fewer than {})",
                                  launch_calls.size(), copy_calls.size(), kLaunchCostMinCalls)};
  if (profile && profile->launch_overhead_ns > 0)
    return LaunchCost{static_cast<Ns>(std::llround(profile->launch_overhead_ns)),
                      fmt::format("GPU profile {}, launch_overhead_ns", profile->name)};
  return std::nullopt;
}

}  // namespace

EditResult apply_pin_memory_edit(const Trace& trace, ReplayGraph& g, const WhatIfEdit& edit,
                                 const std::optional<model::GpuProfile>& profile) {
  EditResult r;
  const bool h2d = edit.selector != "d2h", d2h = edit.selector != "h2d";
  // The copies the edit pins, and what they need.
  std::vector<std::uint32_t> copies;
  bool need[2] = {false, false};  // HtoD, DtoH
  std::size_t pageable_calls_async = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const ReplayNode& n = g.nodes[i];
    if (n.kind != ReplayNode::Kind::Copy || n.removed) continue;
    const Memcpy& m = trace.memcpys[n.record];
    if (!host_side_pageable(m) || (m.kind == CopyKind::HtoD ? !h2d : !d2h)) continue;
    copies.push_back(static_cast<std::uint32_t>(i));
    need[m.kind == CopyKind::HtoD ? 0 : 1] = true;
  }
  if (copies.empty()) {
    std::size_t pageable = 0;
    for (const Memcpy& m : trace.memcpys) pageable += host_side_pageable(m) ? 1 : 0;
    r.nothing_selected = fmt::format(
        "--what-if {}: no {}copy with a pageable host side in the trace ({} copies, {} pageable of any "
        "direction)",
        edit.text, h2d && d2h ? "" : (h2d ? "host-to-device " : "device-to-host "), trace.memcpys.size(), pageable);
    return r;
  }
  std::optional<Rate> rate[2];
  for (int d = 0; d < 2; ++d) {
    if (!need[d]) continue;
    const CopyKind dir = d == 0 ? CopyKind::HtoD : CopyKind::DtoH;
    rate[d] = pinned_rate(trace, dir, profile);
    SYNCSCOPE_INPUT_ERROR_IF(
        !rate[d],
        fmt::format("--what-if {}: no pinned {} rate: the trace has fewer than {} pinned copies of that direction "
                    "of {} KiB or more{}; give a GPU profile with --gpu-profile NAME|FILE ({}: {})",
                    edit.text, d == 0 ? "host-to-device" : "device-to-host", kRateMinCopies, kRateMinBytes >> 10,
                    profile ? fmt::format(" and the GPU profile {} has no rate for it", profile->name) : "",
                    d == 0 ? "h2d_pinned_bytes_per_s" : "d2h_pinned_bytes_per_s",
                    "model/profiles/*.yaml or a file of the same form"));
  }
  const std::optional<LaunchCost> cost = launch_cost(trace, g, profile);
  std::size_t held = 0, unblocked = 0, shortened_calls = 0;
  Ns saved_device = 0;
  std::uint64_t bytes[2] = {0, 0};
  std::set<std::uint32_t> calls_done;
  for (std::uint32_t i : copies) {
    ReplayNode& n = g.nodes[i];
    const Memcpy& m = trace.memcpys[n.record];
    const int d = m.kind == CopyKind::HtoD ? 0 : 1;
    bytes[d] += m.bytes;
    const auto pinned_ns = static_cast<Ns>(std::llround(static_cast<double>(m.bytes) * 1e9 / rate[d]->bytes_per_s));
    const Ns was = n.own_ns;
    n.own_ns = std::min(n.own_ns, std::max<Ns>(1, pinned_ns));
    saved_device += was - n.own_ns;
    if (n.held && n.gap_ns < kHeldExternalNs) {
      n.held = false;
      n.gap_ns = 0;
      ++held;
    }
    ++r.selected;
    if (n.launch == kNoNode || !calls_done.insert(n.launch).second) continue;
    ReplayNode& c = g.nodes[n.launch];
    const ApiCall& a = trace.api_calls[c.record];
    if (classify_api(a.kind, trace.str(a.name), a.cbid) != ApiClass::AsyncCopy) continue;  // synchronous: still waits
    ++pageable_calls_async;
    if (c.sync) {
      // It waited for its copy (its own time is a sync's, graph_edges.cpp): now a launch call.
      c.waits.erase(std::remove(c.waits.begin(), c.waits.end(), i), c.waits.end());
      if (c.waits.empty()) c.sync = false;
      ++unblocked;
      if (cost && !c.sync) {
        c.own_ns = cost->ns;
        ++shortened_calls;
      }
    } else if (cost && cost->ns < c.own_ns) {  // it staged the copy: now a launch call
      c.own_ns = cost->ns;
      ++shortened_calls;
    }
  }
  for (int d = 0; d < 2; ++d)
    if (need[d])
      r.notes.push_back(fmt::format("pin-memory: {} bytes {} at {:.2f} GB/s ({})", bytes[d],
                                    d == 0 ? "host-to-device" : "device-to-host", rate[d]->bytes_per_s / 1e9,
                                    rate[d]->source));
  r.notes.push_back(fmt::format(
      "pin-memory: {} copy(ies) pinned, {:.3f} ms of copy time less over the trace; {} of their {} async copy "
      "call(s) take a launch call's {:.1f} us ({}){}{}",
      copies.size(), static_cast<double>(saved_device) / 1e6, shortened_calls, pageable_calls_async,
      cost ? static_cast<double>(cost->ns) / 1e3 : 0.0, cost ? cost->source : "no launch call in the trace: kept",
      unblocked ? fmt::format("; {} no longer wait for their device-to-host copy", unblocked) : "",
      held ? fmt::format("; {} no longer held (their staging delay gone)", held) : ""));
  return r;
}

}  // namespace syncscope::replay::replay_detail
