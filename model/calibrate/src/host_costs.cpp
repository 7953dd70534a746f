// Host cost per op, from a trace: each thread that launches GPU work has its time in a window
// partitioned, item by item, into what the simulator charges:
// - launch calls (cudaLaunchKernel, cudaMemcpyAsync, ...: API calls whose correlation id
//   names a kernel, copy or memset) -> launch_overhead_ns, estimated apart;
// - sync waits (the analysis' sync points) -> the simulator's own sync model;
// - a top-level CPU op (a cpu_op not inside another) -> its own time outside those calls,
//   plus the host gap before it: "ops that launch kernels" when it made a launch call, else
//   "ops that launch nothing"; a launch call outside any op counts as an op of its own;
// - a range boundary (a user_annotation or NVTX range's start or end, not inside an op) ->
//   the host gap before it; the step range's own end is one too.
// The gap before an item runs from the thread's previous item, less the time other threads'
// items (and this thread's syncs) cover: a thread waiting while another works is not
// spending host time. Python frames (python_function) are not items: their time is the gap.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "trace_estimators.hpp"

namespace syncscope::calibrate::calib {

namespace {

bool is_boundary_range(const Range& r) {
  return r.kind == RangeKind::UserAnnotation || r.kind == RangeKind::NvtxPushPop || r.kind == RangeKind::NvtxStartEnd;
}

enum class ItemKind { Op, LaunchCall, Push, Pop };

// A call inside an op that is not its host cost: a launch or a sync wait.
struct Call {
  Ns start = 0, end = 0;
  bool launch = false;
  std::uint64_t correlation = 0;
};

struct Item {
  ItemKind kind = ItemKind::Op;
  Ns start = 0, end = 0;
  std::string name;
  std::vector<Call> calls;
};

// An op's host time before and after the start of its first launch call, calls excluded;
// `first` is that call (nullptr when the op launches nothing: all of it is "before").
struct Split {
  double before = 0, after = 0;
  const Call* first = nullptr;
  int launches = 0;
};
Split split(const Item& op) {
  Split s;
  for (const auto& c : op.calls)
    if (c.launch) {
      ++s.launches;
      if (!s.first || c.start < s.first->start) s.first = &c;
    }
  const Ns cut = s.first ? s.first->start : op.end;
  Ns before = cut - op.start, after = op.end - cut;
  for (const auto& c : op.calls) {
    // Clip each call to the op; the part before the cut is not "before" host time, etc.
    const Ns a = std::max(c.start, op.start), b = std::min(c.end, op.end);
    before -= std::max<Ns>(0, std::min(b, cut) - a);
    after -= std::max<Ns>(0, b - std::max(a, cut));
  }
  s.before = static_cast<double>(std::max<Ns>(0, before));
  s.after = static_cast<double>(std::max<Ns>(0, after));
  return s;
}

struct ThreadRecords {
  std::vector<const Range*> ops;     // CpuOp ranges
  std::vector<const Range*> ranges;  // boundary ranges
  std::vector<const ApiCall*> launches;
  std::vector<std::pair<Ns, Ns>> syncs;  // blocked intervals
};

}  // namespace

void collect_host_costs(const Trace& trace, const AnalysisResult& an, const std::vector<FitWindow>& windows,
                        Samples& out) {
  std::unordered_set<std::uint64_t> gpu_corr;
  std::unordered_map<std::uint64_t, std::string> kernel_of;  // correlation -> kernel key
  for (const auto& k : trace.kernels) {
    gpu_corr.insert(k.correlation);
    if (k.correlation) kernel_of.try_emplace(k.correlation, kernel_key(trace.str(k.name)));
  }
  for (const auto& m : trace.memcpys) gpu_corr.insert(m.correlation);
  for (const auto& m : trace.memsets) gpu_corr.insert(m.correlation);
  gpu_corr.erase(0);

  std::unordered_map<std::int64_t, ThreadRecords> threads;
  for (const auto& s : an.sync_points) threads[s.tid].syncs.emplace_back(s.start, s.end);
  for (const auto& a : trace.api_calls) {
    if (!a.correlation || !gpu_corr.count(a.correlation)) continue;
    bool blocking = false;  // a synchronous copy, or a copy merged into a sync point
    for (const auto& [s, e] : threads[a.tid].syncs)
      if (s <= a.start && a.end <= e) blocking = true;
    if (!blocking) threads[a.tid].launches.push_back(&a);
  }
  for (const auto& r : trace.ranges) {
    if (r.kind == RangeKind::CpuOp) threads[r.tid].ops.push_back(&r);
    else if (is_boundary_range(r)) threads[r.tid].ranges.push_back(&r);
  }

  for (const auto& w : windows) {
    auto inside = [&](Ns t) { return w.start <= t && t < w.end; };
    // Items per thread that launched work in this window.
    std::map<std::int64_t, std::vector<Item>> items;
    for (auto& [tid, rec] : threads) {
      bool launched = false;
      for (const auto* a : rec.launches) launched = launched || inside(a->start);
      if (!launched) continue;
      std::vector<const Range*> ops;
      for (const auto* r : rec.ops)
        if (inside(r->start)) ops.push_back(r);
      std::sort(ops.begin(), ops.end(), [](const Range* a, const Range* b) {
        return a->start != b->start ? a->start < b->start : a->end > b->end;
      });
      std::vector<Item>& v = items[tid];
      for (const auto* r : ops) {
        if (!v.empty() && r->start < v.back().end) continue;  // nested in the previous top-level op
        v.push_back({ItemKind::Op, r->start, r->end, std::string(trace.str(r->name)), {}});
      }
      auto op_at = [&](Ns t) -> Item* {
        auto it = std::upper_bound(v.begin(), v.end(), t, [](Ns x, const Item& i) { return x < i.start; });
        if (it == v.begin()) return nullptr;
        --it;
        return (it->start <= t && t < it->end) ? &*it : nullptr;
      };
      std::vector<Item> extra;
      for (const auto* a : rec.launches) {
        if (!inside(a->start)) continue;
        const Call call{a->start, a->end, true, a->correlation};
        if (Item* op = op_at(a->start)) op->calls.push_back(call);
        else extra.push_back({ItemKind::LaunchCall, a->start, a->end, std::string(trace.str(a->name)), {call}});
      }
      for (const auto& [s, e] : rec.syncs)
        if (inside(s))
          if (Item* op = op_at(s)) op->calls.push_back({s, e, false, 0});
      // A range boundary at an op's first ns is not inside it: a range pushed there holds the
      // op, one popped there closed before it (a simulated trace has no host time between).
      auto in_op = [&](Ns t) {
        const Item* op = op_at(t);
        return op && op->start < t;
      };
      for (const auto* r : rec.ranges) {
        if (r->start == w.start && r->end == w.end) continue;  // the step range itself
        if (inside(r->start) && !in_op(r->start)) extra.push_back({ItemKind::Push, r->start, r->start, "push", {}});
        if (inside(r->end) && !in_op(r->end)) extra.push_back({ItemKind::Pop, r->end, r->end, "pop", {}});
      }
      v.insert(v.end(), extra.begin(), extra.end());
      // On the same ns a boundary comes first (see in_op).
      auto boundary = [](const Item& i) { return i.kind == ItemKind::Push || i.kind == ItemKind::Pop; };
      std::stable_sort(v.begin(), v.end(), [&](const Item& a, const Item& b) {
        return a.start != b.start ? a.start < b.start : boundary(a) && !boundary(b);
      });
    }
    // What each thread's gaps must not count: the other threads' items, its own syncs.
    for (auto& [tid, v] : items) {
      std::vector<std::pair<Ns, Ns>> covered;
      for (const auto& [other, ov] : items)
        if (other != tid)
          for (const auto& i : ov) covered.emplace_back(i.start, i.end);
      covered.insert(covered.end(), threads[tid].syncs.begin(), threads[tid].syncs.end());
      model::detail::Union cover;
      cover.build(std::move(covered));
      ++out.host_threads;
      Ns cursor = w.start;
      auto gap_to = [&](Ns t) {
        const Ns g = std::max<Ns>(0, t - cursor - cover.measure(cursor, t));
        return static_cast<double>(g);
      };
      for (const auto& i : v) {
        if (i.start < cursor) continue;  // overlaps the previous item (malformed nesting)
        const double gap = gap_to(i.start);
        switch (i.kind) {
          case ItemKind::Push:
          case ItemKind::Pop:
            out.boundaries[i.name].push_back(gap);
            cursor = i.start;
            break;
          case ItemKind::LaunchCall:
          case ItemKind::Op: {
            const Split sp = split(i);
            const std::string name =
                i.kind == ItemKind::LaunchCall ? "(launch call outside a CPU op) " + i.name : i.name;
            if (sp.launches > 0) {
              out.launch_ops[name].push_back(gap + sp.before);
              out.launch_ops_after[name].push_back(sp.after);
              out.launches_in_launch_ops += sp.launches;
              if (auto k = kernel_of.find(sp.first->correlation); k != kernel_of.end()) {
                out.kernel_host_before[k->second].push_back(gap + sp.before);
                out.kernel_host_after[k->second].push_back(sp.after);
              }
            } else {
              out.plain_ops[name].push_back(gap + sp.before);
            }
            cursor = i.end;
            break;
          }
        }
      }
      if (tid == w.tid && w.tid != -1) out.boundaries["pop"].push_back(gap_to(w.end));
    }
  }
}

}  // namespace syncscope::calibrate::calib
