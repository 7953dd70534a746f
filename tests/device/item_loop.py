#!/usr/bin/env python3
"""A small PyTorch program that makes exactly L host syncs per step (`.item()` once per
layer), for checking sync counts end to end: `syncscope trace -- python3 item_loop.py`
must report L sync points per step. With --torch-profiler FILE it records itself with
torch.profiler instead (a Kineto trace for the importer's tests).

Each step is wrapped in an NVTX range "step_N" and a record_function "train_step#N", each
layer in NVTX and record_function ranges "layer_NN", so either tracer sees the boundaries.
The warm-up step is "step_-1" (match steps with 'step_[0-9]*').
"""
import argparse
import gzip
import json
import os

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--layers", type=int, default=8, help="L: .item() calls per step")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--torch-profiler", metavar="FILE", help="write a torch.profiler trace (.json.gz)")
    a = ap.parse_args()
    dev = torch.device("cuda")
    ws = [torch.randn(a.dim, a.dim, device=dev) / a.dim ** 0.5 for _ in range(a.layers)]
    x0 = torch.randn(64, a.dim, device=dev)

    def step(i):
        torch.cuda.nvtx.range_push(f"step_{i}")
        with torch.profiler.record_function(f"train_step#{i}"):
            x = x0
            for li, w in enumerate(ws):
                # NVTX and record_function both, so syncscope's and torch.profiler's traces
                # have the same layer ranges ("layer_00", ...).
                torch.cuda.nvtx.range_push(f"layer_{li:02d}")
                with torch.profiler.record_function(f"layer_{li:02d}"):
                    x = torch.tanh(x @ w)
                    s = x.abs().max().item()  # one D2H copy + stream sync: one sync point
                    if s > 1e9:
                        print("unexpected")
                torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()

    step(-1)  # warm-up
    torch.cuda.synchronize()
    if a.torch_profiler:
        from torch.profiler import profile, ProfilerActivity
        exp = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], experimental_config=exp) as prof:
            for i in range(a.steps):
                step(i)
            torch.cuda.synchronize()
        raw = a.torch_profiler[:-3] if a.torch_profiler.endswith(".gz") else a.torch_profiler
        prof.export_chrome_trace(raw)
        if a.torch_profiler.endswith(".gz"):
            with open(raw, "rb") as f, gzip.open(a.torch_profiler, "wb") as g:
                g.write(f.read())
            os.remove(raw)
        print(f"wrote {a.torch_profiler}: {a.steps} steps x {a.layers} .item() syncs, torch {torch.__version__}")
    else:
        for i in range(a.steps):
            step(i)
        torch.cuda.synchronize()
        print(f"ran {a.steps} steps x {a.layers} .item() syncs")


if __name__ == "__main__":
    main()
