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
// Each framework op that launches GPU work is charged an eager-PyTorch host cost on the op
// itself (kEagerOpHostNs), and marked continues_op so that a GPU profile fitted from a trace
// (calibrate --from-trace) does not charge its own per-op host cost on top. View ops
// (slices, unsqueeze) and the Python loop's own bookkeeping are charged nothing: the form
// is a lower bound on the host time of the code it follows.
#include "fix_program_hooks.hpp"

#include "syncscope/kernels/program_layer.hpp"

namespace syncscope::program::detail {

namespace {

// Host time of one eager-PyTorch op that launches a kernel, called from Python: 21.3 us up
// to its launch call and 3.7 us after it (the launch call itself is the profile's
// launch_overhead_ns, charged by the simulator). Measured: `calibrate --from-trace` on
// tests/fixtures/torch/item_loop_l8_h200.json.gz (torch.profiler, H200, eager Python;
// model/README.md, "The simulator against a measured trace"). One GPU and one host, under
// the profiler: a lead for the B200 host, not a measurement of it.
constexpr Ns kEagerOpHostNs = 21'300 + 3'700;

program::Op& eager(program::Op& op) {
  op.host_ns = kEagerOpHostNs;
  op.continues_op = true;
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

}  // namespace syncscope::program::detail
