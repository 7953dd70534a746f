#include "buffer_pipeline.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace syncscope::cupti_detail {
namespace {

// CUPTI requires 8-byte aligned activity buffers (ACTIVITY_RECORD_ALIGNMENT in
// cupti_activity.h); sizes are rounded up to a multiple of it.
constexpr std::size_t kAlign = 8;

std::size_t rounded(std::size_t bytes) { return std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign); }

}  // namespace

BufferPipeline::BufferPipeline(PipelineOptions options, DecodeFn decode, CountFn count)
    : options_(options), decode_(std::make_shared<const DecodeFn>(std::move(decode))), count_(std::move(count)) {
  options_.buffer_bytes = rounded(options_.buffer_bytes);
  // The reserve exists before any request so that handing it out never allocates.
  for (std::size_t i = 0; i < options_.reserve_buffers; ++i) free_reserve_.push_back(allocate());
  decoder_ = std::thread([this] { decoder_loop(); });
}

BufferPipeline::~BufferPipeline() {
  drain();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  if (decoder_.joinable()) decoder_.join();
  for (auto* p : free_pool_) std::free(p);
  for (auto* p : free_reserve_) std::free(p);
  // Buffers CUPTI never returned: CUPTI owns them until completion; after a forced flush it
  // has returned all of them, so whatever is left here is ours to free.
  for (auto& [p, origin] : outstanding_) std::free(p);
}

std::uint8_t* BufferPipeline::allocate() {
  void* p = std::aligned_alloc(kAlign, options_.buffer_bytes);
  if (p == nullptr) throw std::bad_alloc();
  ++stats_.buffers_allocated;
  live_bytes_ += options_.buffer_bytes;
  stats_.peak_bytes = std::max<std::uint64_t>(stats_.peak_bytes, live_bytes_);
  return static_cast<std::uint8_t*>(p);
}

void BufferPipeline::request(std::uint8_t** buffer, std::size_t* size) {
  std::lock_guard lock(mutex_);
  ++stats_.buffers_requested;
  std::uint8_t* p = nullptr;
  Origin origin = Origin::Pool;
  const std::size_t max_pool = std::max<std::size_t>(1, options_.cap_bytes / options_.buffer_bytes);
  if (!free_pool_.empty()) {
    p = free_pool_.back();
    free_pool_.pop_back();
  } else if (pool_allocated_ < max_pool) {
    p = allocate();
    ++pool_allocated_;
  } else if (!free_reserve_.empty()) {
    p = free_reserve_.back();
    free_reserve_.pop_back();
    origin = Origin::Reserve;
    ++stats_.over_cap_handouts;
  } else {
    p = allocate();
    origin = Origin::PastCap;
    ++stats_.over_cap_handouts;
  }
  outstanding_.emplace(p, origin);
  *buffer = p;
  *size = options_.buffer_bytes;
}

void BufferPipeline::complete(std::uint8_t* buffer, std::size_t valid_bytes) {
  {
    std::lock_guard lock(mutex_);
    auto it = outstanding_.find(buffer);
    if (it == outstanding_.end()) {
      // Not ours (cannot happen with CUPTI's contract); never touch it.
      ++stats_.unknown_buffers;
      return;
    }
    queue_.push_back({buffer, std::min(valid_bytes, options_.buffer_bytes), it->second});
    outstanding_.erase(it);
    ++stats_.buffers_completed;
  }
  work_cv_.notify_one();
}

void BufferPipeline::release(std::uint8_t* data, Origin origin) {
  switch (origin) {
    case Origin::Pool: free_pool_.push_back(data); break;
    case Origin::Reserve: free_reserve_.push_back(data); break;
    case Origin::PastCap:
      std::free(data);
      live_bytes_ -= options_.buffer_bytes;
      break;
  }
}

void BufferPipeline::decoder_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    Completed c = queue_.front();
    queue_.pop_front();
    decoding_ = true;
    const bool over_cap = c.origin != Origin::Pool;
    const bool over_limit =
        options_.max_record_bytes != 0 && stats_.bytes_decoded + c.valid > options_.max_record_bytes;
    const std::shared_ptr<const DecodeFn> decode = decode_;
    lock.unlock();
    // Decode outside the lock: CUPTI may request and complete other buffers meanwhile.
    std::uint64_t n = 0;
    bool decoded = false;
    try {
      if (c.valid > 0) {
        if (over_cap || over_limit) {
          n = count_ ? count_(c.data, c.valid) : 0;
        } else {
          n = (*decode)(c.data, c.valid);
          decoded = true;
        }
      }
    } catch (...) {
      // A decoder failure loses this buffer's records but never the application.
      n = 0;
    }
    lock.lock();
    if (decoded) {
      stats_.records_decoded += n;
      stats_.bytes_decoded += c.valid;
    } else {
      stats_.lost_to_cap += n;
    }
    ++stats_.buffers_decoded;
    release(c.data, c.origin);
    decoding_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

void BufferPipeline::drain() {
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [this] { return queue_.empty() && !decoding_; });
}

void BufferPipeline::reset_session(DecodeFn decode, std::size_t max_record_bytes) {
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [this] { return queue_.empty() && !decoding_; });
  decode_ = std::make_shared<const DecodeFn>(std::move(decode));
  options_.max_record_bytes = max_record_bytes;
  stats_.buffers_completed = 0;
  stats_.buffers_decoded = 0;
  stats_.over_cap_handouts = 0;
  stats_.records_decoded = 0;
  stats_.lost_to_cap = 0;
  stats_.bytes_decoded = 0;
}

void BufferPipeline::trim() {
  std::lock_guard lock(mutex_);
  for (auto* p : free_pool_) {
    std::free(p);
    live_bytes_ -= options_.buffer_bytes;
    --pool_allocated_;
  }
  free_pool_.clear();
}

PipelineStats BufferPipeline::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace syncscope::cupti_detail
