// The process-wide CUPTI activity session shared by syncscope::Tracer and the injection
// library. CUPTI has one pair of buffer callbacks per process, so there is one session:
// open() registers them (and the timestamp callback), enable()/disable() switch the
// activity kinds, close() flushes, drains the decoder and hands back the trace.
//
// Every CUPTI call's result is checked; failures come back as a Status naming the call, so
// the Tracer can throw and the injection library can log once and carry on. Every CUPTI
// call goes through a CuptiApi (cupti_api.hpp), so tests drive a Session with a fake.
//
// Locks: mutex_ serializes open/enable/disable/close and is never held across a CUPTI flush
// (CUPTI may complete buffers on the flushing thread, and an application thread inside a
// CUPTI callback must never wait for a flush). The buffer callbacks take no lock of ours
// except the pipeline's short queue lock; note_context (a resource callback) has its own.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "activity_decoder.hpp"
#include "buffer_pipeline.hpp"
#include "cupti_api.hpp"
#include "syncscope/trace/trace.hpp"
#include "syncscope/tracer/activities.hpp"

namespace syncscope::cupti_detail {

struct Status {
  CUptiResult code = CUPTI_SUCCESS;
  std::string what;  // "cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_UNKNOWN"
  bool ok() const { return code == CUPTI_SUCCESS; }
};

// "<call>: <CUPTI's name for the result>".
Status make_status(CUptiResult code, const std::string& call);

struct SessionConfig {
  std::uint32_t activities = kDefaultActivities;
  PipelineOptions pipeline;
  std::string trace_name;
};

class Session {
 public:
  // The process's session, on the real CUPTI.
  static Session& instance();
  // A session on another CuptiApi (tests). CUPTI's buffer callbacks reach the session that
  // opened last (one pair of callbacks per process).
  explicit Session(CuptiApi& api);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts a session: buffer callbacks, timestamp callback, a fresh trace builder. Fails
  // when one is already open ("busy") or CUPTI refuses.
  Status open(const SessionConfig& config);
  bool is_open() const { return open_.load(std::memory_order_acquire); }

  // Enables the configured activity kinds; on failure, what was enabled stays enabled
  // (disable() undoes it). Non-fatal refusals (CUDA_EVENT, DEVICE on some setups) are
  // collected in warnings().
  Status enable();
  Status disable();
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }

  // cuptiActivityFlushAll with the forced flag: every buffer, even with incomplete records.
  Status flush_forced();

  // Contexts whose dropped-record counters close() reads (besides the global queue).
  void note_context(CUcontext context);

  // Disables, force-flushes, waits for the decoder, reads the dropped-record counters and
  // returns the finished trace. The session is closed afterwards; late buffers are ignored.
  // Devices the records name but no DEVICE record described get their name and properties
  // from the driver (CuptiApi::device_properties), noted in meta.extra["device_names_from"].
  Trace close(TracerStats* stats);

  // cuptiFinalize: the caller guarantees the device is synchronized and buffers flushed
  // (cupti_activity.h), or calls it from an API exit callback. Forgets the registrations.
  Status finalize();

  std::vector<std::string> warnings() const;
  std::uint32_t activities() const { return config_.activities; }

 private:
  static void CUPTIAPI on_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  static void CUPTIAPI on_complete(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                                   std::size_t valid);
  static std::uint64_t CUPTIAPI on_timestamp();
  void request(std::uint8_t** buffer, std::size_t* size);
  void complete(std::uint8_t* buffer, std::size_t valid);
  Status set_kinds(bool enable);
  void warn(std::string w);
  void add_driver_devices(Trace& trace);

  CuptiApi& api_;
  mutable std::mutex mutex_;  // open/close/enable/disable; never taken by a callback, never held across a flush
  SessionConfig config_;
  std::atomic<bool> open_{false};
  std::atomic<bool> closing_{false};
  std::atomic<bool> enabled_{false};
  bool callbacks_registered_ = false;
  bool timestamp_registered_ = false;
  // Created at the first open() and kept for the process's lifetime, so a buffer CUPTI
  // hands back late never meets a freed pipeline; later sessions swap only the builder
  // (buffer size and cap come from the first session's options).
  std::unique_ptr<BufferPipeline> pipeline_;
  // Used by the decoder thread; by close() only after drain().
  std::unique_ptr<TraceBuilder> builder_;
  std::atomic<BufferPipeline*> live_pipeline_{nullptr};
  std::atomic<std::uint64_t> dropped_{0};
  // Buffer requests declined with a null buffer (CUPTI >= 13 then drops and counts the
  // records itself), and records found in the emergency buffer (older CUPTI), which are
  // counted as lost, never decoded.
  std::atomic<std::uint64_t> requests_declined_{0};
  std::atomic<std::uint64_t> emergency_records_{0};
  std::atomic<std::uint32_t> cupti_version_{0};
  std::mutex contexts_mutex_;  // contexts_ only (note_context runs in a CUPTI callback)
  std::vector<CUcontext> contexts_;
  std::vector<std::string> warnings_;
};

// Callback ids enabled for the DRIVER activity (kActivityDriver): launches and the calls
// that block, copy or set memory, so programs that bypass the runtime (Triton's
// cuLaunchKernel) are seen, and so a memset record's correlation id (always the driver
// call's: cupti_activity.h, CUpti_ActivityMemset4) names a traced call, which the decoder
// maps to the runtime call around it. The rest of the driver API stays untraced to keep
// the overhead low.
const std::vector<CUpti_CallbackId>& traced_driver_cbids();
// Runtime calls left untraced (PyTorch makes them by the million; none synchronizes).
const std::vector<CUpti_CallbackId>& untraced_runtime_cbids();

}  // namespace syncscope::cupti_detail
