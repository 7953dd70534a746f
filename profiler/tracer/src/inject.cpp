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
//
// This file holds the C entry points and decodes CUPTI's callback data; the logic (range
// control, the stop path, the trace at exit) is Injection (inject_control.hpp), tested on
// CPU with a fake CUPTI.
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cupti_session.hpp"
#include "inject_control.hpp"

#include <generated_nvtx_meta.h>

namespace {

using syncscope::cupti_detail::Injection;
using syncscope::cupti_detail::Session;

Injection& injection() {
  // Never destroyed: used from atexit and CUPTI callbacks.
  static Injection* i = new Injection(Session::instance(), syncscope::cupti_detail::real_cupti_api());
  return *i;
}

std::atomic<bool> g_initialized{false};

bool is_sync_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020;
  }
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize || cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2 ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz || cbid == CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize;
}

const char* ascii_message(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return nullptr;
  return a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : nullptr;
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  try {
    Injection& inj = injection();
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      const auto* r = static_cast<const CUpti_ResourceData*>(data);
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) inj.on_context_created(r->context);
      else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) inj.on_context_destroy_starting();
      return;
    }
    if (domain == CUPTI_CB_DOMAIN_NVTX) {
      const auto* nv = static_cast<const CUpti_NvtxData*>(data);
      switch (cbid) {
        case CUPTI_CBID_NVTX_nvtxRangePushA:
          inj.on_range_open(static_cast<const nvtxRangePushA_params*>(nv->functionParams)->message, true, 0);
          break;
        case CUPTI_CBID_NVTX_nvtxRangePushEx:
          inj.on_range_open(ascii_message(static_cast<const nvtxRangePushEx_params*>(nv->functionParams)->eventAttrib),
                            true, 0);
          break;
        case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
          inj.on_range_open(ascii_message(
                                static_cast<const nvtxDomainRangePushEx_params*>(nv->functionParams)->core.eventAttrib),
                            true, 0);
          break;
        case CUPTI_CBID_NVTX_nvtxRangePushW: inj.on_range_open(nullptr, true, 0); break;
        case CUPTI_CBID_NVTX_nvtxRangePop:
        case CUPTI_CBID_NVTX_nvtxDomainRangePop: inj.on_push_pop_close(); break;
        case CUPTI_CBID_NVTX_nvtxRangeStartA:
        case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
          const char* name = nullptr;
          if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA)
            name = static_cast<const nvtxRangeStartA_params*>(nv->functionParams)->message;
          else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx)
            name = ascii_message(static_cast<const nvtxRangeStartEx_params*>(nv->functionParams)->eventAttrib);
          else
            name =
                ascii_message(static_cast<const nvtxDomainRangeStartEx_params*>(nv->functionParams)->core.eventAttrib);
          const auto* id = static_cast<const nvtxRangeId_t*>(nv->functionReturnValue);
          inj.on_range_open(name, false, id != nullptr ? *id : 0);
          break;
        }
        case CUPTI_CBID_NVTX_nvtxRangeEnd:
        case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
          const nvtxRangeId_t id = cbid == CUPTI_CBID_NVTX_nvtxRangeEnd
                                       ? static_cast<const nvtxRangeEnd_params*>(nv->functionParams)->id
                                       : static_cast<const nvtxDomainRangeEnd_params*>(nv->functionParams)->core.id;
          inj.on_start_end_close(id);
          break;
        }
        default: break;
      }
      return;
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      const auto* api = static_cast<const CUpti_CallbackData*>(data);
      if (api->callbackSite == CUPTI_API_EXIT) inj.on_api_exit(is_sync_api(domain, cbid));
    }
  } catch (...) {
    // Never unwind into CUDA.
  }
}

void write_trace_at_exit() noexcept { injection().write_trace_at_exit(); }
void mark_forked_child() { injection().mark_forked_child(); }

int initialize() noexcept {
  if (g_initialized.exchange(true)) return 1;
  try {
    Injection& inj = injection();
    const auto config = inj.config_from_environment();
    // Registered first, so that a run where CUPTI refuses still ends with a valid (empty)
    // trace that says why.
    std::atexit(&write_trace_at_exit);
    pthread_atfork(nullptr, nullptr, &mark_forked_child);
    inj.initialize(config, &on_callback);
  } catch (...) {
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
      injection().log_once("nvtx-init", "libcupti exports no InitializeInjectionNvtx2: NVTX ranges are not recorded");
      return 0;
    }
    return fn(get_export_table);
  } catch (...) {
    return 0;
  }
}

}  // extern "C"
