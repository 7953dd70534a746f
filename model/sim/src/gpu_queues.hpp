// The simulator's GPU side (simulator.cpp issues the host side): work items queued per
// stream in issue order, one copy engine per direction, kernels running concurrently and
// sharing device-memory bandwidth, kernels slowed beside host copies by the profile's
// copy/compute slowdown. Private to syncscope_sim.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "syncscope/core/error.hpp"
#include "syncscope/model/gpu_profile.hpp"

namespace syncscope::sim::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Work below this many ns counts as finished: guards against floating-point residue when
// a rate changes mid-item.
constexpr double kEps = 1e-6;

enum class Engine : std::uint8_t { Compute, H2D, D2H };
enum class ItemKind : std::uint8_t { Kernel, Copy, Memset, Marker };

struct Item {
  ItemKind kind = ItemKind::Marker;
  Engine engine = Engine::Compute;
  int stream = 0;
  std::size_t op = 0;  // index into the program's ops
  std::uint64_t correlation = 0;
  double ready = 0;               // earliest start (host call + launch latency)
  double work = 0;                // ns of work at full rate
  double demand = 0;              // device-memory bytes per ns it moves at full rate
  std::vector<std::size_t> deps;  // items that must finish first (other streams)
  bool is_copy_like = false;      // occupies memory bandwidth as a copy (H2D/D2H)
  bool started = false;
  bool done = false;
  double remaining = 0;
  double start = 0;
  double end = 0;
  int record_event = -1;  // EventRecord marker: the event it records
};

// The GPU side: streams of items, two copy engines, concurrent kernels.
class Gpu {
 public:
  Gpu(const model::GpuProfile& profile, std::size_t streams) : profile_(profile), queues_(streams) {}

  std::size_t submit(Item item) {
    item.remaining = item.work;
    const std::size_t idx = items_.size();
    queues_[static_cast<std::size_t>(item.stream)].items.push_back(idx);
    items_.push_back(std::move(item));
    return idx;
  }

  const Item& item(std::size_t i) const { return items_[i]; }
  const std::vector<Item>& items() const { return items_; }
  double now() const { return now_; }

  // The last item queued on a stream, if it has not finished.
  std::optional<std::size_t> tail(int stream) const {
    const auto& q = queues_[static_cast<std::size_t>(stream)];
    if (q.items.empty()) return std::nullopt;
    return q.items.back();
  }

  bool drained(int stream) const {
    const auto& q = queues_[static_cast<std::size_t>(stream)];
    return q.head == q.items.size();
  }
  bool all_drained() const {
    for (std::size_t s = 0; s < queues_.size(); ++s)
      if (!drained(static_cast<int>(s))) return false;
    return true;
  }

  // Simulates up to time t (everything that starts or ends at or before t happens).
  void advance_to(double t) {
    while (true) {
      start_ready();
      const double next = next_event();
      if (next > t) {
        progress(t - now_);
        now_ = std::max(now_, t);
        start_ready();
        return;
      }
      step(next);
    }
  }

  // Simulates until `done()` holds; returns the time it first holds.
  double run_until(const std::function<bool()>& done) {
    start_ready();
    while (!done()) {
      const double next = next_event();
      if (next == kInf)
        throw Error(
            "simulator: the program waits for GPU work that can never run (a stream waits on an event "
            "recorded after the wait, or a cycle of waits)");
      step(next);
      start_ready();
    }
    return now_;
  }

 private:
  struct Queue {
    std::vector<std::size_t> items;
    std::size_t head = 0;  // first unfinished item
  };

  bool copies_running() const {
    for (auto i : active_)
      if (items_[i].is_copy_like) return true;
    return false;
  }
  bool kernels_running() const {
    for (auto i : active_)
      if (!items_[i].is_copy_like) return true;
    return false;
  }

  // Device-memory bandwidth share: when the active items together want more than the
  // DRAM delivers, each progresses at dram / demand of its full rate.
  double dram_share() const {
    const double dram = profile_.dram_bytes_per_s / 1e9;  // bytes per ns
    if (!(dram > 0)) return 1.0;
    double demand = 0;
    for (auto i : active_) demand += items_[i].demand;
    return demand > dram ? dram / demand : 1.0;
  }

  // Fraction of full speed an active item progresses at, given what else runs.
  double rate(const Item& it, bool copies, bool kernels) const {
    const double share = dram_share();
    const double slow = 1.0 + std::max(0.0, profile_.copy_compute_slowdown);
    if (!it.is_copy_like) return share * (copies ? 1.0 / slow : 1.0);
    // Unified memory: a copy is memory traffic on the same DRAM the kernels use.
    return share * ((profile_.unified_memory && kernels) ? 1.0 / slow : 1.0);
  }

  bool deps_done(const Item& it) const {
    for (auto d : it.deps)
      if (!items_[d].done) return false;
    return true;
  }

  void finish(std::size_t idx) {
    Item& it = items_[idx];
    it.done = true;
    it.end = now_;
    auto& q = queues_[static_cast<std::size_t>(it.stream)];
    // Items finish in stream order: the head is this item.
    ++q.head;
    if (it.engine != Engine::Compute) engine_busy_[static_cast<int>(it.engine)] = false;
  }

  // Starts every head item that can start now; markers finish at once, which may let more
  // start, so repeat until nothing changes.
  void start_ready() {
    bool changed = true;
    while (changed) {
      changed = false;
      std::optional<std::size_t> engine_pick[3];
      for (auto& q : queues_) {
        if (q.head == q.items.size()) continue;
        const std::size_t idx = q.items[q.head];
        Item& it = items_[idx];
        if (it.started || it.ready > now_ + kEps || !deps_done(it)) continue;
        if (it.engine != Engine::Compute) {
          auto& pick = engine_pick[static_cast<int>(it.engine)];
          if (!engine_busy_[static_cast<int>(it.engine)] && (!pick || items_[*pick].correlation > it.correlation))
            pick = idx;  // one copy per engine, in host issue order
          continue;
        }
        begin(idx);
        changed = true;
      }
      for (auto& pick : engine_pick) {
        if (!pick) continue;
        engine_busy_[static_cast<int>(items_[*pick].engine)] = true;
        begin(*pick);
        changed = true;
      }
    }
  }

  void begin(std::size_t idx) {
    Item& it = items_[idx];
    it.started = true;
    it.start = now_;
    if (it.remaining <= kEps) {
      finish(idx);
      return;
    }
    active_.push_back(idx);
  }

  double next_event() const {
    double next = kInf;
    const bool copies = copies_running(), kernels = kernels_running();
    for (auto i : active_) next = std::min(next, now_ + items_[i].remaining / rate(items_[i], copies, kernels));
    for (const auto& q : queues_) {
      if (q.head == q.items.size()) continue;
      const Item& it = items_[q.items[q.head]];
      if (!it.started && it.ready > now_ + kEps && deps_done(it)) next = std::min(next, it.ready);
    }
    return next;
  }

  void progress(double dt) {
    if (dt <= 0) return;
    const bool copies = copies_running(), kernels = kernels_running();
    for (auto i : active_) items_[i].remaining -= dt * rate(items_[i], copies, kernels);
  }

  void step(double next) {
    const bool copies = copies_running(), kernels = kernels_running();
    std::vector<std::size_t> finishing;
    for (auto i : active_) {
      const double done_at = now_ + items_[i].remaining / rate(items_[i], copies, kernels);
      if (done_at <= next + kEps) finishing.push_back(i);
    }
    progress(next - now_);
    now_ = std::max(now_, next);
    for (auto i : finishing) {
      items_[i].remaining = 0;
      active_.erase(std::find(active_.begin(), active_.end(), i));
      finish(i);
    }
  }

  const model::GpuProfile& profile_;
  std::vector<Queue> queues_;
  std::vector<Item> items_;
  std::vector<std::size_t> active_;
  bool engine_busy_[3] = {false, false, false};
  double now_ = 0;
};

}  // namespace syncscope::sim::detail
