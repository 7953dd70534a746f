// The offload variants' copy/event choreography for a plan (plan.hpp): what each variant
// waits for before a reload, as a list of the layer loop's primitive steps
// (syncscope/program/layer_schedule.hpp) that the step program and the LibTorch step both run.
#include <algorithm>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/offload/plan.hpp"

namespace syncscope::fixes::offload {

using program::Choreography;
using program::ChoreoKind;

namespace {

class Builder {
 public:
  explicit Builder(const OffloadPlan& plan) : variant_(plan.variant) {
    c_.plan = plan;
    auto& ev = c_.events;
    int next = 0;
    ev.produced = next++;
    if (plan.variant == Variant::Single) ev.main_all = next++;
    for (int l = 0; l < plan.offloaded(); ++l) ev.offloaded.push_back(next++);
    for (int b = 0; b < plan.ring_buffers; ++b) ev.loaded.push_back(next++);
    for (int b = 0; b < plan.ring_buffers; ++b) ev.freed.push_back(next++);
    ev.num_events = next;
  }

  void add(ChoreoKind kind, int layer = -1, int buffer = -1, int event = -1) {
    c_.steps.push_back(program::ChoreoStep{kind, layer, buffer, event});
  }

  // Offloaded layers are reloaded in backward order: index j is layer offloaded()-1-j.
  int layer_of(int j) const { return c_.plan.offloaded() - 1 - j; }
  int buffer_of(int j) const { return j % c_.plan.ring_buffers; }

  void reload(int j) {
    const int b = buffer_of(j);
    if (variant_ == Variant::Single) {
      add(ChoreoKind::RecordMain, -1, -1, c_.events.main_all);  // everything queued on main so far
      add(ChoreoKind::CopyWaits, -1, -1, c_.events.main_all);
    } else if (j >= c_.plan.ring_buffers) {
      add(ChoreoKind::CopyWaits, layer_of(j - c_.plan.ring_buffers), b, c_.events.freed[b]);
    }
    add(ChoreoKind::ReloadCopy, layer_of(j), b);
    add(ChoreoKind::RecordCopy, layer_of(j), b, c_.events.loaded[b]);
  }

  Choreography build() {
    const program::LayerPlan& p = c_.plan;
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
    if (variant_ == Variant::Prefetch)
      for (int j = 0; j < std::min(p.depth, n); ++j) reload(j);  // hidden behind the LM head
    add(ChoreoKind::Head);
    for (int l = p.layers - 1; l >= 0; --l) {
      if (!p.is_offloaded(l)) {
        add(ChoreoKind::BackwardLayer, l);
        continue;
      }
      const int j = n - 1 - l;
      if (variant_ == Variant::Prefetch) {
        if (j + p.depth < n && j + p.depth >= std::min(p.depth, n)) reload(j + p.depth);
      } else {
        reload(j);
      }
      const int b = buffer_of(j);
      add(ChoreoKind::MainWaits, l, b, ev.loaded[b]);
      add(ChoreoKind::BackwardLayer, l, b);
      if (variant_ != Variant::Single) add(ChoreoKind::RecordMain, l, b, ev.freed[b]);
    }
    return c_;
  }

 private:
  Variant variant_;
  Choreography c_;
};

}  // namespace

Choreography build_choreography(const OffloadPlan& plan) {
  SYNCSCOPE_THROW_IF(plan.layers <= 0, "build_choreography: plan without layers");
  SYNCSCOPE_THROW_IF(plan.offloaded() > 0 && plan.ring_buffers <= 0,
                     "build_choreography: offloading without ring buffers");
  return Builder(plan).build();
}

}  // namespace syncscope::fixes::offload
