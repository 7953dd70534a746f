#include "syncscope/program/offload_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "syncscope/core/error.hpp"

namespace syncscope::program {

namespace {

class Builder {
 public:
  explicit Builder(const OffloadPlan& plan) {
    c_.plan = plan;
    auto& ev = c_.events;
    int next = 0;
    ev.produced = next++;
    if (plan.variant == fixes::OffloadVariant::Single) ev.main_all = next++;
    for (int l = 0; l < plan.offloaded(); ++l) ev.offloaded.push_back(next++);
    for (int b = 0; b < plan.ring_buffers; ++b) ev.loaded.push_back(next++);
    for (int b = 0; b < plan.ring_buffers; ++b) ev.freed.push_back(next++);
    ev.num_events = next;
  }

  void add(ChoreoKind kind, int layer = -1, int buffer = -1, int event = -1) {
    c_.steps.push_back(ChoreoStep{kind, layer, buffer, event});
  }

  // Offloaded layers are reloaded in backward order: index j is layer offloaded()-1-j.
  int layer_of(int j) const { return c_.plan.offloaded() - 1 - j; }
  int buffer_of(int j) const { return j % c_.plan.ring_buffers; }

  void reload(int j) {
    const int b = buffer_of(j);
    if (c_.plan.variant == fixes::OffloadVariant::Single) {
      add(ChoreoKind::RecordMain, -1, -1, c_.events.main_all);  // everything queued on main so far
      add(ChoreoKind::CopyWaits, -1, -1, c_.events.main_all);
    } else if (j >= c_.plan.ring_buffers) {
      add(ChoreoKind::CopyWaits, layer_of(j - c_.plan.ring_buffers), b, c_.events.freed[b]);
    }
    add(ChoreoKind::ReloadCopy, layer_of(j), b);
    add(ChoreoKind::RecordCopy, layer_of(j), b, c_.events.loaded[b]);
  }

  Choreography build() {
    const OffloadPlan& p = c_.plan;
    const auto& ev = c_.events;
    for (int l = 0; l < p.layers; ++l) {
      if (p.is_offloaded(l)) {
        add(ChoreoKind::RecordMain, l, -1, ev.produced);
        add(ChoreoKind::CopyWaits, l, -1, ev.produced);
        add(ChoreoKind::OffloadCopy, l);
        add(ChoreoKind::RecordCopy, l, -1, ev.offloaded[l]);
      }
      add(ChoreoKind::ForwardLayer, l);
      if (p.is_offloaded(l)) {
        // The input may go back to the allocator only once its D2H copy is done.
        add(ChoreoKind::MainWaits, l, -1, ev.offloaded[l]);
        add(ChoreoKind::ReleaseInput, l);
      }
    }
    const int n = p.offloaded();
    if (p.variant == fixes::OffloadVariant::Prefetch)
      for (int j = 0; j < std::min(p.depth, n); ++j) reload(j);  // hidden behind the LM head
    add(ChoreoKind::Head);
    for (int l = p.layers - 1; l >= 0; --l) {
      if (!p.is_offloaded(l)) {
        add(ChoreoKind::BackwardLayer, l);
        continue;
      }
      const int j = n - 1 - l;
      if (p.variant == fixes::OffloadVariant::Prefetch) {
        if (j + p.depth < n && j + p.depth >= std::min(p.depth, n)) reload(j + p.depth);
      } else {
        reload(j);
      }
      const int b = buffer_of(j);
      add(ChoreoKind::MainWaits, l, b, ev.loaded[b]);
      add(ChoreoKind::BackwardLayer, l, b);
      if (p.variant != fixes::OffloadVariant::Single) add(ChoreoKind::RecordMain, l, b, ev.freed[b]);
    }
    return c_;
  }

 private:
  Choreography c_;
};

}  // namespace

Choreography build_choreography(const OffloadPlan& plan) {
  SYNCSCOPE_THROW_IF(plan.layers <= 0, "build_choreography: plan without layers");
  SYNCSCOPE_THROW_IF(plan.offloaded() > 0 && plan.ring_buffers <= 0,
                     "build_choreography: offloading without ring buffers");
  return Builder(plan).build();
}

Choreography build_plain_choreography(int layers) {
  SYNCSCOPE_THROW_IF(layers <= 0, "build_plain_choreography: layers must be positive");
  Choreography c;
  c.plan.layers = layers;
  c.plan.first_resident = 0;
  for (int l = 0; l < layers; ++l) c.steps.push_back({ChoreoKind::ForwardLayer, l});
  c.steps.push_back({ChoreoKind::Head});
  for (int l = layers - 1; l >= 0; --l) c.steps.push_back({ChoreoKind::BackwardLayer, l});
  return c;
}

}  // namespace syncscope::program
