"""Per-kernel min/max/mean/std (HTA: hta/analyzers/breakdown_analysis.py,
get_gpu_kernel_breakdown's second frame, _aggr_gpu_kernel_time; ours: gpu.kernels_by_name,
docs/analysis.md "Per-kernel statistics").

Both: per kernel name per rank, count, sum, min, max, mean and the SAMPLE std (ddof 1; 0 for one
kernel). HTA is called with num_kernels and duration_ratio that group nothing into "others" and
with its memory kernels included. Named differences, asserted:
- HTA's copy and memset rows are per memory kind ("Memcpy DtoH (Device -> Pinned)"), ours per
  direction ("Memcpy DtoH", HTA's own get_memory_kernel_type prefix): HTA's rows pooled exactly.
- HTA leaves out GPU events its get_kernel_type calls OTHER (names matching none of its compute,
  memory, communication patterns, e.g. a kernel named "...Sync..."): ours may list those; every
  other name must be in both.
- HTA keeps only GPU work whose launch call (by correlation) is in the trace and starts by the
  end of the last ProfilerStep (hta/common/trace.py, _filter_irrelevant_gpu_kernels; the issue's
  "it drops GPU work it cannot tie to a host call"). Where HTA counts fewer of a name than we do,
  the trace file must hold exactly our count of it, and HTA's min, max and sum must be those of
  a subset of ours (min >= ours, max <= ours, sum <= ours); the statistics are not compared.
- Our list holds the 50 largest names (kernel_names counts all): names past it are not compared.
- HTA is run with include_last_profiler_step=True (its default drops the last ProfilerStep).
- Times: equal within _common.TOL_NS against HTA with its ns rounding off; against HTA as users
  run it (rounding fractional-µs times) within the bound _common.check_rounded states."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

NAME = "kernel_stats"


def _breakdown(ta):
    _, df = ta.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10 ** 9,
                                        include_memory_kernels=True)
    return _common.frame_rows(df)


def _raw_counts(path):
    """GPU events per name as the file holds them (kernels, copies, memsets), before HTA's filters."""
    import collections
    import gzip
    import json
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        events = json.load(f).get("traceEvents", [])
    return dict(collections.Counter(_common.memory_name(e.get("name", "")) for e in events
                                    if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")))


def hta(ta, ranks):
    from hta.utils.utils import get_kernel_type
    other = {}
    sym = ta.t.symbol_table.get_sym_table()
    for r in ranks:
        df = ta.t.get_trace(r)
        names = {sym[i] for i in df.loc[df["stream"].ne(-1), "name"].unique()}
        other[str(int(r))] = sorted(n for n in names if get_kernel_type(n) == "OTHER")
    rounded, exact = _common.analyses(ta)
    return {"rounded": _breakdown(rounded), "exact": _breakdown(exact), "other": other,
            "files": _common.hta_files(ta),
            "raw": {str(int(r)): _raw_counts(f) for r, f in ta.t.trace_files.items()}}


def _by_name(rows, rank):
    grouped = {}
    for row in rows:
        if row["rank"] == rank:
            grouped.setdefault(_common.memory_name(row["name"]), []).append(row)
    return {n: _common.pool(v) for n, v in grouped.items()}


def compare(h, ours):
    lines, bad = [], []
    for rank, d, hr in _common.matched(h, ours, lines):
        gpu = d.get("gpu", {})
        mine = {k["name"]: k for k in gpu.get("kernels_by_name", [])}
        complete = gpu.get("kernel_names", 0) <= len(mine)
        exact, rounded = _by_name(h["exact"], int(hr)), _by_name(h["rounded"], int(hr))
        other = set(h["other"].get(hr, []))
        for name in sorted(set(exact) - set(mine)):
            if complete:
                bad.append(f"rank {rank}: HTA lists {name[:80]!r}, ours does not")
        for name in sorted(set(mine) - set(exact)):
            if name not in other:
                bad.append(f"rank {rank}: ours lists {name[:80]!r}, HTA does not (and does not call it OTHER)")
        both = sorted(set(mine) & set(exact))
        raw = h["raw"].get(hr, {})
        dropped = [0]
        for name in both:
            where = f"rank {rank} {name[:60]!r}"
            if exact[name] is None:
                bad.append(f"{where}: HTA's rows cannot be pooled (a zero mean)")
                continue
            e, s = exact[name], mine[name]
            if e["count"] is not None and e["count"] < s["count"]:
                # HTA kept a subset (its launch filter): the file must hold ours, and HTA's figures
                # must be those of a subset.
                dropped[0] += s["count"] - e["count"]
                if raw.get(name) != s["count"]:
                    bad.append(f"{where}: the file holds {raw.get(name)} such events, ours counts {s['count']}")
                if not (e["min"] >= s["min_ns"] - _common.TOL_NS and e["max"] <= s["max_ns"] + _common.TOL_NS
                        and e["sum"] <= s["total_ns"] + _common.TOL_NS * s["count"]):
                    bad.append(f"{where}: HTA's {e['count']} are not a subset of our {s['count']} (min, max, sum)")
                continue
            _common.check_exact(where, e, s, bad)
            if rounded.get(name) is not None:
                _common.check_rounded(where, rounded[name], s, bad)
        skipped = len(set(mine) - set(exact))
        lines.append(f"rank {rank}: {len(both)} kernel names compared (count, sum, min, max, mean, sample std)"
                     + (f"; {skipped} HTA calls OTHER and leaves out" if skipped else "")
                     + (f"; {dropped[0]} GPU events HTA's launch filter dropped (subset rule)" if dropped[0] else ""))
        if both:
            k = max(both, key=lambda n: mine[n]["total_ns"])
            s, e, r = mine[k], exact[k], rounded.get(k) or {}
            lines.append(f"  largest {k[:50]!r}: n {s['count']}, ours min/max/mean/std "
                         f"{s['min_ns'] / 1e3:.3f}/{s['max_ns'] / 1e3:.3f}/{s['mean_ns'] / 1e3:.3f}/"
                         f"{s['std_ns'] / 1e3:.3f} us; HTA unrounded {e['min'] / 1e3:.3f}/{e['max'] / 1e3:.3f}/"
                         f"{e['mean'] / 1e3:.3f}/{e['std'] / 1e3:.3f}; HTA rounded "
                         f"{r.get('min', 0) / 1e3:.0f}/{r.get('max', 0) / 1e3:.0f}/{r.get('mean', 0) / 1e3:.3f}/"
                         f"{r.get('std', 0) / 1e3:.3f}")
    return lines, bad
