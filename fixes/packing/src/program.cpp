// The packing fix's operators in the step program (FixSpec::build_program_layer): the
// packed-sequence metadata each layer's attention reads (cu_seqlens, max_seqlen and
// Unsloth's [T,T] mask), kernel by kernel as the LibTorch reference step
// (src/torch_step.cpp) issues them for each variant.
#include <algorithm>
#include <any>
#include <map>

#include "step_internal.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/program/program_layer.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::fixes::packing::detail {

using namespace syncscope::program;  // the builder and the step options

namespace {

// What the variants cache across the layers of one step (and the checkpoint recompute).
struct PackingCache {
  bool meta_cached = false;
  int cached_mask_window = -1;       // "cached": the one (dtype, window) entry Unsloth keeps
  std::map<int, bool> masks_cached;  // "device": ours keeps one mask per window
};

// Unsloth's build_sdpa_packed_attention_mask, kernel by kernel (one window).
void unsloth_mask(ProgramLayerBuilder& b, int window) {
  const double T = b.tokens();
  const double eb = b.element_bytes();
  b.host_read("aten::item seq_lengths.sum()", 8);  // preceded by its reduction
  b.bookkeeping("mask.full", T * T, T * T * eb);
  b.host_read("aten::tolist seq_lengths", static_cast<double>(b.lengths().size()) * 4);
  for (int len : b.lengths()) {
    const double n = static_cast<double>(len) * len;
    b.bookkeeping("block.zeros", n, n * eb);
    b.bookkeeping("block.ones", n, n * 4);
    b.bookkeeping("block.triu", n, n * 8);
    b.bookkeeping("block.to_bool", n, n * 5);
    b.bookkeeping("block.clone", n, n * 2 * eb);
    b.bookkeeping("block.masked_fill_", n, n * (eb + 1));
    if (window > 0 && len > window) {
      b.bookkeeping("window.arange", len, len * 8.0);
      b.bookkeeping("window.dist", n, n * 8 + len * 16.0);
      b.bookkeeping("window.ge", n, n * 9);
      b.bookkeeping("window.clone", n, n * 2 * eb);
      b.bookkeeping("window.masked_fill_", n, n * (eb + 1));
    }
    b.bookkeeping("mask.copy_block", n, n * 2 * eb);
  }
}

}  // namespace

void program_layer(ProgramLayerBuilder& b, ProgramPoint at) {
  if (at != ProgramPoint::BeforeAttention) return;
  std::any& state = b.fix_state(fixes::packing::kFix);
  if (!state.has_value()) state = PackingCache{};
  auto& cache = std::any_cast<PackingCache&>(state);
  const fixes::packing::Variant v = variant(b.options());
  // Checked against step_word_keys by program::validate, which build_step_program calls.
  const std::string form = rebuild_form(b.options());
  const int window = layer_sliding_window(b.options().model, b.layer());
  const double N = static_cast<double>(b.lengths().size());
  const double T = b.tokens();
  b.push_range("packing_metadata");
  if ((v == fixes::packing::Variant::Rebuild || v == fixes::packing::Variant::Cached) && form == "unsloth_sdpa_mask") {
    // Unsloth's pre-cache code, op by op (unsloth_rebuild.cpp); the same cache keys below.
    const bool meta_miss = !(v == fixes::packing::Variant::Cached && cache.meta_cached);
    const bool mask_miss = !(v == fixes::packing::Variant::Cached && cache.cached_mask_window == window);
    unsloth_precache_rebuild(b, window, meta_miss, mask_miss);
    cache.meta_cached = true;
    cache.cached_mask_window = window;
  } else if (v == fixes::packing::Variant::Rebuild || v == fixes::packing::Variant::Cached) {
    const bool meta_hit = v == fixes::packing::Variant::Cached && cache.meta_cached;
    if (!meta_hit) {
      // get_packed_info_from_kwargs: cu_seqlens and max_seqlen (lengths.max().item()).
      b.bookkeeping("cu_seqlens.zeros", N + 1, (N + 1) * 4);
      b.bookkeeping("cu_seqlens.cumsum", N, N * 8);
      b.bookkeeping("lengths.max", N, N * 4);
      b.host_read("aten::item lengths.max()", 4);
      cache.meta_cached = true;
    }
    // Unsloth's _SDPA_MASK_CACHE: one entry per device keyed by (dtype, sliding window), so
    // alternating windows (gpt-oss) rebuild the mask in every layer.
    const bool mask_hit = v == fixes::packing::Variant::Cached && cache.cached_mask_window == window;
    if (!mask_hit) {
      b.bookkeeping("seq_lengths.sum", N, N * 4);
      unsloth_mask(b, window);
      cache.cached_mask_window = window;
    }
  } else {
    // Ours: lengths (and max_seqlen) known on the host from the packer; one kernel builds
    // cu_seqlens and the mask on the device. No host read.
    if (cache.masks_cached.count(window) == 0) {
      b.bookkeeping("syncscope::packed_mask_kernel", T * T, T * T * b.element_bytes() + (2 * N + 1) * 4);
      cache.masks_cached[window] = true;
    }
  }
  b.pop_range();
}

}  // namespace syncscope::fixes::packing::detail
