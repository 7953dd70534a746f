// The injection library's logic (libsyncscope_inject.so, inject.cpp), apart from its C entry
// points and the decoding of CUPTI callback data: configuration, range-controlled start and
// stop, the stop path (stop recording, wait for the program's next synchronization, flush,
// decode, cuptiFinalize) and the trace written at exit. It talks to CUPTI only through a
// Session and a CuptiApi, so tests drive it on CPU with a fake (tests/cupti).
//
// Locks: mutex_ guards the notes, the start/end range table and the stop flag; it is taken
// by application threads inside CUPTI callbacks (API exit, NVTX), so it is only ever held
// for a few instructions, never across a CUPTI flush, a decode or a file write. close_mutex_
// orders the two closers (the stop worker and the exit handler) and is never taken by a
// callback.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cupti_api.hpp"
#include "cupti_session.hpp"
#include "syncscope/trace/trace.hpp"
#include "syncscope/tracer/activities.hpp"

namespace syncscope::cupti_detail {

struct InjectConfig {
  std::string output = "syncscope-trace.json.gz";
  std::uint32_t activities = kDefaultActivities;
  std::size_t cap_bytes = std::size_t{256} << 20;
  std::string start_range;
  long stop_after_steps = 0;
  std::string step_glob = "*step*";
  bool overwrite = false;
  bool quiet = false;
  long root_pid = 0;
};

enum class InjectPhase : int { Idle, WaitingForRange, Tracing, Stopping, Stopped, Failed };

class Injection {
 public:
  Injection(Session& session, CuptiApi& api);
  ~Injection();  // joins the stop worker
  Injection(const Injection&) = delete;
  Injection& operator=(const Injection&) = delete;

  // The configuration from SYNCSCOPE_TRACE_* (inject.cpp's header lists them); bad values
  // are logged once and replaced by the defaults.
  InjectConfig config_from_environment();

  // Opens the session, subscribes `callback` (resource domain; NVTX with range control) and
  // starts recording unless a start range is awaited. Never throws.
  void initialize(const InjectConfig& config, CUpti_CallbackFunc callback) noexcept;

  // From the CUPTI callback (inject.cpp decodes the callback data).
  void on_context_created(CUcontext context) noexcept;
  void on_context_destroy_starting() noexcept;
  void on_range_open(const char* name, bool push, std::uint64_t start_end_id) noexcept;
  void on_push_pop_close() noexcept;
  void on_start_end_close(std::uint64_t id) noexcept;
  // The exit of a runtime or driver API call; `is_sync` when it synchronized the host.
  void on_api_exit(bool is_sync) noexcept;

  // After the last step: stop recording now (on the calling application thread), then, on
  // a worker thread, wait for the program's next synchronization (so the last step's work
  // has finished and its records are complete; at most stop_wait), flush, decode, and ask
  // for cuptiFinalize, which the next API exit callback performs (cupti_activity.h: the
  // safe place), so the rest of the run is not slowed by an attached CUPTI.
  void stop_tracing() noexcept;

  // At process exit: closes the session if the stop path has not, and writes the trace
  // (with our notes in meta.extra). Once; never in a forked child; never throws.
  void write_trace_at_exit() noexcept;
  void mark_forked_child() noexcept { forked_child_.store(true); }

  // Logs a message to stderr and into the trace's notes, once per key; never throws.
  void log_once(const std::string& key, const std::string& message) noexcept;

  InjectPhase phase() const { return phase_.load(); }
  // OUTPUT for the root process; "<stem>-pid<N><suffixes>" for any other.
  static std::string output_path(const InjectConfig& config, long pid);
  std::chrono::milliseconds stop_wait{2000};

 private:
  void begin_tracing() noexcept;
  void on_range_close(bool step) noexcept;
  // Closes the session once and keeps its trace; holds close_mutex_ only.
  void close_session();

  Session& session_;
  CuptiApi& api_;
  InjectConfig config_;
  std::atomic<InjectPhase> phase_{InjectPhase::Idle};
  std::atomic<bool> written_{false};
  std::atomic<bool> forked_child_{false};
  std::atomic<bool> finalize_requested_{false};
  std::atomic<long> steps_done_{0};
  std::atomic<CUpti_SubscriberHandle> subscriber_{nullptr};

  std::mutex mutex_;  // notes_, logged_, open_start_end_ranges_, sync_seen_after_stop_: short sections only
  std::condition_variable stop_cv_;
  bool sync_seen_after_stop_ = false;
  std::vector<std::string> notes_;  // into meta.extra
  std::set<std::string> logged_;
  std::unordered_map<std::uint64_t, bool> open_start_end_ranges_;  // nvtxRangeStart id -> is step

  std::mutex close_mutex_;  // have_trace_, trace_, stats_; never taken by a callback
  bool have_trace_ = false;
  Trace trace_;
  TracerStats stats_;

  std::mutex worker_mutex_;  // stop_worker_ (started once, joined at exit)
  std::thread stop_worker_;
};

}  // namespace syncscope::cupti_detail
