// A layer choreography's copy primitives (program::Choreography, whichever fix built it:
// checkpointed layer inputs copied to host slots and reloaded into a device ring). On CUDA:
// one non-blocking copy stream (a default one would synchronize implicitly with the legacy
// default stream LibTorch uses and remove all overlap, docs/sources.md#offload-double-buffer),
// timing-free events, pinned host slots, cudaMemcpyAsync on raw pointers. The main stream is the legacy default stream
// (NULL in cuda_api.h), where LibTorch queues its kernels. On CPU the same calls are plain synchronous copies.
#include <fmt/format.h>

#include "syncscope/core/error.hpp"
#include "torch/internal.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "cuda/cuda_api.h"
#endif

namespace syncscope::kernels::detail {

CopyStream::CopyStream(const program::Choreography& choreo, std::int64_t rows, std::int64_t cols, Ctx& ctx)
    : cuda_(ctx.cuda) {
  const auto host_opts = torch::TensorOptions().dtype(ctx.dtype).pinned_memory(ctx.cuda);
  for (int l = 0; l < choreo.plan.offloaded(); ++l) host_.push_back(torch::empty({rows, cols}, host_opts));
  for (int b = 0; b < choreo.plan.ring_buffers; ++b) ring_.push_back(torch::empty({rows, cols}, ctx.opts()));
  if (!cuda_) return;
#ifdef SYNCSCOPE_KERNELS_CUDA
  check_cuda(ss_cuda_stream_create_nonblocking(&copy_stream_), "cudaStreamCreateWithFlags(cudaStreamNonBlocking)");
  events_.assign(static_cast<std::size_t>(choreo.events.num_events), nullptr);
  for (void*& e : events_) check_cuda(ss_cuda_event_create(&e, 0), "cudaEventCreateWithFlags(cudaEventDisableTiming)");
#else
  SYNCSCOPE_THROW_IF(true, "a layer choreography's copy stream on CUDA needs a CUDA build of syncscope");
#endif
}

CopyStream::~CopyStream() {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (!cuda_) return;
  // Copies may still read or write our buffers: drain before they are freed. Errors are
  // ignored here (a destructor must not throw); the step already checked every call.
  (void)ss_cuda_device_synchronize();
  for (void* e : events_)
    if (e) (void)ss_cuda_event_destroy(e);
  if (copy_stream_) (void)ss_cuda_stream_destroy(copy_stream_);
#endif
}

#ifdef SYNCSCOPE_KERNELS_CUDA
#define SS_EVENT(i) events_.at(static_cast<std::size_t>(i))
#endif

void CopyStream::record_main(int event) {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (cuda_) check_cuda(ss_cuda_event_record(SS_EVENT(event), nullptr), "cudaEventRecord(main)");
#endif
  (void)event;
}

void CopyStream::record_copy(int event) {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (cuda_) check_cuda(ss_cuda_event_record(SS_EVENT(event), copy_stream_), "cudaEventRecord(copy)");
#endif
  (void)event;
}

void CopyStream::copy_waits(int event) {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (cuda_) check_cuda(ss_cuda_stream_wait_event(copy_stream_, SS_EVENT(event)), "cudaStreamWaitEvent(copy)");
#endif
  (void)event;
}

void CopyStream::main_waits(int event) {
#ifdef SYNCSCOPE_KERNELS_CUDA
  if (cuda_) check_cuda(ss_cuda_stream_wait_event(nullptr, SS_EVENT(event)), "cudaStreamWaitEvent(main)");
#endif
  (void)event;
}

void CopyStream::to_host(int layer, const torch::Tensor& input) {
  torch::Tensor& dst = host_.at(static_cast<std::size_t>(layer));
  SYNCSCOPE_THROW_IF(!input.is_contiguous() || input.sizes() != dst.sizes() || input.scalar_type() != dst.scalar_type(),
                     fmt::format("offload layer {}: input is not a contiguous tensor of the slot's shape", layer));
  if (!cuda_) {
    torch::NoGradGuard no_grad;
    dst.copy_(input);
    return;
  }
#ifdef SYNCSCOPE_KERNELS_CUDA
  check_cuda(ss_cuda_memcpy_async(dst.data_ptr(), input.data_ptr(), static_cast<size_t>(input.nbytes()), 2,
                                  copy_stream_),
             "cudaMemcpyAsync(D2H offload)");
#endif
}

void CopyStream::reload(int layer, int buffer) {
  const torch::Tensor& src = host_.at(static_cast<std::size_t>(layer));
  torch::Tensor& dst = ring_.at(static_cast<std::size_t>(buffer));
  if (!cuda_) {
    torch::NoGradGuard no_grad;
    dst.copy_(src);
    return;
  }
#ifdef SYNCSCOPE_KERNELS_CUDA
  check_cuda(ss_cuda_memcpy_async(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(src.nbytes()), 1, copy_stream_),
             "cudaMemcpyAsync(H2D reload)");
#endif
}

}  // namespace syncscope::kernels::detail
