// The CUPTI calls that Session and the injection logic make, behind one small interface, so
// their logic (buffer hand-out, enabling kinds, flush and close, the stop path) is tested on
// CPU with a fake, the way libkineto tests its CUPTI layer (CuptiActivityApi and a mock
// subclass in its tests). Record decoding needs no seam: cuptiActivityGetNextRecord works
// on synthetic buffers without a GPU (docs/sources.md#verified-cuda-cupti).
//
// real_cupti_api() forwards each call to CUPTI unchanged. Besides CUPTI it answers one
// driver question, a device's name and properties, for devices no DEVICE record described.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "syncscope/trace/trace.hpp"

namespace syncscope::cupti_detail {

class CuptiApi {
 public:
  virtual ~CuptiApi() = default;

  virtual CUptiResult activity_enable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult activity_disable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult enable_runtime_api(CUpti_CallbackId cbid, bool on) = 0;
  virtual CUptiResult enable_driver_api(CUpti_CallbackId cbid, bool on) = 0;
  virtual CUptiResult enable_all_sync_records(bool on) = 0;
  virtual CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                         CUpti_BuffersCallbackCompleteFunc complete) = 0;
  virtual CUptiResult register_timestamp_callback(CUpti_TimestampCallbackFunc callback) = 0;
  virtual CUptiResult flush_all(std::uint32_t flag) = 0;
  virtual CUptiResult dropped_records(CUcontext context, std::uint32_t stream, std::size_t* dropped) = 0;
  // CUPTI_API_VERSION of the loaded library (cuptiGetVersion).
  virtual CUptiResult version(std::uint32_t* version) = 0;
  virtual CUptiResult finalize() = 0;

  // Callback API (the injection library's range control and stop path).
  virtual CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) = 0;
  virtual CUptiResult enable_domain(bool on, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain) = 0;

  // The driver's description of device `ordinal` (cuDeviceGetName and attributes), for a
  // device whose records arrived without a DEVICE record. False when the driver is not
  // loaded in this process or does not know the device.
  virtual bool device_properties(std::int32_t ordinal, DeviceProperties* out) = 0;
};

// Forwards to the CUPTI library this binary is linked with, and to the CUDA driver the
// process already loaded (dlopen RTLD_NOLOAD: never loads or initializes it).
CuptiApi& real_cupti_api();

// The first CUPTI_API_VERSION whose buffer-request callback may decline a request with a
// null buffer (CUPTI then drops records and counts them: cupti_activity.h,
// CUpti_BuffersCallbackRequestFunc). CUPTI before 12.9 crashed on a null buffer
// (libkineto; docs/sources.md#cupti-13): older libraries get a one-at-a-time emergency buffer instead.
inline constexpr std::uint32_t kCuptiVersionAcceptsNullBuffer = 130000;

}  // namespace syncscope::cupti_detail
