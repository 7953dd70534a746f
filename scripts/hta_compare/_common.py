"""Helpers the comparison modules share (a leading '_': not a module hta-compare runs)."""


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
