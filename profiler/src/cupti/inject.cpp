// libsyncscope_inject.so: traces an unmodified CUDA program. The CUDA driver loads it from
// CUDA_INJECTION64_PATH during cuInit and calls InitializeInjection; NVTX loads it from
// NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2, which this library forwards to
// the CUPTI it uses. Configured by environment variables (`syncscope trace` sets them):
//
//   SYNCSCOPE_TRACE_OUTPUT           trace file (default syncscope-trace.json.gz)
//   SYNCSCOPE_TRACE_ACTIVITIES       as --activities (default: all)
//   SYNCSCOPE_TRACE_BUFFER_CAP_MB    activity buffer cap in MiB (default 256)
//   SYNCSCOPE_TRACE_START_RANGE      start tracing when an NVTX range matching this glob opens
//   SYNCSCOPE_TRACE_STOP_AFTER_STEPS stop after this many step ranges have closed
//   SYNCSCOPE_TRACE_STEP_RANGE       glob naming step ranges (default "*step*", any case)
//   SYNCSCOPE_TRACE_OVERWRITE=1      replace an existing output file
//   SYNCSCOPE_TRACE_ROOT_PID         the process that writes OUTPUT; other CUDA processes of
//                                    the same run write OUTPUT with "-pid<N>" before the suffix
//   SYNCSCOPE_TRACE_QUIET=1          no summary line at exit
//
// The trace is written at process exit (atexit). It must never crash, hang or change the
// exit code of the program: errors are logged once each to stderr ("syncscope-inject: ...")
// and tracing stops cleanly; nothing is thrown across the C boundary.
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cupti_session.hpp"
#include "syncscope/core/glob.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/tracer/tracer.hpp"

#include <generated_nvtx_meta.h>

namespace {

using syncscope::cupti_detail::Session;
using syncscope::cupti_detail::Status;

struct Config {
  std::string output = "syncscope-trace.json.gz";
  std::uint32_t activities = syncscope::kDefaultActivities;
  std::size_t cap_bytes = std::size_t{256} << 20;
  std::string start_range;
  long stop_after_steps = 0;
  std::string step_glob = "*step*";
  bool overwrite = false;
  bool quiet = false;
  long root_pid = 0;
};

enum class Phase : int { Idle, WaitingForRange, Tracing, Stopping, Stopped, Failed };

struct State {
  Config config;
  std::atomic<Phase> phase{Phase::Idle};
  std::atomic<bool> initialized{false};
  std::atomic<bool> written{false};
  std::atomic<bool> forked_child{false};
  std::atomic<bool> finalize_requested{false};
  std::atomic<long> steps_done{0};
  std::mutex mutex;  // trace, notes, logged, ranges
  std::condition_variable stop_cv;
  bool sync_seen_after_stop = false;
  bool stop_done = false;
  std::thread stop_worker;
  CUpti_SubscriberHandle subscriber = nullptr;
  bool have_trace = false;
  syncscope::Trace trace;
  syncscope::TracerStats stats;
  std::vector<std::string> notes;  // into meta.extra
  std::set<std::string> logged;
  std::unordered_map<std::uint64_t, bool> open_start_end_ranges;  // nvtxRangeStart id -> is step
};

State& state() {
  static State* s = new State();  // never destroyed: used from atexit and CUPTI callbacks
  return *s;
}

thread_local std::vector<bool> t_push_stack;  // per thread: is each open push/pop range a step?

// Logs a message once per key; never throws.
void log_once(const std::string& key, const std::string& message) noexcept {
  try {
    State& s = state();
    {
      std::lock_guard lock(s.mutex);
      if (!s.logged.insert(key).second) return;
      s.notes.push_back(message);
    }
    std::fprintf(stderr, "syncscope-inject: %s\n", message.c_str());
  } catch (...) {
  }
}

std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string(fallback);
}

bool ci_glob(const std::string& pattern, std::string_view name) {
  std::string lower_pattern = pattern, lower_name(name);
  for (auto& c : lower_pattern) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return syncscope::glob_match(lower_pattern, lower_name);
}

Config read_config() {
  Config c;
  c.output = env("SYNCSCOPE_TRACE_OUTPUT", c.output.c_str());
  if (auto a = env("SYNCSCOPE_TRACE_ACTIVITIES"); !a.empty()) {
    try {
      c.activities = syncscope::parse_activities(a);
    } catch (const std::exception& e) {
      log_once("activities", std::string("SYNCSCOPE_TRACE_ACTIVITIES: ") + e.what() + "; tracing all activities");
    }
  }
  if (auto cap = env("SYNCSCOPE_TRACE_BUFFER_CAP_MB"); !cap.empty()) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(cap.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && mb > 0) c.cap_bytes = static_cast<std::size_t>(mb) << 20;
    else log_once("cap", "SYNCSCOPE_TRACE_BUFFER_CAP_MB='" + cap + "' is not a positive integer; using 256");
  }
  c.start_range = env("SYNCSCOPE_TRACE_START_RANGE");
  if (auto n = env("SYNCSCOPE_TRACE_STOP_AFTER_STEPS"); !n.empty()) {
    char* end = nullptr;
    const long v = std::strtol(n.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && v > 0) c.stop_after_steps = v;
    else log_once("steps", "SYNCSCOPE_TRACE_STOP_AFTER_STEPS='" + n + "' is not a positive integer; ignored");
  }
  if (auto g = env("SYNCSCOPE_TRACE_STEP_RANGE"); !g.empty()) c.step_glob = g;
  c.overwrite = env("SYNCSCOPE_TRACE_OVERWRITE") == "1";
  c.quiet = env("SYNCSCOPE_TRACE_QUIET") == "1";
  c.root_pid = std::strtol(env("SYNCSCOPE_TRACE_ROOT_PID", "0").c_str(), nullptr, 10);
  return c;
}

// OUTPUT for the root process; "<stem>-pid<N><suffixes>" for any other.
std::string output_path(const Config& c) {
  const long pid = static_cast<long>(::getpid());
  if (c.root_pid == 0 || c.root_pid == pid) return c.output;
  const std::size_t slash = c.output.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::size_t dot = c.output.find('.', base);
  if (dot == std::string::npos || dot == base) dot = c.output.size();
  return c.output.substr(0, dot) + "-pid" + std::to_string(pid) + c.output.substr(dot);
}

void begin_tracing() noexcept {
  State& s = state();
  try {
    Status st = Session::instance().enable();
    if (!st.ok()) {
      log_once("enable", "could not enable CUPTI activities (" + st.what + "); the trace will be incomplete");
    }
    s.phase.store(Phase::Tracing);
  } catch (...) {
    s.phase.store(Phase::Failed);
  }
}

bool is_sync_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020;
  }
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize || cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2 ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize;
}

// Closes the session and keeps the trace (under s.mutex). Safe to call twice.
void close_session_locked(State& s) {
  if (s.have_trace || !Session::instance().is_open()) return;
  s.trace = Session::instance().close(&s.stats);
  s.have_trace = true;
}

// After the last step: stop recording now (on the application's thread), then, off that
// thread, wait for the program's next synchronization (so the work of the last step has
// finished and its records are complete; at most 2 s), flush, decode and ask for
// cuptiFinalize, which the next API exit callback performs (cupti_activity.h: the safe
// place), so the rest of the run is not slowed by an attached CUPTI.
void stop_tracing() noexcept {
  State& s = state();
  Phase expected = Phase::Tracing;
  if (!s.phase.compare_exchange_strong(expected, Phase::Stopping)) return;
  try {
    Status d = Session::instance().disable();
    if (!d.ok()) log_once("disable", "could not disable CUPTI activities: " + d.what);
    if (s.subscriber != nullptr) {
      (void)cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
      (void)cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    }
    s.stop_worker = std::thread([] {
      State& st = state();
      {
        std::unique_lock lock(st.mutex);
        st.stop_cv.wait_for(lock, std::chrono::seconds(2), [&] { return st.sync_seen_after_stop; });
        close_session_locked(st);
        st.stop_done = true;
      }
      st.phase.store(Phase::Stopped);
      if (st.subscriber != nullptr) st.finalize_requested.store(true);
    });
  } catch (...) {
    s.phase.store(Phase::Failed);
  }
}

const char* ascii_message(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return nullptr;
  return a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : nullptr;
}

void on_range_open(const char* name, bool push, std::uint64_t start_end_id) {
  State& s = state();
  const std::string_view n = name != nullptr ? std::string_view(name) : std::string_view();
  if (s.phase.load() == Phase::WaitingForRange && name != nullptr && ci_glob(s.config.start_range, n)) {
    Phase waiting = Phase::WaitingForRange;
    if (s.phase.compare_exchange_strong(waiting, Phase::Tracing)) begin_tracing();  // once
  }
  const bool step = s.config.stop_after_steps > 0 && name != nullptr && ci_glob(s.config.step_glob, n);
  if (push) {
    t_push_stack.push_back(step);
  } else {
    std::lock_guard lock(s.mutex);
    s.open_start_end_ranges[start_end_id] = step;
  }
}

void on_range_close(bool step) {
  State& s = state();
  if (!step || s.phase.load() != Phase::Tracing) return;
  if (s.steps_done.fetch_add(1) + 1 >= s.config.stop_after_steps) stop_tracing();
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  try {
    State& s = state();
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      const auto* r = static_cast<const CUpti_ResourceData*>(data);
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        Session::instance().note_context(r->context);
      } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        // The context's records must leave CUPTI before the context does.
        if (Session::instance().is_open()) {
          Status f = Session::instance().flush_forced();
          if (!f.ok()) log_once("flush-ctx", "flush before context destruction failed: " + f.what);
        }
      }
      return;
    }
    if (domain == CUPTI_CB_DOMAIN_NVTX) {
      const auto* nv = static_cast<const CUpti_NvtxData*>(data);
      switch (cbid) {
        case CUPTI_CBID_NVTX_nvtxRangePushA:
          on_range_open(static_cast<const nvtxRangePushA_params*>(nv->functionParams)->message, true, 0);
          break;
        case CUPTI_CBID_NVTX_nvtxRangePushEx:
          on_range_open(ascii_message(static_cast<const nvtxRangePushEx_params*>(nv->functionParams)->eventAttrib), true, 0);
          break;
        case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
          on_range_open(
              ascii_message(static_cast<const nvtxDomainRangePushEx_params*>(nv->functionParams)->core.eventAttrib), true, 0);
          break;
        case CUPTI_CBID_NVTX_nvtxRangePushW:
          on_range_open(nullptr, true, 0);
          break;
        case CUPTI_CBID_NVTX_nvtxRangePop:
        case CUPTI_CBID_NVTX_nvtxDomainRangePop:
          if (!t_push_stack.empty()) {
            const bool step = t_push_stack.back();
            t_push_stack.pop_back();
            on_range_close(step);
          }
          break;
        case CUPTI_CBID_NVTX_nvtxRangeStartA:
        case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
          const char* name = nullptr;
          if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA)
            name = static_cast<const nvtxRangeStartA_params*>(nv->functionParams)->message;
          else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx)
            name = ascii_message(static_cast<const nvtxRangeStartEx_params*>(nv->functionParams)->eventAttrib);
          else
            name = ascii_message(static_cast<const nvtxDomainRangeStartEx_params*>(nv->functionParams)->core.eventAttrib);
          const auto* id = static_cast<const nvtxRangeId_t*>(nv->functionReturnValue);
          on_range_open(name, false, id != nullptr ? *id : 0);
          break;
        }
        case CUPTI_CBID_NVTX_nvtxRangeEnd:
        case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
          const nvtxRangeId_t id = cbid == CUPTI_CBID_NVTX_nvtxRangeEnd
                                       ? static_cast<const nvtxRangeEnd_params*>(nv->functionParams)->id
                                       : static_cast<const nvtxDomainRangeEnd_params*>(nv->functionParams)->core.id;
          bool step = false;
          {
            std::lock_guard lock(s.mutex);
            auto it = s.open_start_end_ranges.find(id);
            if (it == s.open_start_end_ranges.end()) break;
            step = it->second;
            s.open_start_end_ranges.erase(it);
          }
          on_range_close(step);
          break;
        }
        default:
          break;
      }
      return;
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      const auto* api = static_cast<const CUpti_CallbackData*>(data);
      if (api->callbackSite != CUPTI_API_EXIT) return;
      if (s.phase.load() == Phase::Stopping && is_sync_api(domain, cbid)) {
        {
          std::lock_guard lock(s.mutex);
          s.sync_seen_after_stop = true;
        }
        s.stop_cv.notify_all();
      } else if (s.finalize_requested.exchange(false)) {
        // Off every domain first: after cuptiFinalize this subscriber no longer exists.
        Status f = Session::instance().finalize();
        s.subscriber = nullptr;
        if (!f.ok()) log_once("finalize", "cuptiFinalize failed: " + f.what);
      }
    }
  } catch (...) {
    // Never unwind into CUDA.
  }
}

void write_trace_at_exit() noexcept {
  State& s = state();
  if (s.forked_child.load() || s.written.exchange(true)) return;
  try {
    if (s.stop_worker.joinable()) {
      // The stop worker waits at most 2 s for a synchronization; do not wait for it twice.
      {
        std::lock_guard lock(s.mutex);
        s.sync_seen_after_stop = true;
      }
      s.stop_cv.notify_all();
      s.stop_worker.join();
    }
    syncscope::Trace trace;
    syncscope::TracerStats stats;
    {
      std::lock_guard lock(s.mutex);
      close_session_locked(s);
      if (s.have_trace) {
        trace = std::move(s.trace);
        stats = s.stats;
      }
    }
    if (trace.meta.source_tool.empty()) {
      trace.meta.source_tool = "syncscope-tracer";
      trace.meta.clock = syncscope::ClockBase::UnixEpoch;
    }
    trace.meta.extra["traced_pid"] = std::to_string(static_cast<long>(::getpid()));
    trace.meta.extra["injection"] = "libsyncscope_inject.so";
    switch (s.phase.load()) {
      case Phase::WaitingForRange:
        trace.meta.extra["note"] = "no NVTX range matched SYNCSCOPE_TRACE_START_RANGE='" + s.config.start_range +
                                   "': nothing was recorded";
        break;
      case Phase::Failed:
        trace.meta.extra["note"] = "tracing failed to start: CUPTI refused (see syncscope_inject_message_*)";
        break;
      case Phase::Stopped:
        trace.meta.extra["note"] =
            "stopped after " + std::to_string(s.steps_done.load()) + " step ranges (SYNCSCOPE_TRACE_STOP_AFTER_STEPS)";
        break;
      default: break;
    }
    {
      std::lock_guard lock(s.mutex);
      for (std::size_t i = 0; i < s.notes.size(); ++i)
        trace.meta.extra["syncscope_inject_message_" + std::to_string(i)] = s.notes[i];
    }
    const std::string path = output_path(s.config);
    syncscope::WriteOptions o;
    o.format = syncscope::TraceFormat::Auto;
    o.overwrite = s.config.overwrite;
    syncscope::write_trace(trace, path, o);
    if (!s.config.quiet) {
      std::fprintf(stderr, "syncscope-inject: wrote %zu records (%llu dropped) to %s\n", trace.record_count(),
                   static_cast<unsigned long long>(trace.meta.dropped_records), path.c_str());
    }
  } catch (const std::exception& e) {
    log_once("write", std::string("could not write the trace: ") + e.what());
  } catch (...) {
    log_once("write", "could not write the trace (unknown error)");
  }
}

void mark_forked_child() { state().forked_child.store(true); }

int initialize() noexcept {
  State& s = state();
  if (s.initialized.exchange(true)) return 1;
  try {
    s.config = read_config();
    // Registered first, so that a run where CUPTI refuses still ends with a valid (empty)
    // trace that says why.
    std::atexit(&write_trace_at_exit);
    pthread_atfork(nullptr, nullptr, &mark_forked_child);

    syncscope::cupti_detail::SessionConfig sc;
    sc.activities = s.config.activities;
    sc.pipeline.cap_bytes = s.config.cap_bytes;
    sc.trace_name = s.config.output;
    Status st = Session::instance().open(sc);
    if (!st.ok()) {
      s.phase.store(Phase::Failed);
      log_once("open", "CUPTI could not start tracing (" + st.what + "); the program runs untraced");
      return 1;
    }

    const bool range_control = !s.config.start_range.empty() || s.config.stop_after_steps > 0;
    Status sub = syncscope::cupti_detail::make_status(cuptiSubscribe(&s.subscriber, &on_callback, nullptr), "cuptiSubscribe");
    if (!sub.ok()) {
      s.subscriber = nullptr;
      if (range_control)
        log_once("subscribe", "no CUPTI callbacks (" + sub.what + "): SYNCSCOPE_TRACE_START_RANGE/STOP_AFTER_STEPS "
                              "ignored, tracing the whole run");
    } else {
      (void)cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE);
      if (range_control) {
        Status nv = syncscope::cupti_detail::make_status(cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_NVTX),
                                                        "cuptiEnableDomain(NVTX)");
        if (!nv.ok()) log_once("nvtx", "no NVTX callbacks (" + nv.what + "): range control ignored");
        else if (!s.config.start_range.empty()) {
          s.phase.store(Phase::WaitingForRange);
          return 1;
        }
      }
    }
    begin_tracing();
  } catch (const std::exception& e) {
    s.phase.store(Phase::Failed);
    log_once("init", std::string("initialization failed: ") + e.what());
  } catch (...) {
    s.phase.store(Phase::Failed);
    log_once("init", "initialization failed (unknown error)");
  }
  return 1;
}

// The CUPTI library this one is bound to (the one that records our activities): NVTX must
// report to the same instance, even when the program loaded another copy of libcupti.
using NvtxInitFn = int (*)(const void* (*)(std::uint32_t));
NvtxInitFn cupti_nvtx_init() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) != 0 && info.dli_fname != nullptr) {
    if (void* h = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_NOW)) {
      auto* fn = reinterpret_cast<NvtxInitFn>(dlsym(h, "InitializeInjectionNvtx2"));
      dlclose(h);  // RTLD_NOLOAD only took a reference; the library stays loaded
      if (fn != nullptr) return fn;
    }
  }
  return reinterpret_cast<NvtxInitFn>(dlsym(RTLD_NEXT, "InitializeInjectionNvtx2"));
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) { return initialize(); }

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* (*get_export_table)(std::uint32_t)) {
  try {
    NvtxInitFn fn = cupti_nvtx_init();
    if (fn == nullptr || fn == &InitializeInjectionNvtx2) {
      log_once("nvtx-init", "libcupti exports no InitializeInjectionNvtx2: NVTX ranges are not recorded");
      return 0;
    }
    return fn(get_export_table);
  } catch (...) {
    return 0;
  }
}

}  // extern "C"
