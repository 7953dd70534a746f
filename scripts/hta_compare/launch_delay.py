"""Kernel launch delay (HTA: hta/analyzers/cuda_kernel_analysis.py, cuda_kernel_launch_stats via
TraceAnalysis.get_cuda_kernel_launch_stats; ours: gpu.launch_delay, docs/analysis.md "Side by
side with HTA").

HTA's launch_delay is the kernel's start minus the launch call's END, over launches HTA joins
to a kernel by correlation; ours is the kernel's start minus the call's START, per stream.
Kernels only on both sides here (include_memory_events=False: HTA would add cudaMemcpyAsync
and cudaMemsetAsync, which ours leaves to the copies).

The counts, and why they differ (found on tests/fixtures/ranks/nccl4: HTA 6, ours 9):
- By default HTA drops every CPU event that starts at or after the last ProfilerStep's start
  and every GPU kernel correlated with one (hta/common/trace.py,
  Trace._filter_irrelevant_gpu_kernels, include_last_profiler_step=False, the default of
  TraceAnalysis): the last step's launches are not in its statistics. Ours keeps them. With
  include_last_profiler_step=True HTA counts what we count: asserted equal, per rank. The
  default's count is printed with the difference named and asserted bounded: it is at most
  the kernels that started from our last step on (the trace's kernels less those of the
  earlier steps) and zero with fewer than two steps (HTA skips the filter then).
- Rank 3 "missing" in HTA: rank3.pt.trace.json.gz has no distributedInfo.rank, so HTA reads
  it as rank 0 and it replaces node0's rank-0 file (hta/common/trace_file.py,
  get_trace_files); scripts/hta-compare now maps HTA's figures to ours by file, and says so.
- HTA's statistics join only cudaLaunchKernel and cudaLaunchKernelExC
  (cuda_kernel_analysis.py, cuda_kernel_launch_stats, launch_ids): kernels launched by
  cuLaunchKernel (cuBLASLt's split-K reduce on the H200 fixture: 24) or cudaGraphLaunch are
  not in them; ours counts every kernel with a launch call. Asserted: HTA (every step) + the
  kernels HTA's own trace joins to other calls (counted in HTA's frame) = ours.
So our count was right; on nccl4 NCCL kernels and the launch-name pattern were not the cause (all of
these launches are cudaLaunchKernel). Both in µs here (HTA's unit)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import all_steps, launch_names  # noqa: E402

NAME = "launch_delay"


def _stats(ta, ranks):
    stats = ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False, include_memory_events=False)
    return {str(int(r)): (int(len(df)), float(df["launch_delay"].median()) if len(df) else None)
            for r, df in stats.items()}


# The launch calls HTA's statistics join (cuda_kernel_analysis.py, cuda_kernel_launch_stats:
# launch_ids; MTIA's runFunction aside).
HTA_LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC")


def hta(ta, ranks):
    default = _stats(ta, ranks)
    t = all_steps(ta)
    every = _stats(t, ranks)
    out = {}
    for r in default:
        names = launch_names(t, int(r))
        out[r] = {"count": default[r][0], "count_all_steps": every.get(r, (None,))[0],
                  "median_us_all_steps": every.get(r, (None, None))[1],
                  "other_launches": {n: k for n, k in names.items() if n not in HTA_LAUNCHES}}
    return out


def compare(h, ours):
    lines, bad = [], []
    for r, d in sorted(ours.items()):
        mine = d.get("gpu", {}).get("launch_delay", [])
        n = sum(s["delay"]["count"] for s in mine)
        row = h.get(str(r))
        if row is None:
            bad.append(f"rank {r}: HTA has no launch statistics for this rank's file")
            continue
        steps = d.get("steps", [])
        # Kernels launched at or after the last step's start start after it: at most the trace's
        # kernels less those that started in the earlier steps.
        bound = d["totals"]["kernels"] - sum(s["kernels"] for s in steps[:-1]) if len(steps) >= 2 else 0
        dropped = (row["count_all_steps"] or 0) - row["count"]
        lines.append(f"rank {r}: launches HTA {row['count_all_steps']} (every step) / ours {n}; HTA's default "
                     f"{row['count']} drops {dropped} of the last ProfilerStep (at most {bound}); HTA median "
                     f"{row['median_us_all_steps']} us (from the call's end)")
        other = sum(row["other_launches"].values())
        if other:
            lines.append(f"rank {r}: kernels launched by calls HTA's statistics leave out: {row['other_launches']}")
        if row["count_all_steps"] + other != n:
            bad.append(f"rank {r}: HTA counts {row['count_all_steps']} kernel launches with every step (+ {other} "
                       f"by other calls), ours {n}")
        if not 0 <= dropped <= bound:
            bad.append(f"rank {r}: HTA's default drops {dropped} launches, outside [0, {bound}] (our last step)")
    return lines, bad
