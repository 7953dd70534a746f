#include "cupti_api.hpp"

#include <dlfcn.h>

namespace syncscope::cupti_detail {
namespace {

// The driver entry points used for a device's description, looked up in the libcuda the
// process already loaded (the traced program's, which initialized it). Names and
// signatures from cuda.h (CUDA 13.0); cuDeviceTotalMem is exported as _v2.
using DeviceGetFn = CUresult (*)(CUdevice*, int);
using DeviceGetNameFn = CUresult (*)(char*, int, CUdevice);
using DeviceGetAttributeFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
using DeviceTotalMemFn = CUresult (*)(std::size_t*, CUdevice);

class RealCuptiApi final : public CuptiApi {
 public:
  CUptiResult activity_enable(CUpti_ActivityKind kind) override { return cuptiActivityEnable(kind); }
  CUptiResult activity_disable(CUpti_ActivityKind kind) override { return cuptiActivityDisable(kind); }
  CUptiResult enable_runtime_api(CUpti_CallbackId cbid, bool on) override {
    return cuptiActivityEnableRuntimeApi(cbid, on ? 1 : 0);
  }
  CUptiResult enable_driver_api(CUpti_CallbackId cbid, bool on) override {
    return cuptiActivityEnableDriverApi(cbid, on ? 1 : 0);
  }
  CUptiResult enable_all_sync_records(bool on) override { return cuptiActivityEnableAllSyncRecords(on ? 1 : 0); }
  CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                 CUpti_BuffersCallbackCompleteFunc complete) override {
    return cuptiActivityRegisterCallbacks(request, complete);
  }
  CUptiResult register_timestamp_callback(CUpti_TimestampCallbackFunc callback) override {
    return cuptiActivityRegisterTimestampCallback(callback);
  }
  CUptiResult flush_all(std::uint32_t flag) override { return cuptiActivityFlushAll(flag); }
  CUptiResult dropped_records(CUcontext context, std::uint32_t stream, std::size_t* dropped) override {
    return cuptiActivityGetNumDroppedRecords(context, stream, dropped);
  }
  CUptiResult version(std::uint32_t* v) override { return cuptiGetVersion(v); }
  CUptiResult finalize() override { return cuptiFinalize(); }
  CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) override {
    return cuptiSubscribe(subscriber, callback, userdata);
  }
  CUptiResult enable_domain(bool on, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain) override {
    return cuptiEnableDomain(on ? 1 : 0, subscriber, domain);
  }

  bool device_properties(std::int32_t ordinal, DeviceProperties* out) override {
    void* h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
    if (h == nullptr) return false;
    auto get = reinterpret_cast<DeviceGetFn>(dlsym(h, "cuDeviceGet"));
    auto get_name = reinterpret_cast<DeviceGetNameFn>(dlsym(h, "cuDeviceGetName"));
    auto attribute = reinterpret_cast<DeviceGetAttributeFn>(dlsym(h, "cuDeviceGetAttribute"));
    auto total_mem = reinterpret_cast<DeviceTotalMemFn>(dlsym(h, "cuDeviceTotalMem_v2"));
    bool ok = false;
    CUdevice dev = 0;
    char name[256] = {};
    if (get != nullptr && get_name != nullptr && get(&dev, ordinal) == CUDA_SUCCESS &&
        get_name(name, static_cast<int>(sizeof name - 1), dev) == CUDA_SUCCESS) {
      ok = true;
      out->id = ordinal;
      out->name = name;
      auto attr = [&](CUdevice_attribute a) {
        int v = 0;
        return attribute != nullptr && attribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
      };
      out->compute_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
      out->compute_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
      out->sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
      out->max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
      out->max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
      out->warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
      out->regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
      out->regs_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
      out->shared_mem_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
      out->shared_mem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
      out->shared_mem_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
      std::size_t bytes = 0;
      if (total_mem != nullptr && total_mem(&bytes, dev) == CUDA_SUCCESS) out->total_memory_bytes = bytes;
    }
    dlclose(h);  // RTLD_NOLOAD took a reference only; the driver stays loaded
    return ok;
  }
};

}  // namespace

CuptiApi& real_cupti_api() {
  static RealCuptiApi* api = new RealCuptiApi();  // never destroyed: used from CUPTI callbacks
  return *api;
}

}  // namespace syncscope::cupti_detail
