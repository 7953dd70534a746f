// The packing baseline as Unsloth's pre-cache code runs it (fixes.packing.rebuild_form:
// unsloth_sdpa_mask): every attention layer calls get_packed_info_from_kwargs and
// build_sdpa_packed_attention_mask (unsloth/utils/packing.py; docs/sources.md#unsloth-precache-rebuild),
// which before PR 4243 had no cache, so each call redoes, in eager PyTorch from Python:
//
//   lengths = seq_lengths.to(device, dtype=int32, non_blocking=True)   # the collator's CPU tensor
//   cu_seqlens = torch.zeros(N + 1); torch.cumsum(lengths, out=cu_seqlens[1:])
//   max_seqlen = int(lengths.max().item())                             # sync 1
//   total = int(seq_lengths.sum().item())                              # sync 2
//   mask = torch.full((total, total), -inf, dtype)
//   for length in seq_lengths.tolist():                                # sync 3
//       block = torch.zeros((l, l), dtype); upper = torch.triu(torch.ones((l, l)), 1).bool()
//       block = block.masked_fill(upper, -inf)
//       [sliding window: arange, dist = idx[:, None] - idx[None, :], dist >= w, masked_fill]
//       mask[o:o+l, o:o+l] = block
//   mask.unsqueeze(0).unsqueeze(0)
//
// Each framework op that launches GPU work starts a framework op (Op::continues_op false),
// so the simulator charges it the GPU profile's host cost per op (host_launch_op_ns up to its
// launch call, host_after_launch_ns after it): the shipped profiles carry the eager-PyTorch
// cost fitted from our H200 trace (20.48 + 3.65 us; model/README.md, "GPU profiles"), one
// source for every op of the step. A scenario's `host: cpp` zeroes those costs for these ops
// too: the form then runs as a C++ host would. View ops (slices, unsqueeze) and the Python
// loop's own bookkeeping are charged nothing: the form is a lower bound on the host time of
// the code it follows.
#include "step_internal.hpp"

namespace syncscope::fixes::packing::detail {

using namespace syncscope::program;  // the builder and its ops

namespace {

// A framework op of its own: the profile's per-op host cost applies (see above).
program::Op& eager(program::Op& op) {
  op.continues_op = false;
  return op;
}

}  // namespace

void unsloth_precache_rebuild(ProgramLayerBuilder& b, int window, bool metadata, bool mask) {
  const double N = static_cast<double>(b.lengths().size());
  const double T = b.tokens();
  const double eb = b.element_bytes();
  if (metadata) {
    // get_packed_info_from_kwargs: the collator's CPU int32 lengths copied to the device
    // (pageable memory, non_blocking: staged, no sync), cu_seqlens, then max().item().
    eager(b.host_to_device("aten::to seq_lengths", N * 4));
    eager(b.bookkeeping("cu_seqlens.zeros", N + 1, (N + 1) * 4));
    eager(b.bookkeeping("cu_seqlens.cumsum", N, N * 8));
    eager(b.bookkeeping("lengths.max", N, N * 4));
    eager(b.host_read("aten::item lengths.max()", 4));
  }
  if (!mask) return;
  // build_sdpa_packed_attention_mask.
  eager(b.bookkeeping("seq_lengths.sum", N, N * 4));
  eager(b.host_read("aten::item seq_lengths.sum()", 8));
  eager(b.bookkeeping("mask.full", T * T, T * T * eb));
  eager(b.host_read("aten::tolist seq_lengths", N * 4));
  for (int len : b.lengths()) {
    const double n = static_cast<double>(len) * len;
    eager(b.bookkeeping("block.zeros", n, n * eb));
    eager(b.bookkeeping("block.ones", n, n * 4));  // torch.ones without dtype: fp32
    eager(b.bookkeeping("block.triu", n, n * 8));
    eager(b.bookkeeping("block.to_bool", n, n * 5));
    // Tensor.masked_fill (not in place): a clone, then masked_fill_, one framework op.
    eager(b.bookkeeping("block.clone", n, n * 2 * eb));
    b.bookkeeping("block.masked_fill_", n, n * (eb + 1)).continues_op = true;
    if (window > 0 && len > window) {
      eager(b.bookkeeping("window.arange", len, len * 8.0));
      eager(b.bookkeeping("window.dist", n, n * 8 + len * 16.0));
      eager(b.bookkeeping("window.ge", n, n * 9));
      eager(b.bookkeeping("window.clone", n, n * 2 * eb));
      b.bookkeeping("window.masked_fill_", n, n * (eb + 1)).continues_op = true;
    }
    eager(b.bookkeeping("mask.copy_block", n, n * 2 * eb));  // mask[o:o+l, o:o+l] = block
  }
}

}  // namespace syncscope::fixes::packing::detail
