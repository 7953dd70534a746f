// Private helpers the what-if edits share (edits.cpp: the engine's own and ReplayEditContext; edit_copies.cpp).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/replay/replay.hpp"

namespace syncscope::replay::replay_detail {

// The sync's wait and the device-to-host copies that only serve it go; the op around it
// keeps its own time (the gaps).
void remove_sync(ReplayGraph& g, const ReplaySync& s);
std::int32_t thread_of(const ReplayGraph& g, std::int64_t pid, std::int64_t tid);
// The outermost CPU-op range on the sync's thread named like its cause and holding its start.
const Range* enclosing_op(const Trace& trace, const ReplaySync& s);
// Removes the host time a thread spent in [a, b): the calls inside it (collected in `gone`),
// and the parts of calls and gaps that overlap it; remove_launched then removes the GPU work
// the gone calls launched.
void remove_host_window(ReplayGraph& g, std::int32_t thread, Ns a, Ns b, std::set<std::uint32_t>& gone);
void remove_launched(ReplayGraph& g, const std::set<std::uint32_t>& gone);
// "the trace's sync points by cause: 24 x aten::item, ..." (by API when !by_cause).
std::string holdings(const ReplayGraph& g, bool by_cause);
// The ReplaySync of an analysis sync point (same thread, same start).
using SyncsByStart = std::unordered_map<Ns, std::vector<std::size_t>>;
SyncsByStart syncs_by_start(const ReplayGraph& g);
std::optional<std::size_t> find_sync(const ReplayGraph& g, const SyncsByStart& m, const SyncPoint& sp);

// pin-memory[:h2d|:d2h] (edit_copies.cpp): the rates from the trace's own pinned copies, else
// `profile`; throws InputError naming --gpu-profile when neither has one.
EditResult apply_pin_memory_edit(const Trace& trace, ReplayGraph& g, const WhatIfEdit& edit,
                                 const std::optional<model::GpuProfile>& profile);

}  // namespace syncscope::replay::replay_detail
