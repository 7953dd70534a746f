"""GPU user annotations per name (HTA: hta/analyzers/breakdown_analysis.py,
get_gpu_user_annotation_breakdown; ours: gpu.gpu_annotations, docs/analysis.md "GPU user
annotations").

Both: Kineto's gpu_user_annotation events per name per rank, every one (nested too): count,
sum, min, max, mean, sample std of their durations. HTA is called with num_kernels and
duration_ratio that group nothing into "others". A trace without such events: HTA returns None
(and logs a warning), ours lists none. Named differences, asserted:
- Our list holds the 50 largest names (gpu_annotation_names counts all).
- HTA is run with include_last_profiler_step=True (its default drops the last ProfilerStep).
- Times: equal within _common.TOL_NS against HTA with its ns rounding off; against HTA as users
  run it within the bound _common.check_rounded states.
Of the traces we ship only the H200 torch.profiler one has gpu_user_annotation events (24:
layer_00..07 in 3 steps); the nccl4 ranks have none, which checks the empty case."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

NAME = "gpu_annotations"


def _breakdown(ta):
    df = ta.get_gpu_user_annotation_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10 ** 9)
    return _common.frame_rows(df)


def hta(ta, ranks):
    rounded, exact = _common.analyses(ta)
    return {"rounded": _breakdown(rounded), "exact": _breakdown(exact), "files": _common.hta_files(ta)}


def compare(h, ours):
    lines, bad = [], []
    for rank, d, hr in _common.matched(h, ours, lines):
        gpu = d.get("gpu", {})
        mine = {a["name"]: a for a in gpu.get("gpu_annotations", [])}
        complete = gpu.get("gpu_annotation_names", 0) <= len(mine)
        exact = {r["name"]: r for r in h["exact"] if r["rank"] == int(hr)}
        rounded = {r["name"]: r for r in h["rounded"] if r["rank"] == int(hr)}
        if complete and set(exact) != set(mine):
            bad.append(f"rank {rank}: names HTA {sorted(exact)[:8]} / ours {sorted(mine)[:8]}")
        both = sorted(set(exact) & set(mine))
        for name in both:
            where = f"rank {rank} {name[:60]!r}"
            _common.check_exact(where, exact[name], mine[name], bad)
            if name in rounded:
                _common.check_rounded(where, rounded[name], mine[name], bad)
        if not both:
            lines.append(f"rank {rank}: no gpu_user_annotation events (HTA: none either)" if not exact and not mine
                         else f"rank {rank}: no name in both")
            continue
        lines.append(f"rank {rank}: {len(both)} names compared (count, sum, min, max, mean, sample std)")
        k = max(both, key=lambda n: mine[n]["total_ns"])
        s, e, r = mine[k], exact[k], rounded.get(k, {})
        lines.append(f"  largest {k[:40]!r}: n {s['count']}, ours sum/min/max/std {s['total_ns'] / 1e3:.3f}/"
                     f"{s['min_ns'] / 1e3:.3f}/{s['max_ns'] / 1e3:.3f}/{s['std_ns'] / 1e3:.3f} us; HTA unrounded "
                     f"{e['sum'] / 1e3:.3f}/{e['min'] / 1e3:.3f}/{e['max'] / 1e3:.3f}/{e['std'] / 1e3:.3f}; "
                     f"HTA rounded {r.get('sum', 0) / 1e3:.0f}/{r.get('min', 0) / 1e3:.0f}/"
                     f"{r.get('max', 0) / 1e3:.0f}/{r.get('std', 0) / 1e3:.3f}")
    return lines, bad
