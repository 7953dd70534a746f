"""Helpers the comparison modules share (not a comparison: scripts/hta-compare skips files whose
name starts with '_').

HTA rounds a trace whose times are fractional µs (hta/common/trace_parser.py,
round_down_time_stamps: start = ceil(ts), end = floor(ts + dur), in µs) unless
HTA_DISABLE_NS_ROUNDING is set. The modules compare twice: against HTA with that rounding off
(`analyses`: the same definition on the same times, equal within TOL_NS) and against HTA as
users run it (rounded: each event's duration d becomes some value in (d - 2 µs, d], the bound
each module asserts)."""
import math
import os

# Our reader turns Kineto's µs text (e.g. 5140410414773.207) into integer ns through a double:
# at 5e15 ns a double's step is 1 ns, so a start or end can land 1 ns off the text's value and
# a duration 2 ns off HTA's float dur (HTA reads "dur" itself).
TOL_NS = 2.0

_cache = {}


def analyses(ta, fresh=False):
    """(rounded, unrounded): TraceAnalysis objects of `ta`'s directory with every profiler step
    kept (HTA drops the last ProfilerStep's events by default, include_last_profiler_step=False:
    on the nccl4 ranks 2 of 3 steps), one as users run HTA, one with its ns rounding off. Cached
    per directory unless `fresh` (building HTA's call graph adds columns to the frames)."""
    from hta.configs.env_options import HTAEnvOptions
    from hta.trace_analysis import TraceAnalysis
    path = ta.t.trace_path
    if fresh or path not in _cache:
        opts = HTAEnvOptions.instance()
        before = opts.disable_ns_rounding()
        rounded = TraceAnalysis(trace_dir=path, include_last_profiler_step=True)
        opts.set_disable_ns_rounding(True)
        try:
            exact = TraceAnalysis(trace_dir=path, include_last_profiler_step=True)
        finally:
            opts.set_disable_ns_rounding(before)
        if fresh:
            return rounded, exact
        _cache[path] = (rounded, exact)
    return _cache[path]


def memory_name(name):
    """HTA's names of copies and memsets carry the memory kinds ("Memcpy DtoH (Device -> Pinned)");
    ours group by direction ("Memcpy DtoH"), as HTA's own get_memory_kernel_type (hta/utils/utils.py)."""
    if name.startswith("Memset"):
        return "Memset"
    if name.startswith("Memcpy"):
        return name[:11]
    return name


def frame_rows(df):
    """HTA's aggregated frame (sum/max/min/stddev/mean in µs, per name) as dicts in ns, with the
    count (sum / mean; None where the mean is 0)."""
    rows = []
    if df is None:
        return rows
    for _, r in df.iterrows():
        mean = float(r["mean (us)"])
        rows.append({"name": str(r["name"]), "rank": int(r["rank"]),
                     "count": int(round(float(r["sum (us)"]) / mean)) if mean > 0 else None,
                     "sum": 1e3 * float(r["sum (us)"]), "max": 1e3 * float(r["max (us)"]),
                     "min": 1e3 * float(r["min (us)"]), "mean": 1e3 * mean, "std": 1e3 * float(r["stddev"])})
    return rows


def pool(rows):
    """Several of HTA's rows as one (HTA's copy rows per memory kind under our one per direction):
    count, sum, min, max, mean and the pooled sample std, exactly."""
    if len(rows) == 1:
        return dict(rows[0])
    if any(r["count"] is None for r in rows):
        return None
    n = sum(r["count"] for r in rows)
    total = sum(r["sum"] for r in rows)
    mean = total / n
    ss = sum((r["count"] - 1) * r["std"] ** 2 + r["count"] * (r["mean"] - mean) ** 2 for r in rows)
    return {"name": rows[0]["name"], "rank": rows[0]["rank"], "count": n, "sum": total,
            "min": min(r["min"] for r in rows), "max": max(r["max"] for r in rows), "mean": mean,
            "std": math.sqrt(ss / (n - 1)) if n > 1 else 0.0}


def check_exact(where, h, s, bad):
    """HTA with rounding off against our DurationStats JSON `s`: equal within TOL_NS per event."""
    n = s["count"]
    if h["count"] is not None and h["count"] != n:
        bad.append(f"{where}: count HTA {h['count']} / ours {n}")
    for key, ours, tol in (("sum", s["total_ns"], TOL_NS * n), ("min", s["min_ns"], TOL_NS),
                           ("max", s["max_ns"], TOL_NS), ("mean", s["mean_ns"], TOL_NS),
                           ("std", s["std_ns"], TOL_NS)):
        if abs(h[key] - ours) > tol + 1e-9 * abs(ours):
            bad.append(f"{where}: {key} HTA {h[key]:.1f} ns / ours {ours:.1f} ns (allowed {tol:.0f} ns)")


def check_rounded(where, h, s, bad):
    """HTA as users run it against ours: each event's duration d (ours, ns) is HTA's in
    (d - 2000 - TOL, d + TOL] (ceil start, floor end), so min, max, mean within that; the sum
    within n times it; the sample std of values each moved by up to 2 µs changes by at most
    1 µs * sqrt(n / (n - 1)) (the std of the shifts, which lie in an interval 2 µs wide)."""
    n = s["count"]
    width = 2000.0 + TOL_NS
    for key, ours in (("min", s["min_ns"]), ("max", s["max_ns"]), ("mean", s["mean_ns"])):
        if not (ours - width < h[key] <= ours + TOL_NS):
            bad.append(f"{where}: {key} HTA (rounded) {h[key]:.0f} ns outside (ours - 2 µs, ours] = "
                       f"({ours - 2000:.0f}, {ours:.0f}]")
    if not (s["total_ns"] - width * n < h["sum"] <= s["total_ns"] + TOL_NS * n):
        bad.append(f"{where}: sum HTA (rounded) {h['sum']:.0f} ns outside (ours - n * 2 µs, ours]")
    bound = (1000.0 + TOL_NS) * math.sqrt(n / (n - 1)) if n > 1 else TOL_NS
    if abs(h["std"] - s["std_ns"]) > bound:
        bad.append(f"{where}: std HTA (rounded) {h['std']:.0f} ns / ours {s['std_ns']:.0f} ns, more than "
                   f"{bound:.0f} ns apart")


def hta_files(ta):
    """{HTA's rank (text): the trace file's name}: HTA numbers a trace without distributedInfo as
    rank 0 (hta/common/trace_file.py), so in a directory that also holds the real rank 0, one
    of the two is not read at all (tests/fixtures/ranks/nccl4: rank3.pt.trace.json.gz replaces
    node0_1000's rank 0). Ranks are matched by file, not by number."""
    return {str(int(r)): os.path.basename(f) for r, f in ta.t.trace_files.items()}


def hta_rank(files, doc):
    """HTA's rank (text) of the trace our analyze JSON `doc` came from; None when HTA did not read it."""
    name = os.path.basename(doc.get("source", ""))
    for r, f in files.items():
        if f == name:
            return r
    return None


def not_read(rank, doc):
    return (f"rank {rank}: HTA did not read {os.path.basename(doc.get('source', ''))} (another trace took its "
            "rank number: HTA calls a trace without distributedInfo rank 0); not compared")


def matched(h, ours, lines):
    """(our rank, our analyze JSON, HTA's rank as text) for each of our traces HTA read (by file,
    `h["files"]` from hta_files); a line in `lines` for each it did not read."""
    for rank, d in sorted(ours.items()):
        hr = hta_rank(h["files"], d)
        if hr is None:
            lines.append(not_read(rank, d))
            continue
        yield rank, d, hr


def all_steps(ta):
    """HTA's TraceAnalysis of the same directory with the last ProfilerStep kept
    (include_last_profiler_step=True; by default HTA drops it: hta/common/trace.py,
    Trace._filter_irrelevant_gpu_kernels). Parsed once per child, shared by the modules."""
    cached = getattr(ta, "_syncscope_all_steps", None)
    if cached is None:
        from hta.trace_analysis import TraceAnalysis  # in the child, on HTA's path

        cached = TraceAnalysis(trace_dir=ta.t.trace_path, include_last_profiler_step=True)
        ta._syncscope_all_steps = cached
    return cached


def rounded_by_hta(ta, rank):
    """True when HTA rounds this rank's times to whole µs: some event's ts or dur in the file is
    fractional (hta/common/trace_parser.py, round_down_time_stamps: [ceil(ts), floor(ts + dur)));
    then each HTA time may be up to 1 µs off ours."""
    import gzip
    import json

    path = ta.t.trace_files[rank]
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        events = json.load(f).get("traceEvents", [])
    return any(isinstance(e.get(k), float) and e[k] != int(e[k]) for e in events for k in ("ts", "dur"))


def launch_names(ta, rank):
    """Per GPU kernel row of HTA's trace (TraceAnalysis `ta`), the name of the CPU call HTA
    joins to it by correlation: {name: kernels}."""
    df = ta.t.get_trace(rank)
    sym = ta.t.symbol_table.sym_table
    cat = df["cat"].map(lambda i: sym[i] if i >= 0 else "")
    kernels = df[(df["stream"] != -1) & (cat == "kernel")]
    calls = df[(df["stream"] == -1) & (df["correlation"] > 0) & cat.isin(["cuda_runtime", "cuda_driver"])]
    by_corr = dict(zip(calls["correlation"], calls["name"].map(lambda i: sym[i])))
    out = {}
    for c in kernels["correlation"]:
        n = by_corr.get(c, "(none)")
        out[n] = out.get(n, 0) + 1
    return out


# HTA's runtime launch calls for queue length (hta/common/trace_symbol_table.py,
# get_runtime_launch_events_mask).
HTA_RUNTIME_LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                        "cudaMemcpyAsync", "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution",
                        "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemsetAsync", "hipMemcpyAsync",
                        "hipMemcpyWithStream")


def unmasked_per_stream(ta, rank):
    """Per stream, the GPU rows (kernels, copies, memsets) HTA's trace joins by correlation to a
    CPU call outside HTA_RUNTIME_LAUNCHES (cudaGraphLaunch, a synchronous cudaMemcpy): in our
    queue counts, not in HTA's. {stream: rows}."""
    df = ta.t.get_trace(rank)
    sym = ta.t.symbol_table.sym_table
    cat = df["cat"].map(lambda i: sym[i] if i >= 0 else "")
    gpu = df[df["stream"] != -1]
    calls = df[(df["stream"] == -1) & (df["correlation"] > 0) & cat.isin(["cuda_runtime", "cuda_driver"])]
    by_corr = dict(zip(calls["correlation"], calls["name"].map(lambda i: sym[i])))
    out = {}
    for c, s in zip(gpu["correlation"], gpu["stream"]):
        n = by_corr.get(c)
        if n is not None and n not in HTA_RUNTIME_LAUNCHES:
            out[str(int(s))] = out.get(str(int(s)), 0) + 1
    return out
