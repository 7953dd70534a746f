// The analytical model every fix's closed form builds on: the host/GPU segments syncs cut a
// step into, what removing a sync saves, and the step-level speedup. Pure functions of plain
// numbers (ns, counts, fractions). Each fix's own forms are in its folder
// (fixes/<name>/include/syncscope/fixes/<name>/closed_form.hpp); docs/model-analytic.md
// derives every form and says when it holds.
//
// Notation: r the host-observed sync round trip, H/D host/GPU time of a segment, P the part
// of the host work that must happen before the GPU can start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "syncscope/model/interval.hpp"

namespace syncscope::model {

// ---- segments: the host/GPU view of sync removal ---------------------------------------
// Syncs cut a step into segments. A segment that ends in a sync costs
//   P + max(H - P, D) + r
// where H is its host time, D its GPU time and P <= H the part of the host work that must
// happen before the GPU can start (the work right after the previous sync, e.g. building
// metadata the next kernels read). A run of segments with no sync between them pipelines:
// the host queues ahead, so it costs max(sum H, sum D) + r.
struct Segment {
  double host_ns = 0;         // H
  double gpu_ns = 0;          // D
  double serial_host_ns = 0;  // P (0 <= P <= H)
};

enum class Regime { Unknown, HostBound, GpuBound, Balanced };
const char* regime_name(Regime r);  // "unknown", "host-bound", "gpu-bound", "balanced"

// A run is host-bound when its host time exceeds its GPU time by more than this factor,
// GPU-bound when the GPU time exceeds the host time by more than it, balanced otherwise.
// A convention (README), not a measured constant.
inline constexpr double kRegimeBand = 1.25;
Regime classify_regime(double host_ns, double gpu_ns);

double synced_time_ns(const std::vector<Segment>& segments, double round_trip_ns);
double pipelined_time_ns(const std::vector<Segment>& segments, double round_trip_ns);
// Saving from removing one sync between identical segments (the limit of many):
//   r + clamp(D - H + P, 0, P)
// = r + min(H, D) when all host work is serial (P = H): largest when the two sides are
// balanced, only the round trip when one side dominates.
double sync_removal_saving_ns(const Segment& segment, double round_trip_ns);

// The segment a sync closes, as a trace shows it: `blocked` (the host's wait, round trip
// included) and `bubble` (the GPU idle after it: round trip, the host work before the next
// launch, the launch latency). In the segment model the wait is r + max(0, D - H + P) and
// the bubble r + P, so P = bubble - r and D - H + P = blocked - r; the returned segment has
// H = P, D = blocked - r (any H >= P with the same D - H gives the same saving).
// sync_removal_saving_ns of it is r + clamp(blocked - r, 0, bubble - r) = min(blocked,
// bubble) when both exceed r: the host's wait when the host binds, the GPU's idle when the
// GPU binds.
Segment segment_of_sync(double blocked_ns, double bubble_ns, double round_trip_ns);

// ---- step level ------------------------------------------------------------------------
// T_base / (T_base - T_saved). Throws InputError when the saving is not smaller than the
// step time (the inputs contradict each other).
double speedup(double step_ns, double saved_ns);

}  // namespace syncscope::model
