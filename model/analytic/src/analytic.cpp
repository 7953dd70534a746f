#include "syncscope/model/analytic.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "syncscope/core/error.hpp"

namespace syncscope::model {

const char* regime_name(Regime r) {
  switch (r) {
    case Regime::HostBound: return "host-bound";
    case Regime::GpuBound: return "gpu-bound";
    case Regime::Balanced: return "balanced";
    case Regime::Unknown: break;
  }
  return "unknown";
}

Regime classify_regime(double host_ns, double gpu_ns) {
  if (host_ns <= 0 && gpu_ns <= 0) return Regime::Unknown;
  if (host_ns > kRegimeBand * gpu_ns) return Regime::HostBound;
  if (gpu_ns > kRegimeBand * host_ns) return Regime::GpuBound;
  return Regime::Balanced;
}

double synced_time_ns(const std::vector<Segment>& segments, double round_trip_ns) {
  double t = 0;
  for (const auto& s : segments) {
    double p = std::clamp(s.serial_host_ns, 0.0, s.host_ns);
    t += p + std::max(s.host_ns - p, s.gpu_ns) + round_trip_ns;
  }
  return t;
}

double pipelined_time_ns(const std::vector<Segment>& segments, double round_trip_ns) {
  if (segments.empty()) return 0;
  double h = 0, d = 0;
  for (const auto& s : segments) {
    h += s.host_ns;
    d += s.gpu_ns;
  }
  return std::max(h, d) + round_trip_ns;
}

double sync_removal_saving_ns(const Segment& s, double round_trip_ns) {
  double p = std::clamp(s.serial_host_ns, 0.0, s.host_ns);
  return round_trip_ns + std::clamp(s.gpu_ns - s.host_ns + p, 0.0, p);
}

Segment segment_of_sync(double blocked_ns, double bubble_ns, double round_trip_ns) {
  Segment s;
  s.serial_host_ns = std::max(0.0, bubble_ns - round_trip_ns);
  s.host_ns = s.serial_host_ns;
  s.gpu_ns = std::max(0.0, blocked_ns - round_trip_ns);
  return s;
}

double speedup(double step_ns, double saved_ns) {
  SYNCSCOPE_INPUT_ERROR_IF(!(step_ns > 0), fmt::format("step time must be > 0 (got {} ns)", step_ns));
  SYNCSCOPE_INPUT_ERROR_IF(!(saved_ns < step_ns),
                           fmt::format("predicted saving {:.3f} ms is not smaller than the step time {:.3f} ms: "
                                       "check --step-ms and the per-layer inputs",
                                       saved_ns / 1e6, step_ns / 1e6));
  return step_ns / (step_ns - saved_ns);
}

}  // namespace syncscope::model
