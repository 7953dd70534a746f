// The hand-off between CUPTI's threads and ours, with no CUPTI call in it (so it is tested
// under ThreadSanitizer with simulated request/complete callbacks).
//
// - request(): CUPTI asks for an empty buffer (from any thread, possibly the application's
//   own, on its critical path): a free buffer is reused or a new one allocated, 8-byte
//   aligned. Never returns null: CUPTI before 12.9 crashes on a null buffer. When the
//   allocated total would pass the cap, a buffer from a small preallocated reserve is handed
//   out instead (or, with the reserve empty, one allocated past the cap, as libkineto does);
//   the records CUPTI writes there are counted and discarded (lost_to_cap), not decoded.
// - complete(): CUPTI returns a filled buffer. Only queues it (O(1), one short lock).
// - A decoder thread decodes queued buffers with the DecodeFn, then recycles them.
// - drain(): waits until every buffer completed so far has been decoded.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace syncscope::cupti_detail {

struct PipelineOptions {
  std::size_t buffer_bytes = std::size_t{4} << 20;
  std::size_t cap_bytes = std::size_t{256} << 20;  // at least one buffer is always allowed
  std::size_t reserve_buffers = 2;                 // preallocated, used only past the cap
  std::size_t max_record_bytes = 0;                // decode at most this many bytes (0: all)
};

struct PipelineStats {
  std::uint64_t buffers_allocated = 0;  // distinct allocations, reserve included
  std::uint64_t buffers_requested = 0;
  std::uint64_t buffers_completed = 0;
  std::uint64_t buffers_decoded = 0;
  std::uint64_t over_cap_handouts = 0;  // requests served from the reserve or past the cap
  std::uint64_t records_decoded = 0;    // as returned by DecodeFn
  std::uint64_t lost_to_cap = 0;        // records counted in over-cap buffers (CountFn)
  std::uint64_t bytes_decoded = 0;
  std::uint64_t peak_bytes = 0;       // most buffer memory allocated at once
  std::uint64_t unknown_buffers = 0;  // complete() with a pointer we never handed out
};

class BufferPipeline {
 public:
  // Decodes one buffer; returns the number of records it held. Runs on the decoder thread.
  using DecodeFn = std::function<std::uint64_t(const std::uint8_t* data, std::size_t valid_bytes)>;
  // Counts the records in a buffer without decoding it (for buffers past the cap).
  using CountFn = std::function<std::uint64_t(const std::uint8_t* data, std::size_t valid_bytes)>;

  BufferPipeline(PipelineOptions options, DecodeFn decode, CountFn count);
  // Starts a new session on the same buffers: waits until the decoder is idle, then
  // decodes with `decode` from now on and restarts the per-session counters (records,
  // lost_to_cap, bytes, buffers completed/decoded, over-cap hand-outs).
  void reset_session(DecodeFn decode, std::size_t max_record_bytes);
  ~BufferPipeline();  // drains, then stops the decoder thread and frees every buffer
  BufferPipeline(const BufferPipeline&) = delete;
  BufferPipeline& operator=(const BufferPipeline&) = delete;

  // Never sets *buffer to null (std::bad_alloc aside, which the caller must catch).
  void request(std::uint8_t** buffer, std::size_t* size);
  void complete(std::uint8_t* buffer, std::size_t valid_bytes);
  void drain();
  // Frees the idle buffers of the pool (not the reserve), e.g. once a session is over.
  void trim();
  PipelineStats stats() const;

  std::size_t buffer_bytes() const { return options_.buffer_bytes; }

 private:
  enum class Origin : std::uint8_t { Pool, Reserve, PastCap };
  struct Buffer {
    std::uint8_t* data = nullptr;
    Origin origin = Origin::Pool;
  };
  struct Completed {
    std::uint8_t* data;
    std::size_t valid;
    Origin origin;
  };

  std::uint8_t* allocate();
  void release(std::uint8_t* data, Origin origin);  // caller holds mutex_
  void decoder_loop();

  PipelineOptions options_;
  std::shared_ptr<const DecodeFn> decode_;  // swapped by reset_session under mutex_
  CountFn count_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;  // decoder: queue not empty or stopping
  std::condition_variable idle_cv_;  // drain(): queue empty and decoder idle
  std::vector<std::uint8_t*> free_pool_;
  std::vector<std::uint8_t*> free_reserve_;
  std::unordered_map<std::uint8_t*, Origin> outstanding_;  // handed to CUPTI
  std::deque<Completed> queue_;
  std::size_t pool_allocated_ = 0;  // buffers counted against the cap
  std::size_t live_bytes_ = 0;      // all buffer memory allocated now
  bool decoding_ = false;
  bool stopping_ = false;
  PipelineStats stats_;
  std::thread decoder_;
};

}  // namespace syncscope::cupti_detail
