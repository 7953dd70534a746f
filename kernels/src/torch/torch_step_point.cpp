// StepEvent (torch_step_point.hpp): a CUDA event for a fix's LibTorch hook, through the
// plain C interface of cuda/cuda_api.h; no-ops on CPU.
#include "syncscope/core/error.hpp"
#include "torch/internal.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "cuda/cuda_api.h"
#endif

namespace syncscope::kernels::detail {

StepEvent::StepEvent(bool cuda) {
  if (!cuda) return;
#ifdef SYNCSCOPE_KERNELS_CUDA
  check_cuda(ss_cuda_event_create(&event_, 0), "cudaEventCreateWithFlags(cudaEventDisableTiming)");
#else
  SYNCSCOPE_THROW_IF(true, "a CUDA event in the LibTorch step needs a CUDA build of syncscope");
#endif
}

StepEvent::~StepEvent() {
#ifdef SYNCSCOPE_KERNELS_CUDA
  // A destructor must not throw; the calls that used the event were checked.
  if (event_ != nullptr) (void)ss_cuda_event_destroy(event_);
#endif
}

void StepEvent::record() {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (event_ != nullptr) check_cuda(ss_cuda_event_record(event_, nullptr), "cudaEventRecord(main)");
#endif
}

void StepEvent::synchronize() {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (event_ != nullptr) check_cuda(ss_cuda_event_synchronize(event_), "cudaEventSynchronize");
#endif
}

}  // namespace syncscope::kernels::detail
