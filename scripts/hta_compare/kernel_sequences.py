"""Frequent kernel sequences (HTA: hta/analyzers/cuda_kernel_analysis.py,
get_frequent_cuda_kernel_sequences; ours: gpu.kernel_sequences with --sequence-op,
syncscope/analysis/kernel_sequences.hpp, docs/analysis.md "Frequent kernel sequences").

Both with operator name OP and min_pattern_len MIN_LEN, every pattern listed: the shallowest
host ops whose name contains OP; per op the GPU work its subtree launched, in GPU start order;
per pattern (op name + kernel names) the count, the summed GPU time and the summed op time.
Named differences, asserted:
- HTA counts the CUPTI synchronization records under the op ("Stream Sync", "Event Sync": cat
  cuda_sync) as kernels; ours counts GPU work only. They are taken out of HTA's patterns (a
  pattern left shorter than MIN_LEN dropped, patterns then equal merged); HTA's GPU time of such
  a pattern includes the syncs' durations, so it may only exceed ours.
- HTA names copies by memory kind ("Memcpy DtoH (Device -> Pinned)"), ours by direction (HTA's
  get_memory_kernel_type prefix).
- HTA is run with include_last_profiler_step=True (its default drops the last ProfilerStep).
- Against HTA with its ns rounding off: patterns and counts equal; op time within
  _common.TOL_NS per op; GPU time within TOL_NS per kernel (patterns without syncs).
- Against HTA as users run it (fractional-µs times rounded: ceil start, floor end) its rounded
  times can nest a launch under a neighbouring op and reorder kernels that start within a µs:
  the kernel sequences (without the op's name) and their total counts must still agree."""
import collections
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

NAME = "kernel_sequences"
OP = "aten::"
MIN_LEN = 1
ANALYZE_ARGS = ["--sequence-op", OP, "--sequence-min-len", str(MIN_LEN), "--sequence-top", "10000"]


def _patterns(ta, rank):
    sym = ta.t.symbol_table
    df = ta.t.get_trace(rank)
    idx = sym.get_sym_id_map().get("cuda_sync")
    table = sym.get_sym_table()
    syncs = sorted({table[i] for i in df.loc[df["cat"].eq(idx), "name"].unique()}) if idx is not None else []
    out = tempfile.mkdtemp(prefix="hta-seq.")
    try:
        p = ta.get_frequent_cuda_kernel_sequences(OP, out, min_pattern_len=MIN_LEN, rank=rank, top_k=10 ** 6,
                                                  visualize=False)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    rows = []
    for _, r in p.iterrows() if len(p) else []:
        rows.append({"pattern": str(r["pattern"]).split("|"), "count": int(r["count"]),
                     "gpu_ns": 1e3 * float(r["GPU kernel duration (us)"]),
                     "host_ns": 1e3 * float(r["CPU op duration (us)"])})
    return {"syncs": syncs, "rows": rows}


def hta(ta, ranks):
    # Fresh analyses: building HTA's call graph adds columns to the trace frames other modules read.
    rounded, exact = _common.analyses(ta, fresh=True)
    out = {mode: {str(int(r)): _patterns(t, r) for r in ranks} for mode, t in (("rounded", rounded),
                                                                                 ("exact", exact))}
    out["files"] = _common.hta_files(ta)
    return out


def _strip(h):
    """HTA's rows without sync records, memory names as ours, equal patterns merged."""
    merged = {}
    syncs = set(h["syncs"])
    for r in h["rows"]:
        op, kernels = r["pattern"][0], [_common.memory_name(k) for k in r["pattern"][1:]]
        kept = [k for k in kernels if k not in syncs]
        if len(kept) < MIN_LEN:
            continue
        m = merged.setdefault((op, tuple(kept)), {"count": 0, "gpu_ns": 0.0, "host_ns": 0.0, "syncs": False})
        m["count"] += r["count"]
        m["gpu_ns"] += r["gpu_ns"]
        m["host_ns"] += r["host_ns"]
        m["syncs"] |= len(kept) != len(kernels)
    return merged


def _short(key):
    op, kernels = key
    return op + "|" + "|".join(k.removeprefix("void ")[:25] for k in kernels)


def compare(h, ours):
    lines, bad = [], []
    for rank, d, hr in _common.matched(h, ours, lines):
        ks = d.get("gpu", {}).get("kernel_sequences", {})
        mine = {(s["op"], tuple(s["kernels"])): s for s in ks.get("top", [])}
        if ks.get("patterns", 0) > len(mine):
            bad.append(f"rank {rank}: ours lists {len(mine)} of {ks.get('patterns')} patterns (--sequence-top)")
        exact = _strip(h["exact"][hr])
        for key in sorted(set(exact) | set(mine)):
            e, s = exact.get(key), mine.get(key)
            if e is None or s is None:
                bad.append(f"rank {rank}: pattern {_short(key)!r} only in {'ours' if e is None else 'HTA'} "
                           f"(count {(s or e)['count']})")
                continue
            if e["count"] != s["count"]:
                bad.append(f"rank {rank}: {_short(key)!r} count HTA {e['count']} / ours {s['count']}")
            if abs(e["host_ns"] - s["host_ns"]) > _common.TOL_NS * s["count"]:
                bad.append(f"rank {rank}: {_short(key)!r} op time HTA {e['host_ns']:.0f} / ours {s['host_ns']} ns")
            tol = _common.TOL_NS * s["count"] * len(key[1])
            if (e["gpu_ns"] < s["gpu_ns"] - tol) if e["syncs"] else (abs(e["gpu_ns"] - s["gpu_ns"]) > tol):
                bad.append(f"rank {rank}: {_short(key)!r} GPU time HTA {e['gpu_ns']:.0f} / ours {s['gpu_ns']} ns"
                           + (" (HTA's includes its sync records)" if e["syncs"] else ""))
        # HTA as users run it: the kernel sequences and their total counts, whichever op they fall under.
        by_seq = collections.Counter()
        for (op, kernels), e in _strip(h["rounded"][hr]).items():
            by_seq[kernels] += e["count"]
        ours_seq = collections.Counter()
        for (op, kernels), s in mine.items():
            ours_seq[kernels] += s["count"]
        if by_seq != ours_seq:
            diff = sorted(set(by_seq.items()) ^ set(ours_seq.items()))[:3]
            bad.append(f"rank {rank}: kernel sequences of HTA (rounded) and ours differ, e.g. "
                       f"{[(('|'.join(k[:25] for k in seq)), n) for seq, n in diff]}")
        n_sync = sum(1 for e in exact.values() if e["syncs"])
        lines.append(f"rank {rank}: {len(mine)} patterns under {OP!r}* ops (>= {MIN_LEN} kernels), "
                     f"{sum(s['count'] for s in mine.values())} ops; HTA's sync records taken out of {n_sync}")
        if mine:
            key = max(mine, key=lambda k: (mine[k]["count"], mine[k]["gpu_ns"]))
            e = exact.get(key, {})
            lines.append(f"  most frequent {_short(key)[:70]!r}: ours {mine[key]['count']} x, GPU "
                         f"{mine[key]['gpu_ns'] / 1e3:.3f} us; HTA unrounded {e.get('count')} x, GPU "
                         f"{e.get('gpu_ns', 0) / 1e3:.3f} us")
    return lines, bad
