// What-if edits of a replay graph (replay.hpp): each changes only what the fix changes in
// the program, and the replay computes the rest.
// - remove-syncs:SELECTOR=GLOB: the selected sync points' waits and the device-to-host copies
//   that only serve them go; the host's own time (the op around the sync, the copy's launch
//   call) stays, so the saving is what the wait cost on the critical path, no more.
// - pin-memory[:h2d|:d2h] (edit_copies.cpp): every copy with a pageable host side becomes pinned:
//   its device time bytes / the pinned rate (the trace's own pinned copies, else --gpu-profile),
//   its async call a launch call's cost, no longer staging nor waiting.
// - each fix's own (FixSpec::what_if_edits: packing-cache, double-buffer, moe-sorted,
//   logging-every[:N], ...): its replay_edit hook, in its folder (fixes/<name>/src/replay_edit.cpp),
//   through ReplayEditContext (syncscope/replay/replay_edit.hpp), defined here.
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
#include "syncscope/model/trace_predict_facts.hpp"
#include "syncscope/replay/replay.hpp"
#include "syncscope/replay/replay_edit.hpp"

namespace syncscope::replay {
namespace replay_detail {

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
  std::string forms = "remove-syncs:cause=GLOB, remove-syncs:api=GLOB, remove-syncs:range=GLOB, remove-syncs:all";
  for (const std::string& w : registered_what_if_edits()) {
    const auto reg = registered_edit(w);
    forms += ", " + (reg && !reg->second->argument.empty() ? w + "[:" + reg->second->argument + "]" : w);
  }
  return forms + " or pin-memory[:h2d|:d2h]";
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
    if (!e.argument.empty() && reg->second->check_argument) reg->second->check_argument(text, e.argument);
    return e;
  }
  if (text == "pin-memory" || text == "pin-memory:h2d" || text == "pin-memory:d2h") {
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

  if (edit.kind == WhatIfEdit::Kind::PinMemory) return apply_pin_memory_edit(trace, g, edit, predict_options.profile);

  // A fix's edit, in its folder.
  fixes::ReplayEditContext ctx(trace, g, predict_options, edit, r);
  fixes::fix_spec(edit.fix).replay_edit(ctx);
  if (r.selected == 0 && r.nothing_selected.empty())
    r.nothing_selected = fmt::format("--what-if {}: the edit changed nothing; {}", edit.text, holdings(g, true));
  return r;
}

}  // namespace syncscope::replay

namespace syncscope::fixes {

ReplayEditContext::ReplayEditContext(const Trace& t, replay::ReplayGraph& g, const model::TracePredictOptions& o,
                                     const replay::WhatIfEdit& e, replay::EditResult& r)
    : trace(t), graph(g), options(o), edit(e), result(r) {}

ReplayEditContext::~ReplayEditContext() = default;

const model::detail::TraceFacts& ReplayEditContext::facts() {
  if (!facts_) {
    scratch_ = std::make_unique<model::PredictionReport>();
    facts_ = std::make_unique<model::detail::TraceFacts>(trace, options, *scratch_);
  }
  return *facts_;
}

bool ReplayEditContext::remove_sync(const SyncPoint& sp) {
  const auto k = graph_sync(sp);
  if (!k) return false;
  replay::replay_detail::remove_sync(graph, graph.syncs[*k]);
  ++result.selected;
  return true;
}

std::optional<std::size_t> ReplayEditContext::graph_sync(const SyncPoint& sp) const {
  // Built on first use: offload's edits never look a sync up.
  if (!by_start_) by_start_ = replay::replay_detail::syncs_by_start(graph);
  return replay::replay_detail::find_sync(graph, *by_start_, sp);
}

void ReplayEditContext::remove_graph_sync(const replay::ReplaySync& s) { replay::replay_detail::remove_sync(graph, s); }

void ReplayEditContext::remove_host_window(std::int64_t pid, std::int64_t tid, Ns start, Ns end,
                                           std::set<std::uint32_t>& gone) {
  replay::replay_detail::remove_host_window(graph, thread_of(pid, tid), start, end, gone);
  for (const replay::ReplaySync& s : graph.syncs)
    if (start <= s.rec_start && s.rec_start < end && s.tid == tid) replay::replay_detail::remove_sync(graph, s);
}

void ReplayEditContext::remove_launched(const std::set<std::uint32_t>& gone) {
  replay::replay_detail::remove_launched(graph, gone);
}

std::int32_t ReplayEditContext::thread_of(std::int64_t pid, std::int64_t tid) const {
  return replay::replay_detail::thread_of(graph, pid, tid);
}

const Range* ReplayEditContext::enclosing_op(const replay::ReplaySync& s) const {
  return replay::replay_detail::enclosing_op(trace, s);
}

std::string ReplayEditContext::holdings(bool by_cause) const {
  return replay::replay_detail::holdings(graph, by_cause);
}

}  // namespace syncscope::fixes
