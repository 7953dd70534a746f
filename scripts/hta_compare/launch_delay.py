"""Kernel launch delay (HTA: hta/analyzers/cuda_kernel_analysis.py, get_cuda_kernel_launch_stats;
ours: gpu.launch_delay, docs/analysis.md "Side by side with HTA").

HTA's launch_delay is the kernel's start minus the launch call's END, over launches HTA joins
to a kernel by correlation (its runtime-launch pattern); ours is the kernel's start minus the
call's START, per stream. So the two counts must agree, and per launch ours = HTA's + the
call's duration: on the median over a rank, ours >= HTA's. Both in µs here (HTA's unit)."""

NAME = "launch_delay"


def hta(ta, ranks):
    stats = ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    out = {}
    for r, df in stats.items():
        out[str(int(r))] = {"count": int(len(df)),
                            "median_us": float(df["launch_delay"].median()) if len(df) else None}
    return out


def compare(h, ours):
    lines, bad = [], []
    for r, d in sorted(ours.items()):
        mine = d.get("gpu", {}).get("launch_delay", [])
        n = sum(s["delay"]["count"] for s in mine)
        row = h.get(str(r))
        if row is None:
            bad.append(f"rank {r}: HTA has no launch statistics for this rank")
            continue
        lines.append(f"rank {r}: launches HTA {row['count']} / ours {n}; HTA median {row['median_us']} us "
                     "(from the call's end)")
        if row["count"] != n:
            bad.append(f"rank {r}: HTA counts {row['count']} kernel launches, ours {n}")
    return lines, bad
