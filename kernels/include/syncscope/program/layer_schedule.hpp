// The step's layer loop as a list of primitive steps (a choreography): each layer's forward,
// the head, each layer's backward, and, where a fix stages layer inputs through host memory
// (the offload fix: fixes/offload/plan.hpp builds its choreography from its memory-aware
// plan), the copies and events around them. The step-program builder turns the steps into
// Program ops and the LibTorch reference step executes the very same list with CUDA streams
// and events (or plain copies on CPU), so the schedule the checker proves safe is the
// schedule that runs. Torch-free and CUDA-free; names no fix.
#pragma once

#include <string>
#include <vector>

namespace syncscope::program {

// Which layers keep their input on the device and how many reload buffers the rest share.
struct LayerPlan {
  int layers = 0;          // L
  int first_resident = 0;  // layers [first_resident, L) keep their input on the device
  int ring_buffers = 0;    // device reload buffers (0 when nothing is offloaded)
  int depth = 0;           // explicit look-ahead (prefetch only; 0 otherwise)
  int offloaded() const { return first_resident; }
  bool is_offloaded(int layer) const { return layer < first_resident; }
};

enum class ChoreoKind {
  RecordMain,     // record `event` on the main stream
  RecordCopy,     // record `event` on the copy stream
  CopyWaits,      // the copy stream waits for `event`
  MainWaits,      // the main stream waits for `event`
  OffloadCopy,    // copy stream: D2H layer `layer`'s input -> pinned host slot `layer`
  ReloadCopy,     // copy stream: H2D pinned host slot `layer` -> device ring buffer `buffer`
  ForwardLayer,   // main stream: layer `layer` forward (no grad when offloading)
  BackwardLayer,  // main stream: layer `layer` backward; with offload: recompute from ring
                  // buffer `buffer` (or the resident input when buffer < 0), then backward
  ReleaseInput,   // host: layer `layer`'s device input goes back to the caching allocator
                  // of the main stream (later main-stream work may overwrite it)
  Head,           // main stream: final norm, LM head, loss and their backward
};

struct ChoreoStep {
  ChoreoKind kind;
  int layer = -1;
  int buffer = -1;
  int event = -1;
};

// Event ids used by a choreography (indices from 0 to num_events-1).
struct ChoreoEvents {
  int produced = -1;           // main: a layer's input is ready to be offloaded
  int main_all = -1;           // single: everything queued on main so far
  std::vector<int> offloaded;  // per layer: its D2H copy finished
  std::vector<int> loaded;     // per ring buffer: its reload finished
  std::vector<int> freed;      // per ring buffer: its last reader finished
  int num_events = 0;
};

struct Choreography {
  LayerPlan plan;
  ChoreoEvents events;
  std::vector<ChoreoStep> steps;  // the whole step in host issue order
};

// The step's layer loop without staging: plain autograd without checkpointing, ForwardLayer
// 0..L-1, Head, BackwardLayer L-1..0 (a fix that schedules layers builds its own: FixSpec::
// build_program_schedule).
Choreography build_plain_choreography(int layers);

}  // namespace syncscope::program
