"""Communication/computation overlap per rank (HTA: hta/analyzers/communication_analysis.py,
get_comm_comp_overlap; ours: totals.communication.overlap_fraction, definition in
profiler/analysis/include/syncscope/analysis/analysis.hpp; docs/analysis.md "Side by side with HTA").

Both take the union of communication kernels (HTA's pattern: ^nccl, ^hip, ^hccl, ncclKernel;
ours: ^nccl, ^rccl) and the union of compute kernels (HTA: neither communication nor memory
nor a sync record; ours: every other kernel, memcpy/memset are not kernels), and divide the
time both run by the communication union. The one named difference is the kernels HTA
keeps: TraceAnalysis(include_last_profiler_step=False), its default, drops every GPU event
whose launching CPU call starts at or after the last ProfilerStep's start
(hta/common/trace.py, Trace._filter_irrelevant_gpu_kernels: the last step is taken to be
incomplete), and GPU events with no CPU call correlated. So ours must equal HTA's loaded
with include_last_profiler_step=True (to HTA's microseconds: its parser rounds ns times up to
whole µs, trace_parser.py), and HTA's default may differ from ours only when it kept fewer
communication or compute kernels than that load did."""

import os

NAME = "comm_overlap"
# HTA returns only round(100 * ratio, 2) (comp_comm_overlap_pctg); on a trace written in
# whole µs both ratios are the same quotient of integers, so ours, as a percentage, may differ
# from HTA's by its rounding to 0.01 only (HTA rounds fractional-µs times up, trace_parser.py).
TOLERANCE_PCT = 0.005 + 1e-9


def _figures(ta):
    """Per rank: HTA's overlap percentage (rounded to 0.01 by HTA), and the communication / compute kernel
    counts it ran on (HTA's own kernel typing, hta/utils/utils.py get_kernel_type)."""
    from hta.utils.utils import get_kernel_type
    df = ta.get_comm_comp_overlap(visualize=False)
    sym = ta.t.symbol_table.get_sym_table()
    out = {}
    for row in df.itertuples():
        r = int(row.rank)
        t = ta.t.traces[row.rank]
        kinds = [get_kernel_type(sym[n]) for n in t[t["stream"].ne(-1)]["name"]]
        pct = float(row.comp_comm_overlap_pctg)
        out[str(r)] = {"pctg": None if pct != pct else pct,  # NaN: no communication (HTA's 0/0)
                       "comm": kinds.count("COMMUNICATION"), "comp": kinds.count("COMPUTATION")}
    return out


def hta(ta, ranks):
    import os
    from hta.trace_analysis import TraceAnalysis
    whole = TraceAnalysis(trace_dir=ta.t.trace_path, include_last_profiler_step=True)
    # The file HTA read as each rank: a trace with no distributedInfo.rank is read as rank 0,
    # one file per rank (hta/common/trace_file.py create_rank_to_trace_dict).
    files = {str(int(r)): os.path.basename(f) for r, f in ta.t.trace_files.items()}
    kept = {str(int(r)): _kept_by_rule(f) for r, f in ta.t.trace_files.items()}
    return {"default": _figures(ta), "last_step_kept": _figures(whole), "files": files, "rule": kept}


def _read(path):
    import gzip
    import json
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def _union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def _overlap_pct(comm, comp):
    """100 * |union(comm) & union(comp)| / |union(comm)|; None without communication."""
    a, b = _union(comm), _union(comp)
    total = sum(e - s for s, e in a)
    i = j = both = 0
    while i < len(a) and j < len(b):
        both += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return 100 * both / total if total else None


def _kept_by_rule(path):
    """The named difference computed apart from HTA's frames, from the raw trace: the overlap
    over the GPU events HTA keeps by its rule (a correlated CPU event, i.e. the launch call,
    starting before the last ProfilerStep's start; with the last step kept: at or before its
    end), typed by HTA's kernel patterns, times rounded as HTA's parser does (ts up, end down)."""
    import math
    from hta.utils.utils import get_kernel_type
    ev = [e for e in _read(path).get("traceEvents", []) if e.get("ph") == "X" and "dur" in e]
    gpu = [e for e in ev if (e.get("args") or {}).get("stream", -1) != -1]
    call = {}
    for e in ev:
        c = (e.get("args") or {}).get("correlation")
        if (e.get("args") or {}).get("stream", -1) == -1 and c is not None:
            call[c] = min(call.get(c, e["ts"]), e["ts"])
    steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
    last_start = max((e["ts"] for e in steps), default=None)
    last_end = max((e["ts"] + e["dur"] for e in steps), default=None)
    out = {}
    for mode, keep in (("default", lambda t: last_start is None or t < last_start),
                       ("last_step_kept", lambda t: last_end is None or t <= last_end)):
        comm, comp, no_call = [], [], 0
        for e in gpu:
            t = call.get(e["args"].get("correlation"))
            if t is None:
                no_call += 1
                continue
            if not keep(t):
                continue
            kind = get_kernel_type(e["name"])
            iv = (math.ceil(e["ts"]), math.floor(e["ts"] + e["dur"]))
            (comm if kind == "COMMUNICATION" else comp if kind == "COMPUTATION" else []).append(iv)
        out[mode] = {"pctg": _overlap_pct(comm, comp), "no_call": no_call}
    return out


def compare(h, ours):
    lines, bad = [], []
    for r, d in sorted(ours.items()):
        c = d["totals"]["communication"]
        mine = c["overlap_fraction"] if c["kernel_ns"] > 0 else None
        # Compared by file: HTA's rank for a file is its distributedInfo.rank, else 0.
        mine_file = os.path.basename(d["source"])
        hr = next((k for k, f in h["files"].items() if f == mine_file), None)
        if hr is None:
            # Not a failure of either analysis: HTA read another file as this rank.
            lines.append(f"rank {r}: HTA did not read {mine_file} (it read {h['files'].get(str(r), 'no file')} as "
                         f"rank {r}: a trace without distributedInfo.rank is rank 0 to HTA): not compared")
            continue
        dflt, whole = h["default"].get(hr), h["last_step_kept"].get(hr)
        if dflt is None or whole is None:
            bad.append(f"rank {r}: HTA has no overlap row for this rank")
            continue
        lines.append(f"rank {r}{'' if hr == str(r) else f' (HTA rank {hr})'}: overlap ours {_pct(None if mine is None else 100 * mine)} ({c['kernels']} comm kernels) | HTA "
                     f"{_pct(whole['pctg'])} with the last step kept ({whole['comm']} comm, {whole['comp']} "
                     f"compute) | HTA default {_pct(dflt['pctg'])} ({dflt['comm']} comm, {dflt['comp']} compute)")
        rule = h["rule"][hr]
        for mode, row in (("default", dflt), ("last_step_kept", whole)):
            # HTA's figure must be the overlap over the kernels its rule keeps (computed apart).
            if not _same(row["pctg"], rule[mode]["pctg"]):
                bad.append(f"rank {r}: HTA {mode} {_pct(row['pctg'])} != {_pct(rule[mode]['pctg'])}, the overlap "
                           "over the kernels its filter keeps: the difference is not the one named")
        if rule["last_step_kept"]["no_call"]:
            lines.append(f"rank {r}: named difference: {rule['last_step_kept']['no_call']} GPU events have no "
                         "CPU call correlated: HTA drops them, ours counts them")
        elif not _same(whole["pctg"], None if mine is None else 100 * mine):
            bad.append(f"rank {r}: ours {_pct(None if mine is None else 100 * mine)} != HTA's "
                       f"{_pct(whole['pctg'])} on the same kernels (include_last_profiler_step=True)")
        if not rule["last_step_kept"]["no_call"] and whole["comm"] != c["kernels"]:
            bad.append(f"rank {r}: HTA types {whole['comm']} kernels as communication, ours {c['kernels']}")
        if (dflt["comm"], dflt["comp"]) != (whole["comm"], whole["comp"]):
            lines.append(f"rank {r}: named difference: HTA's default dropped {whole['comm'] - dflt['comm']} comm "
                         f"and {whole['comp'] - dflt['comp']} compute kernels launched from the last "
                         "ProfilerStep on")
    return lines, bad


def _same(hta_pct, pct):
    """HTA's percentage (rounded to 0.01) against an unrounded one; None: no communication."""
    if hta_pct is None or pct is None:
        return hta_pct is None and pct is None
    return abs(hta_pct - pct) <= TOLERANCE_PCT


def _pct(x):
    """A fraction (ours) or HTA's percentage, as a percentage; '-' for none."""
    return "-" if x is None else f"{x:.4f}%"
