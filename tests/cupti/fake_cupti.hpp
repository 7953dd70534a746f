// A CuptiApi for CPU tests: records what Session and Injection ask of CUPTI, answers as
// configured, keeps the buffer callbacks so a test can play CUPTI (request a buffer, fill it
// with synthetic records, hand it back), and can hold a flush until the test releases it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "cupti_api.hpp"

namespace syncscope::cupti_detail::test {

class FakeCupti final : public CuptiApi {
 public:
  // ---- configuration (set before use) ----
  std::uint32_t api_version = 130001;  // CUDA 13.0's CUPTI_API_VERSION
  std::set<CUpti_CallbackId> refused_driver_cbids;
  std::size_t dropped_per_query = 0;                 // returned by each dropped_records call
  std::map<std::int32_t, DeviceProperties> devices;  // what the "driver" knows

  // ---- what was asked ----
  std::vector<std::pair<CUpti_CallbackId, bool>> driver_calls;
  std::set<CUpti_ActivityKind> enabled_kinds;
  int flushes = 0;
  int finalizes = 0;
  int device_queries = 0;
  CUpti_BuffersCallbackRequestFunc request_cb = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete_cb = nullptr;

  // ---- a flush that waits for the test ----
  void hold_flushes() {
    std::lock_guard l(m_);
    hold_ = true;
  }
  void release_flushes() {
    {
      std::lock_guard l(m_);
      hold_ = false;
    }
    cv_.notify_all();
  }
  bool wait_until_flush_entered(std::chrono::milliseconds limit) {
    std::unique_lock l(m_);
    return cv_.wait_for(l, limit, [&] { return in_flush_; });
  }

  // ---- playing CUPTI ----
  std::uint8_t* request(std::size_t* size) {
    std::uint8_t* b = nullptr;
    std::size_t max = 0;
    *size = 0;
    request_cb(&b, size, &max);
    return b;
  }
  void complete(std::uint8_t* buffer, std::size_t valid) { complete_cb(nullptr, 0, buffer, 0, valid); }

  // ---- CuptiApi ----
  CUptiResult activity_enable(CUpti_ActivityKind kind) override {
    enabled_kinds.insert(kind);
    return CUPTI_SUCCESS;
  }
  CUptiResult activity_disable(CUpti_ActivityKind kind) override {
    enabled_kinds.erase(kind);
    return CUPTI_SUCCESS;
  }
  CUptiResult enable_runtime_api(CUpti_CallbackId, bool) override { return CUPTI_SUCCESS; }
  CUptiResult enable_driver_api(CUpti_CallbackId cbid, bool on) override {
    driver_calls.emplace_back(cbid, on);
    return refused_driver_cbids.count(cbid) ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_SUCCESS;
  }
  CUptiResult enable_all_sync_records(bool) override { return CUPTI_SUCCESS; }
  CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                 CUpti_BuffersCallbackCompleteFunc complete) override {
    request_cb = request;
    complete_cb = complete;
    return CUPTI_SUCCESS;
  }
  CUptiResult register_timestamp_callback(CUpti_TimestampCallbackFunc) override { return CUPTI_SUCCESS; }
  CUptiResult flush_all(std::uint32_t) override {
    std::unique_lock l(m_);
    ++flushes;
    in_flush_ = true;
    cv_.notify_all();
    cv_.wait(l, [&] { return !hold_; });
    in_flush_ = false;
    return CUPTI_SUCCESS;
  }
  CUptiResult dropped_records(CUcontext, std::uint32_t, std::size_t* dropped) override {
    *dropped = dropped_per_query;
    return CUPTI_SUCCESS;
  }
  CUptiResult version(std::uint32_t* v) override {
    *v = api_version;
    return CUPTI_SUCCESS;
  }
  CUptiResult finalize() override {
    ++finalizes;
    return CUPTI_SUCCESS;
  }
  CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) override {
    *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(this);
    return CUPTI_SUCCESS;
  }
  CUptiResult enable_domain(bool, CUpti_SubscriberHandle, CUpti_CallbackDomain) override { return CUPTI_SUCCESS; }
  bool device_properties(std::int32_t ordinal, DeviceProperties* out) override {
    ++device_queries;
    auto it = devices.find(ordinal);
    if (it == devices.end()) return false;
    *out = it->second;
    return true;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool hold_ = false;
  bool in_flush_ = false;
};

// Copies CUPTI-layout records into a buffer CUPTI handed out; returns the valid bytes.
class RecordWriter {
 public:
  RecordWriter(std::uint8_t* buffer, std::size_t size) : buffer_(buffer), size_(size) {}
  template <class T>
  void add(const T& record) {
    static_assert(sizeof(T) % 8 == 0, "CUPTI records are 8-byte multiples");
    if (used_ + sizeof(T) > size_) return;
    std::memcpy(buffer_ + used_, &record, sizeof(T));
    used_ += sizeof(T);
  }
  std::size_t valid() const { return used_; }

 private:
  std::uint8_t* buffer_;
  std::size_t size_;
  std::size_t used_ = 0;
};

template <class T>
T zeroed_record(CUpti_ActivityKind kind) {
  T r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}

}  // namespace syncscope::cupti_detail::test
