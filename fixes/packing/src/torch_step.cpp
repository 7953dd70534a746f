// Packed-sequence metadata, three ways (docs/sources.md#packing-cache "Packing metadata cache"; Unsloth
// unsloth/utils/packing.py): the baseline rebuilds it in every attention layer with three
// host reads, the cache builds it once per batch, ours builds it without any host read. The
// fix's LibTorch hook at BeforeAttention (FixSpec::torch_layer_point) runs the variant the step
// options hold, the operations its program hook (program.cpp) describes.
#include "syncscope/fixes/packing/torch_step.hpp"

#include <any>
#include <limits>
#include <memory>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/fixes/packing/packing.hpp"
#include "syncscope/fixes/packing/reference.hpp"

#ifdef SYNCSCOPE_KERNELS_CUDA
#include "cuda/cuda_api.h"  // SS_DTYPE_*
#include "syncscope/fixes/packing/packing_mask.h"
#endif

namespace syncscope::fixes::packing {

using kernels::detail::Ctx;
using kernels::detail::PackedBatch;
using kernels::detail::RangeGuard;
using kernels::detail::read_item_int;
using kernels::detail::read_list_int;

namespace {

torch::Tensor host_i32(const std::vector<std::int32_t>& v) {
  return torch::from_blob(const_cast<std::int32_t*>(v.data()), {static_cast<std::int64_t>(v.size())}, torch::kInt32)
      .clone();
}

}  // namespace

// get_packed_info_from_kwargs: lengths, cu_seqlens, max_seqlen (= lengths.max().item()).
void PackingMetadata::unsloth_metadata(const PackedBatch& batch, Ctx& ctx) {
  const torch::Tensor lengths = batch.seq_lengths.to(torch::kInt32);  // a no-op: already int32
  const std::int64_t n = lengths.numel();
  torch::Tensor cu = torch::zeros({n + 1}, torch::TensorOptions().device(ctx.device).dtype(torch::kInt32));
  torch::Tensor tail = cu.narrow(0, 1, n);  // cumsum(lengths, out=cu_seqlens[1:])
  torch::cumsum_out(tail, lengths, 0, torch::kInt32);
  max_seqlen_ = read_item_int(lengths.max(), reads(ctx));
  cu_seqlens_ = cu;
}

// build_sdpa_packed_attention_mask, operation by operation.
torch::Tensor PackingMetadata::unsloth_mask(const PackedBatch& batch, int window, Ctx& ctx) {
  const std::int64_t total = read_item_int(batch.seq_lengths.sum(), reads(ctx));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  torch::Tensor mask = torch::full({total, total}, neg_inf, ctx.opts());
  std::int64_t offset = 0;
  for (std::int64_t len : read_list_int(batch.seq_lengths, reads(ctx))) {
    if (len <= 0) continue;
    torch::Tensor block = torch::zeros({len, len}, ctx.opts());
    const torch::Tensor upper =
        torch::triu(torch::ones({len, len}, torch::TensorOptions().device(ctx.device)), 1).to(torch::kBool);
    block = block.masked_fill(upper, neg_inf);
    if (window > 0 && len > window) {
      const torch::Tensor idx = torch::arange(len, torch::TensorOptions().device(ctx.device).dtype(torch::kLong));
      const torch::Tensor dist = idx.unsqueeze(1) - idx.unsqueeze(0);
      block = block.masked_fill(dist >= window, neg_inf);
    }
    mask.narrow(0, offset, len).narrow(1, offset, len).copy_(block);
    offset += len;
  }
  return mask.unsqueeze(0).unsqueeze(0);
}

torch::Tensor PackingMetadata::device_mask(const PackedBatch& batch, int window, Ctx& ctx) {
  const std::int64_t total = batch.total;
  // max_seqlen is known on the host from the packer: no read back.
  max_seqlen_ = 0;
  for (std::int32_t len : batch.host_lengths) max_seqlen_ = std::max<std::int64_t>(max_seqlen_, len);
  if (ctx.cuda) {
#ifdef SYNCSCOPE_KERNELS_CUDA
    const auto n = static_cast<std::int64_t>(batch.host_lengths.size());
    torch::Tensor cu = torch::empty({n + 1}, torch::TensorOptions().device(ctx.device).dtype(torch::kInt32));
    torch::Tensor mask = torch::empty({total, total}, ctx.opts());
    const int code = ctx.dtype == torch::kFloat32    ? SS_DTYPE_F32
                     : ctx.dtype == torch::kBFloat16 ? SS_DTYPE_BF16
                                                     : SS_DTYPE_F16;
    // Launched on the legacy default stream, after the lengths' upload queued there.
    kernels::detail::check_cuda(ss_packed_mask(batch.seq_lengths.data_ptr<std::int32_t>(), static_cast<int>(n),
                                               static_cast<int>(total), window, cu.data_ptr<std::int32_t>(),
                                               mask.data_ptr(), code, nullptr),
                                "ss_packed_mask");
    cu_seqlens_ = cu;
    return mask.unsqueeze(0).unsqueeze(0);
#else
    SYNCSCOPE_THROW_IF(true, "packing device variant on CUDA needs a CUDA build of syncscope");
#endif
  }
  // CPU: the same computation from the host lengths (the CPU reference of the kernel).
  const PackedMetadata meta = packed_metadata(batch.host_lengths);
  cu_seqlens_ = host_i32(meta.cu_seqlens);
  std::vector<float> m = packed_causal_mask(batch.host_lengths, window);
  torch::Tensor mask = torch::from_blob(m.data(), {total, total}, torch::kFloat32).to(ctx.dtype).clone();
  return mask.unsqueeze(0).unsqueeze(0);
}

torch::Tensor PackingMetadata::mask(const PackedBatch& batch, int window, Ctx& ctx) {
  RangeGuard range(*ctx.ranges, "packing_metadata");
  if (variant_ == Variant::Rebuild) {
    ++*ctx.metadata_builds;
    unsloth_metadata(batch, ctx);
    generation_ = batch.generation;
    return unsloth_mask(batch, window, ctx);
  }
  if (generation_ != batch.generation) {  // a new batch: drop everything cached
    generation_ = batch.generation;
    masks_.clear();
    cached_mask_ = torch::Tensor();
    cu_seqlens_ = torch::Tensor();
    if (variant_ == Variant::Cached) {
      ++*ctx.metadata_builds;
      unsloth_metadata(batch, ctx);
    }
  }
  if (variant_ == Variant::Cached) {
    // Unsloth's _SDPA_MASK_CACHE: one entry per device, hit only for the same batch object
    // and the same (dtype, sliding window); another window replaces it. With gpt-oss's
    // alternating windows every layer rebuilds (2 host reads each).
    if (cached_mask_.defined() && cached_window_ == window) return cached_mask_;
    ++*ctx.metadata_builds;
    cached_mask_ = unsloth_mask(batch, window, ctx);
    cached_window_ = window;
    return cached_mask_;
  }
  auto it = masks_.find(window);
  if (it != masks_.end()) return it->second;
  ++*ctx.metadata_builds;
  torch::Tensor m = device_mask(batch, window, ctx);  // ours: one mask per window, built once per batch
  masks_.emplace(window, m);
  return m;
}

std::vector<std::int32_t> PackingMetadata::cu_seqlens() const {
  if (!cu_seqlens_.defined()) return {};
  const torch::Tensor h = cu_seqlens_.to(torch::kCPU).contiguous();
  const auto* p = h.data_ptr<std::int32_t>();
  return {p, p + h.numel()};
}

// The step's host reads of this fix (SyncCounts::by_fix; std::map: the reference stays valid).
int& PackingMetadata::reads(Ctx& ctx) const { return ctx.syncs->by_fix[kFix]; }

namespace {

// The hook's state across layers and steps (TorchLayerContext::state; std::any needs a
// copyable value, so a shared_ptr).
PackingMetadata& metadata_of(TorchLayerContext& c) {
  std::any& a = c.state(kFix);
  if (!a.has_value()) a = std::make_shared<PackingMetadata>(variant(c.options));
  return *std::any_cast<std::shared_ptr<PackingMetadata>&>(a);
}

void torch_layer_point(TorchLayerContext& c, program::ProgramPoint at) {
  if (at != program::ProgramPoint::BeforeAttention) return;
  c.attention_mask = metadata_of(c).mask(c.batch, c.attention_window, c.device);
}

}  // namespace

void register_packing_torch_step() {
  register_packing_fix_step();
  mutable_fix_spec(kFix).torch_layer_point = torch_layer_point;
}

std::vector<std::int32_t> cached_cu_seqlens(const kernels::ReferenceStep& step) {
  const std::any* a = step.fix_state(kFix);
  if (a == nullptr) return {};
  return std::any_cast<const std::shared_ptr<PackingMetadata>&>(*a)->cu_seqlens();
}

}  // namespace syncscope::fixes::packing
