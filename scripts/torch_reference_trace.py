#!/usr/bin/env python3
"""Record a torch.profiler (Kineto) trace of a Hugging Face-style Qwen3 training step
over packed sequences, with random weights, for use as a test fixture that our own
code did not write.

The attention rebuilds the packed-sequence metadata in every layer, as Unsloth's
packing code does when its caches miss (unsloth/utils/packing.py, the baseline of PR
4243), operation for operation: int32 lengths -> cu_seqlens by cumsum into [1:],
`max_seqlen = lengths.max().item()` (sync 1), then the SDPA mask: `seq_lengths.sum().item()`
(sync 2), an all -inf [T, T] in the attention dtype, and per sequence of
`seq_lengths.tolist()` (sync 3) a causal block copied onto the diagonal. So a trace of L
layers holds 3*L metadata syncs per forward; syncscope's `analyze` must find them.

Runs on a CUDA machine with PyTorch; uses transformers' Qwen3ForCausalLM when it is
importable (the attention is plugged in through AttentionInterface), otherwise an
equivalent plain-PyTorch Qwen3 decoder. Which one ran is written into the trace's
`traceName` and printed.

Usage: torch_reference_trace.py --out DIR [--layers 28] [--tokens 4096] [--steps 2]
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# Qwen3-0.6B config.json (huggingface.co/Qwen/Qwen3-0.6B).
QWEN3_06B = dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072,
                 num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8,
                 head_dim=128, rms_norm_eps=1e-6, rope_theta=1000000.0,
                 max_position_embeddings=40960, tie_word_embeddings=True)

BATCH = {"seq_lengths": None}  # the packer's lengths for the current batch (on the GPU)


def packed_lengths(total, seed, lo=64, hi=1024):
    g = torch.Generator().manual_seed(seed)
    out, left = [], total
    while left > 0:
        n = int(torch.randint(lo, hi + 1, (1,), generator=g))
        n = min(n, left)
        out.append(n)
        left -= n
    return out


def rebuild_metadata(seq_lengths, dtype, device, sliding_window=None):
    """One layer's uncached rebuild, operation for operation as Unsloth's packing code runs
    it when its caches miss (unsloth/utils/packing.py: get_packed_info_from_kwargs, then
    build_sdpa_packed_attention_mask): three host reads (syncs) and a dense [1,1,T,T]
    additive mask in the attention dtype, built block by block from the lengths list."""
    with torch.profiler.record_function("packed_metadata_rebuild"):
        # Metadata: int32 lengths on the device (a no-op copy when already there), their
        # prefix sums written into cu_seqlens[1:], and the longest length read back.
        lens_dev = seq_lengths.to(device=device, dtype=torch.int32, non_blocking=True)
        cu_seqlens = torch.zeros(lens_dev.numel() + 1, dtype=torch.int32, device=device)
        torch.cumsum(lens_dev, dim=0, dtype=torch.int32, out=cu_seqlens[1:])
        max_seqlen = int(lens_dev.max().item())                 # sync 1
        # The SDPA mask: total tokens read back, an all -inf [T, T], then per sequence a
        # causal block (and the sliding window where one applies) copied onto the diagonal.
        n_tokens = int(seq_lengths.sum().item())                # sync 2
        neg = float("-inf")
        mask = torch.full((n_tokens, n_tokens), neg, dtype=dtype, device=device)
        start = 0
        for n in seq_lengths.tolist():                         # sync 3
            n = int(n)
            if n <= 0:
                continue
            blk = torch.zeros((n, n), dtype=dtype, device=device)
            above = torch.triu(torch.ones((n, n), device=device), diagonal=1).bool()
            blk = blk.masked_fill(above, neg)
            if sliding_window is not None and sliding_window > 0 and n > sliding_window:
                i = torch.arange(n, device=device)
                blk = blk.masked_fill((i.unsqueeze(1) - i.unsqueeze(0)) >= sliding_window, neg)
            mask[start:start + n, start:start + n] = blk
            start += n
        return (lens_dev, cu_seqlens, max_seqlen), mask.unsqueeze(0).unsqueeze(0)


def packed_position_ids(lens, device):
    return torch.cat([torch.arange(n, device=device) for n in lens]).unsqueeze(0)


# ---- plain-PyTorch fallback: the same architecture as transformers' Qwen3 ----------------
class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + self.eps)).to(x.dtype) * self.w


def rope(x, pos, theta):
    d = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, device=x.device).float() / d))
    f = pos.float()[..., None] * inv
    cos, sin = torch.cat([f, f], -1).cos().to(x.dtype), torch.cat([f, f], -1).sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, nh, kv, hd, im = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"],
                             c["head_dim"], c["intermediate_size"])
        self.nh, self.kv, self.hd, self.theta = nh, kv, hd, c["rope_theta"]
        self.ln1, self.ln2 = RMSNorm(h, c["rms_norm_eps"]), RMSNorm(h, c["rms_norm_eps"])
        self.q, self.k = nn.Linear(h, nh * hd, bias=False), nn.Linear(h, kv * hd, bias=False)
        self.v, self.o = nn.Linear(h, kv * hd, bias=False), nn.Linear(nh * hd, h, bias=False)
        self.qn, self.kn = RMSNorm(hd, c["rms_norm_eps"]), RMSNorm(hd, c["rms_norm_eps"])
        self.gate, self.up = nn.Linear(h, im, bias=False), nn.Linear(h, im, bias=False)
        self.down = nn.Linear(im, h, bias=False)

    def forward(self, x, pos):
        B, T, _ = x.shape
        y = self.ln1(x)
        q = self.qn(self.q(y).view(B, T, self.nh, self.hd)).transpose(1, 2)
        k = self.kn(self.k(y).view(B, T, self.kv, self.hd)).transpose(1, 2)
        v = self.v(y).view(B, T, self.kv, self.hd).transpose(1, 2)
        q, k = rope(q, pos, self.theta), rope(k, pos, self.theta)
        _, mask = rebuild_metadata(BATCH["seq_lengths"], q.dtype, q.device)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, -1))
        y = self.ln2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class PlainQwen3(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.emb = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, input_ids, position_ids, labels):
        x = self.emb(input_ids)
        for i, layer in enumerate(self.layers):
            with torch.profiler.record_function(f"layer_{i:02d}"):
                x = layer(x, position_ids)
        logits = F.linear(self.norm(x), self.emb.weight)
        return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), labels[:, 1:].flatten())


def build_hf(c):
    from transformers import Qwen3Config, Qwen3ForCausalLM, AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    def packed_rebuild_attention(module, query, key, value, attention_mask, **kw):
        _, mask = rebuild_metadata(BATCH["seq_lengths"], query.dtype, query.device)
        kw.pop("is_causal", None)
        return sdpa_attention_forward(module, query, key, value, mask, is_causal=False, **kw)

    AttentionInterface.register("syncscope_packed_rebuild", packed_rebuild_attention)
    try:
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
        AttentionMaskInterface.register("syncscope_packed_rebuild", sdpa_mask)
    except Exception as e:  # older transformers build masks without this registry
        print(f"note: no AttentionMaskInterface ({e})")
    cfg = Qwen3Config(**c)
    cfg._attn_implementation = "syncscope_packed_rebuild"
    model = Qwen3ForCausalLM(cfg)
    for i, layer in enumerate(model.model.layers):
        orig = layer.forward

        def fwd(*a, _orig=orig, _i=i, **k):
            with torch.profiler.record_function(f"layer_{_i:02d}"):
                return _orig(*a, **k)
        layer.forward = fwd

    def step_loss(input_ids, position_ids, labels):
        return model(input_ids=input_ids, position_ids=position_ids, labels=labels,
                     use_cache=False).loss
    import transformers
    return model, step_loss, f"transformers {transformers.__version__} Qwen3ForCausalLM"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=QWEN3_06B["num_hidden_layers"])
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=2, help="active (recorded) steps")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--impl", choices=["auto", "hf", "plain"], default="auto")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    c = dict(QWEN3_06B, num_hidden_layers=a.layers)
    model = step_loss = None
    if a.impl in ("auto", "hf"):
        try:
            model, step_loss, impl = build_hf(c)
        except Exception as e:
            if a.impl == "hf":
                raise
            print(f"note: transformers path unavailable ({type(e).__name__}: {e}); using plain PyTorch")
    if model is None:
        model = PlainQwen3(c)
        step_loss, impl = model, "plain-PyTorch Qwen3 (transformers' architecture)"
    model = model.to(device=dev, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
    lens = packed_lengths(a.tokens, a.seed)
    ids = torch.randint(0, c["vocab_size"], (1, a.tokens), device=dev)
    pos = packed_position_ids(lens, dev)
    BATCH["seq_lengths"] = torch.tensor(lens, device=dev, dtype=torch.int32)

    def train_step():
        with torch.profiler.record_function("forward"):
            loss = step_loss(ids, pos, ids)
        with torch.profiler.record_function("backward"):
            loss.backward()
        with torch.profiler.record_function("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(2):  # warm-up outside the profiler: allocator, cuBLAS handles, autotuning
        train_step()
    torch.cuda.synchronize()
    from torch.profiler import profile, ProfilerActivity, schedule
    exp = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    os.makedirs(a.out, exist_ok=True)
    raw = os.path.join(a.out, "qwen3_packed_step.json")
    t0 = time.time()
    # One cycle (repeat=1), written by on_trace_ready when its last active step ends: with the
    # default repeat=0 a new cycle starts there and a later export_chrome_trace writes that
    # empty cycle (70 events on the H200, 2026-11-30 and 2026-12-04, with acc_events=True).
    exported = []

    def ready(p):
        torch.cuda.synchronize()
        p.export_chrome_trace(raw)
        exported.append(raw)

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=a.steps, repeat=1),
                 on_trace_ready=ready, experimental_config=exp) as prof:
        for _ in range(1 + a.steps):
            loss = train_step()
            torch.cuda.synchronize()
            prof.step()
    if not exported:
        print("torch_reference_trace: the profiler cycle did not end; no trace", file=sys.stderr)
        return 1
    with open(raw) as f:
        doc = json.load(f)
    doc["traceName"] = f"syncscope reference: {impl}, L={a.layers}, T={a.tokens}, " \
                       f"{len(lens)} packed sequences, torch {torch.__version__}"
    with gzip.open(raw + ".gz", "wt") as f:
        json.dump(doc, f)
    os.remove(raw)
    n = len(doc.get("traceEvents", []))
    print(f"impl: {impl}")
    print(f"trace: {raw}.gz events={n} layers={a.layers} tokens={a.tokens} seqs={len(lens)} "
          f"loss={float(loss):.4f} profiled_in={time.time() - t0:.1f}s "
          f"expected_metadata_syncs_per_forward={3 * a.layers}")


if __name__ == "__main__":
    sys.exit(main())
