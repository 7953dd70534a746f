// The environment `syncscope trace` sets for the traced program and the injection library
// reads (profiler/tracer/src/inject_control.cpp): one list of names, so the writer and the
// reader cannot drift apart. Meanings: profiler/tracer/src/inject.cpp's header.
#pragma once

namespace syncscope::trace_env {

inline constexpr const char* kOutput = "SYNCSCOPE_TRACE_OUTPUT";
inline constexpr const char* kActivities = "SYNCSCOPE_TRACE_ACTIVITIES";
inline constexpr const char* kBufferCapMb = "SYNCSCOPE_TRACE_BUFFER_CAP_MB";
inline constexpr const char* kStartRange = "SYNCSCOPE_TRACE_START_RANGE";
inline constexpr const char* kStopAfterSteps = "SYNCSCOPE_TRACE_STOP_AFTER_STEPS";
inline constexpr const char* kStepRange = "SYNCSCOPE_TRACE_STEP_RANGE";
inline constexpr const char* kOverwrite = "SYNCSCOPE_TRACE_OVERWRITE";
inline constexpr const char* kRootPid = "SYNCSCOPE_TRACE_ROOT_PID";
inline constexpr const char* kQuiet = "SYNCSCOPE_TRACE_QUIET";

}  // namespace syncscope::trace_env
