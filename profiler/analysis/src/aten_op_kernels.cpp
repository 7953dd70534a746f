// Kernels and launch delay per ATen op (definition in syncscope/analysis/hta_extras.hpp; HTA:
// hta/analyzers/cuda_kernel_analysis.py, CudaKernelAnalysis.get_aten_op_kernels_and_delay).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "hta_extras_internal.hpp"

namespace syncscope::analysis_detail {

namespace {

using Thread = std::pair<std::int64_t, std::int64_t>;  // (pid, tid)

struct Launch {
  const ApiCall* call;
  std::uint32_t kernel;  // index into trace.kernels
};

// One op instance's launches, put in launch order before they are read.
struct Instance {
  const Range* op = nullptr;
  std::vector<Launch> launches;
};

// Per host thread: the aten ops (outer before inner at equal starts) and the kernel launches,
// each by start; a sweep with a stack of open ops gives each launch its innermost wrapping op.
struct ThreadWork {
  std::vector<const Range*> ops;
  std::vector<Launch> launches;
};

bool is_aten(const Trace& trace, const Range& r) {
  return r.kind == RangeKind::CpuOp && trace.str(r.name).starts_with("aten::");
}

// Assigns each launch of one thread to its op instance (keyed by the op's address), or counts
// it as outside every op. HTA's rule is "the latest-starting aten op with ts <= call ts and
// ts + dur >= call end"; ops are pushed in start order, so the first wrapping op found from
// the top of the stack is that one, on properly nested and overlapping ops alike.
void assign(ThreadWork& w, std::unordered_map<const Range*, Instance>& instances, AtenOpKernels& out) {
  std::sort(w.ops.begin(), w.ops.end(), [](const Range* a, const Range* b) {
    return a->start != b->start ? a->start < b->start : a->end > b->end;
  });
  std::stable_sort(w.launches.begin(), w.launches.end(),
                   [](const Launch& a, const Launch& b) { return a.call->start < b.call->start; });
  std::vector<const Range*> open;
  std::size_t next = 0;
  for (const Launch& l : w.launches) {
    for (; next < w.ops.size() && w.ops[next]->start <= l.call->start; ++next) open.push_back(w.ops[next]);
    while (!open.empty() && open.back()->end < l.call->start) open.pop_back();  // closed: wraps nothing later
    const Range* op = nullptr;
    for (auto it = open.rbegin(); it != open.rend(); ++it)
      if ((*it)->end >= l.call->end) {
        op = *it;
        break;
      }
    if (!op) {
      ++out.launches_outside_ops;
      continue;
    }
    auto& inst = instances[op];
    inst.op = op;
    inst.launches.push_back(l);
    ++out.launches;
  }
}

// Integer ns, to nearest (HTA rounds its µs means to 3 decimals: the same resolution).
Ns mean(long double sum, std::uint64_t n) {
  return n ? static_cast<Ns>(std::llround(sum / static_cast<long double>(n))) : 0;
}

}  // namespace

void aten_op_kernels(const Trace& trace, const LaunchIndex& launches, AtenOpKernels& out) {
  std::map<Thread, ThreadWork> threads;
  for (const auto& r : trace.ranges)
    if (is_aten(trace, r)) threads[{r.pid, r.tid}].ops.push_back(&r);
  for (std::size_t i = 0; i < trace.kernels.size(); ++i) {
    const ApiCall* c = launches.call(trace.kernels[i].correlation);
    if (c) threads[{c->pid, c->tid}].launches.push_back({c, static_cast<std::uint32_t>(i)});
  }
  std::unordered_map<const Range*, Instance> instances;
  for (auto& [thread, w] : threads) assign(w, instances, out);

  struct Acc {
    std::uint64_t kernels_per_op = 0, count = 0;
    long double op_sum = 0, launch_sum = 0;
    Ns op_max = 0, launch_max = 0, kernel_ns = 0;
  };
  std::map<std::pair<std::string, std::string>, Acc> groups;
  for (auto& [op, inst] : instances) {
    // Launch order: by call start, then (one call, several kernels: a graph) by kernel start.
    std::sort(inst.launches.begin(), inst.launches.end(), [&](const Launch& a, const Launch& b) {
      return std::tie(a.call->start, trace.kernels[a.kernel].start) <
             std::tie(b.call->start, trace.kernels[b.kernel].start);
    });
    std::string seq;
    Ns kernel_ns = 0;
    for (const Launch& l : inst.launches) {
      const Kernel& k = trace.kernels[l.kernel];
      if (!seq.empty()) seq += " -> ";
      seq += trace.str(k.name);
      kernel_ns += k.end - k.start;
    }
    const Launch& first = inst.launches.front();
    const Ns op_delay = first.call->start - op->start;
    const Ns launch_delay = trace.kernels[first.kernel].start - first.call->start;
    auto& a = groups[{std::string(trace.str(op->name)), std::move(seq)}];
    a.kernels_per_op = inst.launches.size();
    ++a.count;
    a.op_sum += op_delay;
    a.launch_sum += launch_delay;
    a.op_max = a.count == 1 ? op_delay : std::max(a.op_max, op_delay);
    a.launch_max = a.count == 1 ? launch_delay : std::max(a.launch_max, launch_delay);
    a.kernel_ns += kernel_ns;
    ++out.ops;
  }
  out.group_count = groups.size();
  for (auto& [key, a] : groups) {
    AtenOpKernelGroup g;
    g.op = key.first;
    g.kernels = key.second;
    g.kernels_per_op = a.kernels_per_op;
    g.count = a.count;
    g.op_delay_mean_ns = mean(a.op_sum, a.count);
    g.op_delay_max_ns = a.op_max;
    g.launch_delay_mean_ns = mean(a.launch_sum, a.count);
    g.launch_delay_max_ns = a.launch_max;
    g.kernel_ns = a.kernel_ns;
    out.groups.push_back(std::move(g));
  }
  // HTA sorts by occurrence_count; ties by GPU time, then name, so the order is stable.
  std::sort(out.groups.begin(), out.groups.end(), [](const AtenOpKernelGroup& x, const AtenOpKernelGroup& y) {
    return std::tie(y.count, y.kernel_ns, x.op, x.kernels) < std::tie(x.count, x.kernel_ns, y.op, y.kernels);
  });
  if (out.groups.size() > kTopAtenOpGroups) out.groups.resize(kTopAtenOpGroups);
}

}  // namespace syncscope::analysis_detail
