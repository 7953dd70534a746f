"""Potential stragglers (HTA: hta/trace_analysis.py get_potential_stragglers ->
hta/analyzers/straggler.py find_stragglers_with_late_start_comm_kernels; ours: `syncscope
analyze DIR`'s stragglers, definition in profiler/analysis/include/syncscope/analysis/ranks.hpp;
docs/analysis.md "Stragglers").

HTA's metric: per iteration after the first (iteration > 0) of those its trace filter keeps
(the last ProfilerStep dropped), the communication kernels named ^ncclKernel lasting at least
1% of a mean iteration; the last of each (rank, stream, iteration, name); the (stream, name)
whose duration varies most across ranks; its start time, normalized, per rank. The ranks at
or above the k-th latest start (k = num_candidates = 2) count as stragglers in that
iteration; the k ranks counted most are returned. Start times are compared across hosts (HTA
aligns ranks on the earliest event). Ours: the rank that reaches its collectives last waits
least inside them: least communication time per step (median over steps), late by the largest
rank's minus its own; no timestamps compared across hosts.

Two named differences, both asserted on the shipped four-rank fixture:
1. HTA matches only names starting with "ncclKernel"; NCCL >= 2.19 names its kernels
   ncclDevKernel_* (the fixture's), so HTA finds no communication kernel and raises
   (ValueError: argmax of an empty sequence).
2. On a copy with the kernels renamed ncclKernel_*, HTA's metric ties on every rank (the
   fixture's all-reduce starts at the same time everywhere; rank 2 arrives late and the others
   wait inside the collective), so its answer is the tie order; ours names rank 2."""

import os

NAME = "stragglers"
TRACES = ["ranks-nccl4"]


def _run(trace_dir):
    """HTA's stragglers, its per-rank metric (normalized start time) per iteration, and the
    file it read as each rank; or the error it raised."""
    import pandas as pd
    from hta.analyzers.straggler import _compute_normalized_start_time_of_significant_comm_kernels
    from hta.trace_analysis import TraceAnalysis
    ta = TraceAnalysis(trace_dir=trace_dir)
    out = {"files": {str(int(r)): os.path.basename(f) for r, f in ta.t.trace_files.items()}}
    try:
        out["stragglers"] = [int(r) for r in ta.get_potential_stragglers(num_candidates=2)]
    except Exception as e:  # the named difference 1
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    ranks = list(ta.t.get_all_traces().keys())
    df = pd.concat([ta.t.get_trace(r) for r in ranks], axis=0, keys=ranks, names=["rank", "idx"]).reset_index()
    metric, name = _compute_normalized_start_time_of_significant_comm_kernels(df, ta.t.symbol_table)
    out["metric"] = [{"rank": int(r.rank), "iteration": int(r.iteration), "start": float(getattr(r, name))}
                     for r in metric.itertuples()]
    return out


def hta(ta, ranks):
    import gzip
    import shutil
    import tempfile
    src = ta.t.trace_path
    out = {"as_shipped": _run(src)}
    d = tempfile.mkdtemp(prefix="hta-stragglers.")
    try:
        for f in os.listdir(src):
            gz = f.endswith(".gz")
            with (gzip.open if gz else open)(os.path.join(src, f), "rt", encoding="utf-8") as i:
                text = i.read().replace("ncclDevKernel", "ncclKernel")
            with (gzip.open if gz else open)(os.path.join(d, f), "wt", encoding="utf-8") as o:
                o.write(text)
        out["renamed"] = _run(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return out


def ours_stragglers(ours):
    """Our rule (ranks.hpp) from each rank's analyze JSON: per rank the median over its steps
    of communication kernel time; late = the largest minus its own; up to 2, latest first."""
    comm = {}
    for r, d in ours.items():
        v = sorted(s["communication"]["kernel_ns"] for s in d["steps"]) or [d["totals"]["communication"]["kernel_ns"]]
        n = len(v)
        comm[r] = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    most = max(comm.values(), default=0)
    late = sorted(((most - c, r) for r, c in comm.items() if c < most), key=lambda x: (-x[0], x[1]))
    return [(r, lt) for lt, r in late[:2]] if most > 0 and len(comm) >= 2 else []


def compare(h, ours):
    lines, bad = [], []
    mine = ours_stragglers(ours)
    lines.append("ours: " + (", ".join(f"rank {r} late by {lt / 1e3:.1f} us per step" for r, lt in mine) or "none"))
    shipped = h["as_shipped"]
    if "error" in shipped:
        lines.append(f"HTA as shipped: {shipped['error']} (named difference 1: no kernel named ncclKernel*; "
                     "the fixture's are ncclDevKernel_*)")
        if "argmax" not in shipped["error"]:
            bad.append(f"HTA failed otherwise than on finding no ncclKernel*: {shipped['error']}")
    else:
        bad.append(f"HTA now runs on ncclDevKernel_* names (stragglers {shipped['stragglers']}): "
                   "named difference 1 is gone; compare its figures here")
    ren = h["renamed"]
    if "error" in ren:
        bad.append(f"HTA on the renamed copy: {ren['error']}")
        return lines, bad
    by_iter = {}
    for m in ren["metric"]:
        by_iter.setdefault(m["iteration"], []).append(m["start"])
    lines.append(f"HTA on the renamed copy: stragglers {ren['stragglers']}; normalized start per iteration "
                 + "; ".join(f"{i}: {sorted(set(v))}" for i, v in sorted(by_iter.items()))
                 + f" (HTA read {len(ren['files'])} files)")
    ties = all(len(set(v)) == 1 for v in by_iter.values())
    if not ties:
        bad.append("HTA's metric separates the ranks on the renamed copy: named difference 2 (a tie) no longer holds")
    else:
        lines.append("named difference 2: HTA's metric ties on every rank it read, so its answer is the tie "
                     "order; ours reads the wait inside the collective")
    if [r for r, _ in mine] != [2]:
        bad.append(f"ours names {mine}, the fixture's straggler is rank 2 (make_nccl4.py)")
    return lines, bad
