#include "inject_control.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "syncscope/core/glob.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/tracer/trace_env.hpp"

namespace syncscope::cupti_detail {
namespace {

thread_local std::vector<bool> t_push_stack;  // per thread: is each open push/pop range a step?

std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string(fallback);
}

bool ci_glob(const std::string& pattern, std::string_view name) {
  std::string lower_pattern = pattern, lower_name(name);
  for (auto& c : lower_pattern) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return glob_match(lower_pattern, lower_name);
}

}  // namespace

Injection::Injection(Session& session, CuptiApi& api) : session_(session), api_(api) {}

Injection::~Injection() {
  std::lock_guard lock(worker_mutex_);
  if (stop_worker_.joinable()) {
    {
      std::lock_guard l(mutex_);
      sync_seen_after_stop_ = true;
    }
    stop_cv_.notify_all();
    stop_worker_.join();
  }
}

void Injection::log_once(const std::string& key, const std::string& message) noexcept {
  try {
    {
      std::lock_guard lock(mutex_);
      if (!logged_.insert(key).second) return;
      notes_.push_back(message);
    }
    std::fprintf(stderr, "syncscope-inject: %s\n", message.c_str());
  } catch (...) {
  }
}

InjectConfig Injection::config_from_environment() {
  InjectConfig c;
  c.output = env(trace_env::kOutput, c.output.c_str());
  if (auto a = env(trace_env::kActivities); !a.empty()) {
    try {
      c.activities = parse_activities(a);
    } catch (const std::exception& e) {
      log_once("activities", std::string("SYNCSCOPE_TRACE_ACTIVITIES: ") + e.what() + "; tracing all activities");
    }
  }
  if (auto cap = env(trace_env::kBufferCapMb); !cap.empty()) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(cap.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && mb > 0) c.cap_bytes = static_cast<std::size_t>(mb) << 20;
    else log_once("cap", "SYNCSCOPE_TRACE_BUFFER_CAP_MB='" + cap + "' is not a positive integer; using 256");
  }
  c.start_range = env(trace_env::kStartRange);
  if (auto n = env(trace_env::kStopAfterSteps); !n.empty()) {
    char* end = nullptr;
    const long v = std::strtol(n.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && v > 0) c.stop_after_steps = v;
    else log_once("steps", "SYNCSCOPE_TRACE_STOP_AFTER_STEPS='" + n + "' is not a positive integer; ignored");
  }
  if (auto g = env(trace_env::kStepRange); !g.empty()) c.step_glob = g;
  c.overwrite = env(trace_env::kOverwrite) == "1";
  c.quiet = env(trace_env::kQuiet) == "1";
  c.root_pid = std::strtol(env(trace_env::kRootPid, "0").c_str(), nullptr, 10);
  return c;
}

std::string Injection::output_path(const InjectConfig& c, long pid) {
  if (c.root_pid == 0 || c.root_pid == pid) return c.output;
  const std::size_t slash = c.output.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::size_t dot = c.output.find('.', base);
  if (dot == std::string::npos || dot == base) dot = c.output.size();
  return c.output.substr(0, dot) + "-pid" + std::to_string(pid) + c.output.substr(dot);
}

void Injection::initialize(const InjectConfig& config, CUpti_CallbackFunc callback) noexcept {
  try {
    config_ = config;
    SessionConfig sc;
    sc.activities = config_.activities;
    sc.pipeline.cap_bytes = config_.cap_bytes;
    sc.trace_name = config_.output;
    Status st = session_.open(sc);
    if (!st.ok()) {
      phase_.store(InjectPhase::Failed);
      log_once("open", "CUPTI could not start tracing (" + st.what + "); the program runs untraced");
      return;
    }

    const bool range_control = !config_.start_range.empty() || config_.stop_after_steps > 0;
    CUpti_SubscriberHandle sub = nullptr;
    Status subscribed = make_status(api_.subscribe(&sub, callback, nullptr), "cuptiSubscribe");
    if (!subscribed.ok()) {
      if (range_control)
        log_once("subscribe", "no CUPTI callbacks (" + subscribed.what +
                                  "): SYNCSCOPE_TRACE_START_RANGE/STOP_AFTER_STEPS ignored, tracing the whole run");
    } else {
      subscriber_.store(sub);
      Status res = make_status(api_.enable_domain(true, sub, CUPTI_CB_DOMAIN_RESOURCE), "cuptiEnableDomain(RESOURCE)");
      if (!res.ok())
        log_once("resource", "no resource callbacks (" + res.what +
                                 "): contexts are not flushed before "
                                 "they are destroyed");
      if (range_control) {
        Status nv = make_status(api_.enable_domain(true, sub, CUPTI_CB_DOMAIN_NVTX), "cuptiEnableDomain(NVTX)");
        if (!nv.ok()) {
          log_once("nvtx", "no NVTX callbacks (" + nv.what + "): range control ignored");
        } else if (!config_.start_range.empty()) {
          phase_.store(InjectPhase::WaitingForRange);
          return;
        }
      }
    }
    phase_.store(InjectPhase::Tracing);
    begin_tracing();
  } catch (const std::exception& e) {
    phase_.store(InjectPhase::Failed);
    log_once("init", std::string("initialization failed: ") + e.what());
  } catch (...) {
    phase_.store(InjectPhase::Failed);
    log_once("init", "initialization failed (unknown error)");
  }
}

void Injection::begin_tracing() noexcept {
  try {
    Status st = session_.enable();
    if (!st.ok())
      log_once("enable", "could not enable CUPTI activities (" + st.what + "); the trace will be incomplete");
  } catch (...) {
    phase_.store(InjectPhase::Failed);
  }
}

void Injection::on_context_created(CUcontext context) noexcept {
  try {
    session_.note_context(context);
  } catch (...) {
  }
}

void Injection::on_context_destroy_starting() noexcept {
  // The context's records must leave CUPTI before the context does.
  if (!session_.is_open()) return;
  Status f = session_.flush_forced();
  if (!f.ok()) log_once("flush-ctx", "flush before context destruction failed: " + f.what);
}

void Injection::on_range_open(const char* name, bool push, std::uint64_t start_end_id) noexcept {
  try {
    const std::string_view n = name != nullptr ? std::string_view(name) : std::string_view();
    if (phase_.load() == InjectPhase::WaitingForRange && name != nullptr && ci_glob(config_.start_range, n)) {
      InjectPhase waiting = InjectPhase::WaitingForRange;
      if (phase_.compare_exchange_strong(waiting, InjectPhase::Tracing)) begin_tracing();  // once
    }
    const bool step = config_.stop_after_steps > 0 && name != nullptr && ci_glob(config_.step_glob, n);
    if (push) {
      t_push_stack.push_back(step);
    } else {
      std::lock_guard lock(mutex_);
      open_start_end_ranges_[start_end_id] = step;
    }
  } catch (...) {
  }
}

void Injection::on_push_pop_close() noexcept {
  if (t_push_stack.empty()) return;
  const bool step = t_push_stack.back();
  t_push_stack.pop_back();
  on_range_close(step);
}

void Injection::on_start_end_close(std::uint64_t id) noexcept {
  bool step = false;
  try {
    std::lock_guard lock(mutex_);
    auto it = open_start_end_ranges_.find(id);
    if (it == open_start_end_ranges_.end()) return;
    step = it->second;
    open_start_end_ranges_.erase(it);
  } catch (...) {
    return;
  }
  on_range_close(step);
}

void Injection::on_range_close(bool step) noexcept {
  if (!step || phase_.load() != InjectPhase::Tracing) return;
  if (steps_done_.fetch_add(1) + 1 >= config_.stop_after_steps) stop_tracing();
}

void Injection::on_api_exit(bool is_sync) noexcept {
  try {
    if (phase_.load() == InjectPhase::Stopping && is_sync) {
      {
        std::lock_guard lock(mutex_);
        sync_seen_after_stop_ = true;
      }
      stop_cv_.notify_all();
    } else if (finalize_requested_.exchange(false)) {
      // Off every domain first: after cuptiFinalize this subscriber no longer exists.
      Status f = session_.finalize();
      subscriber_.store(nullptr);
      if (!f.ok()) log_once("finalize", "cuptiFinalize failed: " + f.what);
    }
  } catch (...) {
  }
}

void Injection::close_session() {
  std::lock_guard lock(close_mutex_);
  if (have_trace_ || !session_.is_open()) return;
  trace_ = session_.close(&stats_);
  have_trace_ = true;
}

void Injection::stop_tracing() noexcept {
  InjectPhase expected = InjectPhase::Tracing;
  if (!phase_.compare_exchange_strong(expected, InjectPhase::Stopping)) return;
  try {
    Status d = session_.disable();
    if (!d.ok()) log_once("disable", "could not disable CUPTI activities: " + d.what);
    if (CUpti_SubscriberHandle sub = subscriber_.load()) {
      // The stop worker waits for the program's next synchronization: watch the API calls.
      (void)api_.enable_domain(true, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
      (void)api_.enable_domain(true, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    }
    std::lock_guard worker_lock(worker_mutex_);
    stop_worker_ = std::thread([this] {
      try {
        {
          std::unique_lock lock(mutex_);
          stop_cv_.wait_for(lock, stop_wait, [&] { return sync_seen_after_stop_; });
        }
        // mutex_ is released: application threads reach their callbacks during the flush.
        close_session();
        phase_.store(InjectPhase::Stopped);
        if (subscriber_.load() != nullptr) finalize_requested_.store(true);
      } catch (...) {
        phase_.store(InjectPhase::Failed);
      }
    });
  } catch (...) {
    phase_.store(InjectPhase::Failed);
  }
}

void Injection::write_trace_at_exit() noexcept {
  if (forked_child_.load() || written_.exchange(true)) return;
  try {
    {
      std::lock_guard worker_lock(worker_mutex_);
      if (stop_worker_.joinable()) {
        // The stop worker waits at most stop_wait for a synchronization; do not wait twice.
        {
          std::lock_guard lock(mutex_);
          sync_seen_after_stop_ = true;
        }
        stop_cv_.notify_all();
        stop_worker_.join();
      }
    }
    close_session();
    Trace trace;
    {
      std::lock_guard lock(close_mutex_);
      if (have_trace_) trace = std::move(trace_);
    }
    if (trace.meta.source_tool.empty()) {
      trace.meta.source_tool = "syncscope-tracer";
      trace.meta.clock = ClockBase::UnixEpoch;
    }
    const long pid = static_cast<long>(::getpid());
    trace.meta.extra["traced_pid"] = std::to_string(pid);
    trace.meta.extra["injection"] = "libsyncscope_inject.so";
    switch (phase_.load()) {
      case InjectPhase::WaitingForRange:
        trace.meta.extra["note"] =
            "no NVTX range matched SYNCSCOPE_TRACE_START_RANGE='" + config_.start_range + "': nothing was recorded";
        break;
      case InjectPhase::Failed:
        trace.meta.extra["note"] = "tracing failed to start: CUPTI refused (see syncscope_inject_message_*)";
        break;
      case InjectPhase::Stopped:
        trace.meta.extra["note"] =
            "stopped after " + std::to_string(steps_done_.load()) + " step ranges (SYNCSCOPE_TRACE_STOP_AFTER_STEPS)";
        break;
      default: break;
    }
    {
      std::lock_guard lock(mutex_);
      for (std::size_t i = 0; i < notes_.size(); ++i)
        trace.meta.extra["syncscope_inject_message_" + std::to_string(i)] = notes_[i];
    }
    const std::string path = output_path(config_, pid);
    WriteOptions o;
    o.format = TraceFormat::Auto;
    o.overwrite = config_.overwrite;
    write_trace(trace, path, o);
    if (!config_.quiet) {
      std::fprintf(stderr, "syncscope-inject: wrote %zu records (%llu dropped) to %s\n", trace.record_count(),
                   static_cast<unsigned long long>(trace.meta.dropped_records), path.c_str());
    }
  } catch (const std::exception& e) {
    log_once("write", std::string("could not write the trace: ") + e.what());
  } catch (...) {
    log_once("write", "could not write the trace (unknown error)");
  }
}

}  // namespace syncscope::cupti_detail
