// A trace moved onto the whole-microsecond grid (trace_io.hpp, on_microsecond_grid), for
// readers that round fractional-microsecond times away: Holistic Trace Analysis (HTA) reads
// "ts" and "dur" as microseconds and, when its "ts" column is float64 (any "ts" with a
// fraction), keeps each event as [ceil(ts), floor(ts + dur)) in whole microseconds
// (hta/common/trace_parser.py, round_down_time_stamps), unless HTA_DISABLE_NS_ROUNDING=1
// (hta/configs/env_options.py). An activity shorter than 2 us at a fractional time loses up
// to all of its time that way. With every time a whole microsecond from the writer's base
// the column stays int64 and HTA reads the times as written.
//
// Times are rounded to the nearest microsecond (halves up) from the writer's base. The
// rounding is monotone, so the order of starts and ends, nesting and stream order are kept
// (ties can appear; an activity shorter than 1 us can become 0 us long); durations move by
// at most 1 us each. These are no longer the recorded (or simulated) times, and the file
// says so in its "syncscope_time_grid" provenance entry.
#include <algorithm>

#include "chrome_writer_impl.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {

namespace {

// The nearest whole microsecond from `origin` (t >= origin: the writer's base is at or
// before every record).
Ns on_grid(Ns t, Ns origin) {
  const Ns d = t - origin;
  return origin + (d + 500) / 1000 * 1000;
}

}  // namespace

Trace on_microsecond_grid(const Trace& trace) {
  Trace t = trace;
  const Ns o = io_detail::writer_base_time(trace);
  auto interval = [&](Ns& start, Ns& end) {
    start = on_grid(start, o);
    end = std::max(start, on_grid(end, o));
  };
  for (auto& r : t.api_calls) interval(r.start, r.end);
  for (auto& r : t.kernels) interval(r.start, r.end);
  for (auto& r : t.memcpys) interval(r.start, r.end);
  for (auto& r : t.memsets) interval(r.start, r.end);
  for (auto& r : t.syncs) interval(r.start, r.end);
  for (auto& r : t.ranges) interval(r.start, r.end);
  for (auto& r : t.overheads) interval(r.start, r.end);
  for (auto& r : t.cuda_events) r.timestamp = on_grid(r.timestamp, o);
  for (auto& r : t.memory) r.timestamp = on_grid(r.timestamp, o);
  for (auto& r : t.others) {
    Ns end = r.start + r.duration;
    interval(r.start, end);
    r.duration = end - r.start;
  }
  t.meta.extra[std::string(kTimeGridKey)] =
      "1 us: every time rounded to the nearest whole microsecond from baseTimeNanoseconds so that Holistic Trace "
      "Analysis reads it unrounded; not the recorded times (durations moved by up to 1 us each)";
  return t;
}

}  // namespace syncscope
