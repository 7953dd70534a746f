// What-if edits of a replay graph (replay.hpp): each changes only what the fix changes in
// the program, and the replay computes the rest.
// - remove-syncs:SELECTOR=GLOB: the selected sync points' waits and the device-to-host copies
//   that only serve them go; the host's own time (the op around the sync, the copy's launch
//   call) stays, so the saving is what the wait cost on the critical path, no more.
// - packing-cache: every metadata/mask rebuild after the first in a step goes (Unsloth's
//   cache keeps one per batch): with rebuild ranges, their host time, the GPU work launched
//   inside them and their syncs; without, the repeated per-layer syncs (as remove-syncs).
//   Detection is predict --trace's (model/README.md, "Predicting from a trace").
// - double-buffer: the copy stream's k-th wait on the compute stream waits for what its
//   (k-1)-th waited for: with two buffers, reload k reuses the buffer compute k-2 last read.
// - moe-sorted / moe-device (edit_moe.cpp): a layer's per-expert routing queries become 3
//   syncs (torch.bincount reads min and max back, then .tolist() the counts;
//   kMoeSortedSyncsPerCall) / none, and for device the per-expert loop one pass.
// - pin-memory[:h2d|:d2h] (edit_copies.cpp): every copy with a pageable host side becomes pinned:
//   its device time bytes / the pinned rate (the trace's own pinned copies, else --gpu-profile),
//   its async call a launch call's cost, no longer staging nor waiting.
// - a registered fix's own (FixSpec::what_if_edits, e.g. fixes/logging's logging-every[:N]):
//   its replay_edit hook, through ReplayEditContext (syncscope/replay/replay_edit.hpp).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "edit_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/glob.hpp"
#include "syncscope/model/analytic.hpp"
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::replay {
namespace replay_detail {

constexpr std::uint64_t kReloadMinBytes = std::uint64_t{1} << 20;  // predict --trace's reload threshold

void remove_sync(ReplayGraph& g, const ReplaySync& s) {
  ReplayNode& n = g.nodes[s.node];
  n.removed = true;
  n.own_ns = 0;  // the sync call is not made; the op around it keeps its own time (the gaps)
  for (std::uint32_t c : s.copies) g.nodes[c].removed = true;
}

namespace {
Ns overlap(Ns a0, Ns a1, Ns b0, Ns b1) { return std::max<Ns>(0, std::min(a1, b1) - std::max(a0, b0)); }
}  // namespace

std::int32_t thread_of(const ReplayGraph& g, std::int64_t pid, std::int64_t tid) {
  for (std::size_t t = 0; t < g.threads.size(); ++t)
    if ((pid < 0 || g.threads[t].first == pid) && g.threads[t].second == tid) return static_cast<std::int32_t>(t);
  return -1;
}

// Removes the host time a thread spent in [a, b): the calls inside it (collected in `gone`:
// the GPU work they launched goes too, remove_launched), and the parts of calls and gaps
// that overlap it.
void remove_host_window(ReplayGraph& g, std::int32_t thread, Ns a, Ns b, std::set<std::uint32_t>& gone) {
  if (thread < 0) return;
  const auto& list = g.thread_calls[static_cast<std::size_t>(thread)];
  auto it =
      std::lower_bound(list.begin(), list.end(), a, [&](std::uint32_t n, Ns x) { return g.nodes[n].rec_start < x; });
  if (it != list.begin()) --it;  // the call the window may start inside
  for (; it != list.end(); ++it) {
    ReplayNode& n = g.nodes[*it];
    if (n.rec_start >= b && (n.prev == kNoNode || g.nodes[n.prev].rec_end >= b)) break;
    if (n.prev != kNoNode) n.gap_ns -= std::min(n.gap_ns, overlap(g.nodes[n.prev].rec_end, n.rec_start, a, b));
    if (a <= n.rec_start && n.rec_end <= b) {
      n.removed = true;
      n.own_ns = 0;
      gone.insert(*it);
    } else {
      n.own_ns -= std::min(n.own_ns, overlap(n.rec_start, n.rec_end, a, b));
    }
  }
}

void remove_launched(ReplayGraph& g, const std::set<std::uint32_t>& gone) {
  if (gone.empty()) return;
  for (auto& n : g.nodes)
    if (n.kind != ReplayNode::Kind::Call && n.launch != kNoNode && gone.count(n.launch)) n.removed = true;
}

// The outermost CPU-op range on the sync's thread named like its cause and holding its start.
const Range* enclosing_op(const Trace& trace, const ReplaySync& s) {
  const Range* best = nullptr;
  for (const Range& r : trace.ranges) {
    if (r.kind != RangeKind::CpuOp || r.tid != s.tid || r.start > s.rec_start) continue;
    if (s.rec_start >= r.end || trace.str(r.name) != s.cause) continue;
    if (!best || r.start < best->start) best = &r;
  }
  return best;
}

std::string holdings(const ReplayGraph& g, bool by_cause) {
  std::map<std::string, std::size_t> m;
  for (const auto& s : g.syncs) ++m[by_cause ? s.cause : s.api];
  if (m.empty()) return "the trace has no sync points";
  std::string out = fmt::format("the trace's sync points by {}:", by_cause ? "cause" : "API");
  std::size_t k = 0;
  for (const auto& [name, n] : m) {
    if (k++ == 12) {
      out += fmt::format(" and {} more", m.size() - 12);
      break;
    }
    out += fmt::format("{} {} x {}", k == 1 ? "" : ",", n, name);
  }
  return out;
}

// The ReplaySync for an analysis sync point (same thread, same start).
SyncsByStart syncs_by_start(const ReplayGraph& g) {
  std::unordered_map<Ns, std::vector<std::size_t>> m;
  for (std::size_t i = 0; i < g.syncs.size(); ++i) m[g.syncs[i].rec_start].push_back(i);
  return m;
}
std::optional<std::size_t> find_sync(const ReplayGraph& g, const SyncsByStart& m, const SyncPoint& sp) {
  auto it = m.find(sp.start);
  if (it == m.end()) return std::nullopt;
  for (std::size_t i : it->second)
    if (g.syncs[i].tid == sp.tid && g.syncs[i].pid == sp.pid) return i;
  return std::nullopt;
}

}  // namespace replay_detail

using namespace replay_detail;

namespace {

// The registered fix's spelling `text` is (EDIT or EDIT:ARG), if any.
std::optional<std::pair<const fixes::FixSpec*, const fixes::WhatIfSpelling*>> registered_edit(const std::string& text) {
  for (const fixes::FixSpec& f : fixes::fix_registry()) {
    if (!f.replay_edit) continue;
    for (const fixes::WhatIfSpelling& w : f.what_if_edits)
      if (text == w.edit || (text.size() > w.edit.size() + 1 && text.starts_with(w.edit) && text[w.edit.size()] == ':'))
        return std::make_pair(&f, &w);
  }
  return std::nullopt;
}

}  // namespace

std::string what_if_forms() {
  std::string forms =
      "remove-syncs:cause=GLOB, remove-syncs:api=GLOB, remove-syncs:range=GLOB, remove-syncs:all, packing-cache, "
      "packing-device, double-buffer, prefetch[:K], moe-sorted, moe-device";
  std::vector<std::string> more = {"pin-memory[:h2d|:d2h]"};
  for (const std::string& w : registered_what_if_edits()) {
    const auto reg = registered_edit(w);
    more.push_back(reg && !reg->second->argument.empty() ? w + "[:" + reg->second->argument + "]" : w);
  }
  for (std::size_t i = 0; i < more.size(); ++i) forms += (i + 1 == more.size() ? " or " : ", ") + more[i];
  return forms;
}

std::vector<std::string> registered_what_if_edits() {
  std::vector<std::string> out;
  for (const fixes::FixSpec& f : fixes::fix_registry())
    if (f.replay_edit)
      for (const fixes::WhatIfSpelling& w : f.what_if_edits) out.push_back(w.edit);
  return out;
}

WhatIfEdit parse_what_if(const std::string& text) {
  WhatIfEdit e;
  e.text = text;
  const std::string forms = what_if_forms();
  if (const auto reg = registered_edit(text)) {
    e.kind = WhatIfEdit::Kind::Registered;
    e.fix = reg->first->id;
    e.variant = reg->second->variant;
    if (text.size() > reg->second->edit.size()) e.argument = text.substr(reg->second->edit.size() + 1);
    SYNCSCOPE_INPUT_ERROR_IF(!e.argument.empty() && reg->second->argument.empty(),
                             fmt::format("--what-if '{}': {} takes no argument", text, reg->second->edit));
    return e;
  }
  if (text == "packing-cache") e.kind = WhatIfEdit::Kind::PackingCache;
  else if (text == "packing-device") e.kind = WhatIfEdit::Kind::PackingDevice;
  else if (text == "double-buffer") e.kind = WhatIfEdit::Kind::DoubleBuffer;
  else if (text == "prefetch") e.kind = WhatIfEdit::Kind::Prefetch;
  else if (text.starts_with("prefetch:")) {
    e.kind = WhatIfEdit::Kind::Prefetch;
    const std::string k = text.substr(9);
    const bool digits =
        !k.empty() && k.size() <= 4 && std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
    e.depth = digits ? std::stoi(k) : 0;
    SYNCSCOPE_INPUT_ERROR_IF(e.depth < 2 || e.depth > 1024,
                             fmt::format("--what-if '{}': prefetch:K looks K = 2..1024 layers ahead (a ring of K+1 "
                                         "buffers; K = 1 is double-buffer)",
                                         text));
  } else if (text == "moe-sorted") e.kind = WhatIfEdit::Kind::MoeSorted;
  else if (text == "moe-device") e.kind = WhatIfEdit::Kind::MoeDevice;
  else if (text == "pin-memory" || text == "pin-memory:h2d" || text == "pin-memory:d2h") {
    e.kind = WhatIfEdit::Kind::PinMemory;
    if (text.size() > 10) e.selector = text.substr(11);
  } else if (text.starts_with("pin-memory:")) {
    throw InputError(fmt::format("--what-if '{}': pin-memory takes h2d or d2h (or nothing: both directions)", text));
  } else if (text == "remove-syncs:all") {
    e.kind = WhatIfEdit::Kind::RemoveSyncs;
    e.selector = "all";
    e.pattern = "*";
  } else if (text.starts_with("remove-syncs:")) {
    e.kind = WhatIfEdit::Kind::RemoveSyncs;
    const std::string rest = text.substr(13);
    const auto eq = rest.find('=');
    SYNCSCOPE_INPUT_ERROR_IF(eq == std::string::npos || eq + 1 >= rest.size(),
                             fmt::format("--what-if '{}': expected {}", text, forms));
    e.selector = rest.substr(0, eq);
    e.pattern = rest.substr(eq + 1);
    SYNCSCOPE_INPUT_ERROR_IF(e.selector != "cause" && e.selector != "api" && e.selector != "range",
                             fmt::format("--what-if '{}': the selector '{}' is not cause, api or range", text,
                                         e.selector));
  } else {
    throw InputError(fmt::format("--what-if '{}': expected {}", text, forms));
  }
  return e;
}

EditResult apply_what_if(const Trace& trace, ReplayGraph& g, const WhatIfEdit& edit,
                         const model::TracePredictOptions& predict_options) {
  EditResult r;
  if (edit.kind == WhatIfEdit::Kind::RemoveSyncs) {
    std::vector<const Range*> ranges;
    if (edit.selector == "range")
      for (const Range& x : trace.ranges)
        if (x.kind != RangeKind::GpuUserAnnotation && glob_match(edit.pattern, trace.str(x.name))) ranges.push_back(&x);
    for (const ReplaySync& s : g.syncs) {
      bool hit = edit.selector == "all";
      if (edit.selector == "cause") hit = glob_match(edit.pattern, s.cause);
      if (edit.selector == "api") hit = glob_match(edit.pattern, s.api);
      if (edit.selector == "range")
        for (const Range* x : ranges)
          if (x->start <= s.rec_start && s.rec_start < x->end && (x->tid < 0 || x->tid == s.tid)) hit = true;
      if (!hit) continue;
      remove_sync(g, s);
      ++r.selected;
    }
    if (r.selected == 0) {
      if (edit.selector == "range")
        r.nothing_selected = fmt::format(
            "--what-if {}: no sync point starts inside a host range matching '{}' ({} such "
            "range(s)); {}",
            edit.text, edit.pattern, ranges.size(), holdings(g, true));
      else
        r.nothing_selected = fmt::format("--what-if {}: no sync point's {} matches '{}'; {}", edit.text, edit.selector,
                                         edit.pattern, holdings(g, edit.selector != "api"));
    }
    return r;
  }

  if (edit.kind == WhatIfEdit::Kind::DoubleBuffer || edit.kind == WhatIfEdit::Kind::Prefetch) {
    // A ring of d+1 buffers (d = 1: double buffering): reload k reuses the buffer reload k-d
    // filled, so it waits only for what reload k-d waited for (that buffer's last reader);
    // the first reloads wait for what the first waited for.
    const std::size_t d = edit.kind == WhatIfEdit::Kind::DoubleBuffer
                              ? 1
                              : static_cast<std::size_t>(edit.depth > 0 ? edit.depth : predict_options.prefetch_depth);
    // Per copy stream: its nodes that wait on another stream and are reloads.
    std::map<std::int32_t, std::vector<std::uint32_t>> waited;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const ReplayNode& n = g.nodes[i];
      if (n.kind != ReplayNode::Kind::Copy || n.direction != CopyKind::HtoD || n.waits.empty()) continue;
      if (trace.memcpys[n.record].bytes < kReloadMinBytes) continue;
      waited[n.lane].push_back(static_cast<std::uint32_t>(i));
    }
    for (auto& [lane, v] : waited) {
      std::sort(v.begin(), v.end(),
                [&](std::uint32_t a, std::uint32_t b) { return g.nodes[a].rec_start < g.nodes[b].rec_start; });
      std::vector<std::vector<std::uint32_t>> before(v.size());
      for (std::size_t k = 0; k < v.size(); ++k) before[k] = g.nodes[v[k]].waits;
      for (std::size_t k = 1; k < v.size(); ++k) {
        g.nodes[v[k]].waits = before[k >= d ? k - d : 0];
        ++r.selected;
      }
    }
    if (r.selected == 0)
      r.nothing_selected = fmt::format(
          "--what-if {}: no host-to-device copy of at least 1 MiB waits (through an event) "
          "for another stream more than once; the trace has {} copies",
          edit.text, trace.memcpys.size());
    return r;
  }

  if (edit.kind == WhatIfEdit::Kind::PinMemory) return apply_pin_memory_edit(trace, g, edit, predict_options.profile);

  // Packing, MoE and the registered fixes' edits: predict --trace's detection.
  model::PredictionReport scratch;
  const model::detail::TraceFacts facts(trace, predict_options, scratch);
  if (edit.kind == WhatIfEdit::Kind::Registered) {
    fixes::ReplayEditContext ctx(trace, g, facts, edit, r);
    fixes::fix_spec(edit.fix).replay_edit(ctx);
    if (r.selected == 0 && r.nothing_selected.empty())
      r.nothing_selected = fmt::format("--what-if {}: the edit changed nothing; {}", edit.text, holdings(g, true));
    return r;
  }
  const auto by_start = syncs_by_start(g);
  if (edit.kind == WhatIfEdit::Kind::PackingCache || edit.kind == WhatIfEdit::Kind::PackingDevice) {
    // packing-device: every rebuild goes, the first of a step too (the device variant builds
    // the mask with one kernel from lengths the host knows: that kernel is not in the trace
    // and is not charged, a note says so).
    const bool all = edit.kind == WhatIfEdit::Kind::PackingDevice;
    if (all) r.notes.push_back("the device variant's one mask kernel per batch is not in the trace: not charged");
    std::set<int> seen_step;
    std::set<std::uint32_t> gone;
    for (std::size_t i = 0; i < facts.layers.size(); ++i) {
      const auto& ls = facts.ls[i];
      if (ls.packing.empty() && ls.rebuilds.empty()) continue;
      const int step = facts.iteration_of(facts.layers[i].start);
      if (seen_step.insert(step).second && !all) continue;  // the first rebuild of a step fills the cache
      if (!ls.rebuilds.empty()) {
        for (const auto& w : ls.rebuilds) {
          remove_host_window(g, thread_of(g, w.pid, w.tid), w.start, w.end, gone);
          for (const ReplaySync& s : g.syncs)
            if (w.start <= s.rec_start && s.rec_start < w.end && s.tid == w.tid) remove_sync(g, s);
          ++r.selected;
        }
      } else {
        for (const SyncPoint* sp : ls.packing)
          if (auto k = find_sync(g, by_start, *sp)) {
            remove_sync(g, g.syncs[*k]);
            ++r.selected;
          }
      }
    }
    remove_launched(g, gone);
    if (r.selected == 0)
      r.nothing_selected = fmt::format("--what-if {}: no per-layer metadata rebuild{} ({} layer range(s){}); {}",
                                       edit.text, all ? "" : " after the first in a step", facts.layers.size(),
                                       facts.layer_glob.empty() ? "" : fmt::format(" matching '{}'", facts.layer_glob),
                                       holdings(g, true));
    return r;
  }
  return apply_moe_edit(trace, g, edit, facts);
}

}  // namespace syncscope::replay

namespace syncscope::fixes {

ReplayEditContext::ReplayEditContext(const Trace& t, replay::ReplayGraph& g, const model::detail::TraceFacts& f,
                                     const replay::WhatIfEdit& e, replay::EditResult& r)
    : trace(t), graph(g), facts(f), edit(e), result(r), by_start_(replay::replay_detail::syncs_by_start(g)) {}

bool ReplayEditContext::remove_sync(const SyncPoint& sp) {
  const auto k = replay::replay_detail::find_sync(graph, by_start_, sp);
  if (!k) return false;
  replay::replay_detail::remove_sync(graph, graph.syncs[*k]);
  ++result.selected;
  return true;
}

}  // namespace syncscope::fixes
